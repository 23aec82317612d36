"""What a multi-vector or sparse entry gives per text, and the registry of the encoders that give it.

A dense entry gives one vector per text (:mod:`posir.models.registry`); an entry with ``output: multi-vector`` gives
a vector per token (:class:`TokenVectors`, scored by MaxSim), one with ``output: sparse`` a weight per vocabulary
term (:class:`TermWeights`, scored by the dot product). Both keep, per token or term, where it sits in the text
(its character span), which the score-origin analysis reads (docs/late-interaction.md has the on-disk format).

:func:`load_output_encoder` builds the encoder of any entry by its output; :func:`implementation_modules` names our
modules whose code shapes its vectors (they key the cache: :func:`posir.embedding_cache.encoding_identity`). The
modules of a dense entry are keyed as they always were, by the backend's own ``implementation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from posir.models.spec import DENSE, MULTI_VECTOR, SPARSE, ModelSpec

#: One record per stored token vector: its input id, its index in the model's input sequence (specials and prompt
#: counted) and its character span ``[start, end)`` in the text (-1, -1: not text, e.g. [CLS], a marker, [MASK]).
TOKEN_RECORD = np.dtype([("token_id", "<i4"), ("position", "<i4"), ("start", "<i4"), ("end", "<i4")])
#: One record per non-zero term of a sparse vector: the vocabulary id, its weight, and the input position and
#: character span of the token whose activation the max pooling took.
TERM_RECORD = np.dtype([("term", "<i4"), ("weight", "<f4"), ("position", "<i4"), ("start", "<i4"), ("end", "<i4")])
#: Token vectors are kept in half precision (docs/late-interaction.md, "float16": the effect on the numbers).
TOKEN_VECTOR_DTYPE = np.float16
NOT_TEXT = -1


@dataclass(frozen=True)
class TokenVectors:
    """A text's scored token vectors (float16, one row per token) and their records (:data:`TOKEN_RECORD`)."""

    vectors: np.ndarray
    tokens: np.ndarray
    input_tokens: int

    def shifted(self, offset: int) -> TokenVectors:
        """The same tokens with their spans moved by ``offset`` characters (a window's tokens in its document)."""
        return TokenVectors(self.vectors, _shift(self.tokens, offset), self.input_tokens)


@dataclass(frozen=True)
class TermWeights:
    """A text's sparse vector: its non-zero terms, ascending, as :data:`TERM_RECORD` records."""

    terms: np.ndarray
    input_tokens: int

    def shifted(self, offset: int) -> TermWeights:
        return TermWeights(_shift(self.terms, offset), self.input_tokens)


Row = TokenVectors | TermWeights


def _shift(records: np.ndarray, offset: int) -> np.ndarray:
    if offset == 0:
        return records
    moved = records.copy()
    text = moved["start"] != NOT_TEXT
    moved["start"][text] += offset
    moved["end"][text] += offset
    return moved


def text_spans(offsets: np.ndarray, prompt_length: int) -> np.ndarray:
    """Character spans in the text of tokens whose offsets are in ``prompt + text``: (n, 2) int32, -1 for a token
    that is not text (a special token, the prompt, a marker, an expansion token: an empty offset or one that ends
    within the prompt). A token that starts in the prompt and ends in the text starts at the text's start."""
    offsets = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    start, end = offsets[:, 0], offsets[:, 1]
    text = (end > start) & (end > prompt_length)
    spans = np.full((len(offsets), 2), NOT_TEXT, dtype=np.int32)
    spans[text, 0] = np.maximum(start[text], prompt_length) - prompt_length
    spans[text, 1] = end[text] - prompt_length
    return spans


class RowEncoder(Protocol):
    """What the encoding service needs from a multi-vector or sparse encoder (the windowing of a dense one too)."""

    def encode_rows(self, texts: Sequence[str], role: str) -> list[Row]: ...

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]: ...

    def window_budget(self, role: str) -> int | None: ...

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]: ...


#: (backend, output) -> our modules whose code shapes the entry's vectors, the first holding its encoder class
IMPLEMENTATIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("sentence-transformers", MULTI_VECTOR): ("posir.models.multivector", "posir.models.token_model"),
    ("sentence-transformers", SPARSE): ("posir.models.sparse", "posir.models.token_model"),
}


def implementation_modules(spec: ModelSpec) -> tuple[str, ...]:
    """The modules that key a multi-vector or sparse entry's cache (empty for a dense entry)."""
    if spec.output == DENSE:
        return ()
    try:
        return IMPLEMENTATIONS[(spec.backend, spec.output)]
    except KeyError:
        raise ValueError(
            f"model '{spec.name}': backend '{spec.backend}' has no {spec.output} encoder; "
            f"known: {sorted(IMPLEMENTATIONS)}"
        ) from None


def load_output_encoder(spec: ModelSpec, threads: int | None = None, exported: Path | None = None) -> Any:
    """The encoder of any encoding entry: a dense one (:func:`posir.models.registry.load_encoder`), or the
    multi-vector or sparse encoder of its output."""
    from posir.models.device import require_device

    if spec.output == DENSE:
        from posir.models.registry import load_encoder

        return load_encoder(spec, threads, exported)
    implementation_modules(spec)
    require_device(spec.device, f"models.{spec.name}")
    if spec.output == MULTI_VECTOR:
        from posir.models.multivector import load_multi_vector_encoder

        return load_multi_vector_encoder(spec, threads)
    from posir.models.sparse import SparseTextEncoder

    return SparseTextEncoder(spec, threads)
