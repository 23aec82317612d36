"""Loading a model entry's encoder by the one table of model kinds, and what every encoder shares.

:func:`load_encoder` builds the encoder of any entry that encodes (dense, multi-vector or sparse) from its row in
:data:`posir.models.declarations.backends.BACKENDS`: the implementation of its backend and output, imported only then,
so reading the config needs no backend's library. A new retriever on an existing backend is only a ``config.yaml``
entry; a new backend is a row there and a module under :mod:`posir.models.backends`.

Besides: what the encode step needs of an encoder (:class:`DenseEncoder`, :class:`WindowingEncoder`,
:class:`RowEncoder`), texts encoded in groups of one input length (:func:`encode_by_length`), the window size of a
chunked entry (:func:`posir.windows.window_size`), and the entries one encoder pass reads together: BGE-M3's outputs,
an unpooled token-vector entry and its pooled reading (:func:`reads_one_pass`, :func:`one_pass_twins`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from posir.models.declarations.backends import KINDS, M3_MODEL_CLASS, Implementation
from posir.models.declarations.outputs import DENSE, MULTI_VECTOR, SPARSE
from posir.models.declarations.spec import ModelSpec
from posir.models.rows import Row
from posir.models.weights import kept
from posir.models.weights.device import require_device


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


class RowEncoder(Protocol):
    """What the encoding service needs from a multi-vector or sparse encoder (the windowing of a dense one too).

    An encoder whose one pass gives several outputs (a backend with ``one_pass``; an unpooled entry's, its rows and
    the pooled vectors) also has ``encode_outputs(texts, role) -> {output: rows or vectors}``; the service caches
    every output it returns where that output's entry reads it (:func:`one_pass_twins`).
    """

    def encode_rows(
        self, texts: Sequence[str], role: str, on_batch: Callable[[int], None] | None = None
    ) -> list[Row]: ...

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]: ...

    def window_budget(self, role: str) -> int | None: ...

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]: ...


def reads_one_pass(spec: ModelSpec) -> bool:
    """The entry is read by a pass that gives every output (BGE-M3's): a multi-vector or sparse entry of a one-pass
    backend, or a dense one that names BGE-M3's class (``params.model_class: encoder-only-m3``)."""
    if not spec.capabilities.one_pass:
        return False
    return spec.output != DENSE or spec.params.get("model_class") == M3_MODEL_CLASS


def implementation_of(spec: ModelSpec) -> Implementation:
    """The row of the table that gives the entry's output (a dense entry that BGE-M3's pass reads: the pass's)."""
    output = MULTI_VECTOR if spec.output == DENSE and reads_one_pass(spec) else spec.produces
    try:
        return spec.capabilities.outputs[output]
    except KeyError:
        known = sorted(f"{backend}/{output}" for backend, output in KINDS)
        raise ValueError(
            f"model '{spec.name}': backend '{spec.backend}' has no {output} implementation; known: {known}"
        ) from None


def load_encoder(spec: ModelSpec, threads: int | None = None, exported: Path | None = None) -> Any:
    """The encoder of an entry that encodes (dense, multi-vector or sparse); ``threads`` caps CPU threads where the
    backend allows it; ``exported``: the graph the ``export_model`` rule built for ``runtime: onnx | openvino``."""
    if not spec.encodes:
        raise ValueError(
            f"model '{spec.name}': backend '{spec.backend}' ({spec.produces}) ranks texts itself and has no encoder"
        )
    if exported is not None and spec.runtime not in ("onnx", "openvino"):
        # ModelSpec admits runtime onnx | openvino on sentence-transformers entries only, so this also pins the backend
        raise ValueError(
            f"model '{spec.name}': the exported graph {exported} runs entries with runtime: onnx | openvino; "
            f"this entry runs {spec.runtime or 'torch'} (backend '{spec.backend}'): pass no graph"
        )
    require_device(spec.device, f"models.{spec.name}")
    started, reused_before = time.perf_counter(), kept.REUSED[0]
    encoder = implementation_of(spec).load()
    loaded = encoder(spec, threads) if exported is None else encoder(spec, threads, exported)
    # "loaded model" lines are counted in a run's logs (docs/performance.md: how often a run loads a model)
    how = "ready, its weights kept from an earlier job," if kept.REUSED[0] > reused_before else "loaded model"
    logging.getLogger("posir.models").info(
        "%s '%s' (%s, %s) in %.1f s", how, spec.name, spec.backend, spec.output, time.perf_counter() - started
    )
    return loaded


#: Encoders kept loaded between jobs where this process keeps models (posir.models.weights.kept), by entry.
_KEPT: OrderedDict[tuple[Any, ...], Any] = OrderedDict()


def keep_loaded(count: int | None) -> None:
    """Keep up to ``count`` encoders (and sets of weights) loaded for the next jobs of this process, the least
    recently used dropped first; None gives back the default (a warm worker keeps some, a job's own process none)."""
    kept.keep(count)
    while len(_KEPT) > kept.kept_count():
        _KEPT.popitem(last=False)


def loaded_encoder(spec: ModelSpec, threads: int | None = None, exported: Path | None = None) -> Any:
    """:func:`load_encoder`'s encoder, taken from those kept where this process keeps them: the same entry, threads
    and graph, and weights whose files have not changed since (a conversion or export run again rewrites them)."""
    if kept.kept_count() <= 0:
        return load_encoder(spec, threads, exported)
    key = (spec.model_dump_json(), threads, kept.files_signature(exported), kept.files_signature(_weights_folder(spec)))
    if key in _KEPT:
        _KEPT.move_to_end(key)
        return _KEPT[key]
    encoder = load_encoder(spec, threads, exported)
    _KEPT[key] = encoder
    while len(_KEPT) > kept.kept_count():
        _KEPT.popitem(last=False)
    return encoder


def _weights_folder(spec: ModelSpec) -> Path | None:
    with contextlib.suppress(Exception):  # an entry without local files (a package's, a Hub name) keys on its name
        path = Path(spec.resolve_model_path())
        return path if path.exists() else None
    return None


def one_pass_twins(spec: ModelSpec) -> dict[str, ModelSpec]:
    """The entries, by output, whose texts one pass of ``spec``'s encoder also encodes (the same keys, another
    output): BGE-M3's outputs, and the pooled reading of an unpooled token-vector entry; empty otherwise.

    * BGE-M3's pass reads ``spec``: its other outputs; a chunked entry has no dense twin (a dense flagembedding
      entry reads texts whole).
    * ``spec`` reads a dense checkpoint's own token vectors (``token_vectors: unpooled``) of texts read whole: the
      dense reading of the same weights (:func:`posir.models.declarations.readings.pooled_twin`), whose vector the
      checkpoint's pooling makes of the very token embeddings of that pass. Its identity is that of every dense
      entry reading the weights alike, so such an entry finds its texts' vectors cached once the token job ran.
    """
    from posir.models.declarations.readings import pooled_twin

    twin = pooled_twin(spec)
    if twin is not None:
        return {DENSE: twin}
    if not reads_one_pass(spec):
        return {}
    rows_params = {key: value for key, value in spec.params.items() if key != "model_class"}
    twins = {}
    for output in (DENSE, MULTI_VECTOR, SPARSE):
        if output == spec.output or (output == DENSE and spec.is_chunked):
            continue
        params = {**rows_params, "model_class": M3_MODEL_CLASS} if output == DENSE else rows_params
        twins[output] = spec.model_copy(update={"output": output, "token_vectors": None, "params": params})
    return twins
