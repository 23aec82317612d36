"""What a multi-vector or sparse entry gives per text: a row of token vectors or a sparse vector, each token or term
with the character span in the text it comes from (docs/late-interaction.md has the on-disk format).

A dense entry gives one vector per text; an entry with ``output: multi-vector`` gives a vector per token
(:class:`TokenVectors`, scored by MaxSim), one with ``output: sparse`` a weight per vocabulary term
(:class:`TermWeights`, scored by the dot product). The score-origin analysis reads where each sits in the text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
