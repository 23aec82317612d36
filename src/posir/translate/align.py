"""Paragraph-wise translation units and evidence spans in translated documents.

Documents are translated paragraph by paragraph (split on the benchmark's
separator, a blank line): the structure survives, each unit is short enough
for any backend (an LLM's context, an MT system's sentence handling), a
failure costs one paragraph's call, and the evidence paragraph of every query
is known in the translation. Machine translation does not preserve character
offsets, so inside that paragraph the span is an estimate: the source span's
start and end, as fractions of the source paragraph, are mapped onto the
translated paragraph. Relative positions, bins and buckets (what PosIR's
analysis uses, section 5.1) are the English source's; the mapped span only
feeds ``span_start``/``span_end`` and ``own_relative_position``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from posir.text import join_with_offsets


@dataclass(frozen=True)
class ParagraphSpan:
    """Where a span sits in a paragraph-split document: the paragraph and fractions of it."""

    paragraph: int
    start_fraction: float
    end_fraction: float


def split_paragraphs(text: str, separator: str) -> list[str]:
    """Paragraphs of a document joined with ``separator`` (the inverse of the builders' join)."""
    return text.split(separator) if separator else [text]


def locate(paragraphs: Sequence[str], separator: str, start: int, end: int) -> ParagraphSpan:
    """The paragraph holding ``[start, end)`` and the span's place in it, as fractions of its length.

    A span crossing a separator is clipped to the paragraph holding its start.
    """
    _, offsets = join_with_offsets(paragraphs, separator)
    for index, (offset, paragraph) in enumerate(zip(offsets, paragraphs)):
        if offset <= start < offset + len(paragraph) or (start == offset and not paragraph):
            length = max(len(paragraph), 1)
            stop = min(end, offset + len(paragraph))
            return ParagraphSpan(index, (start - offset) / length, (stop - offset) / length)
    raise ValueError(f"span [{start}, {end}) lies in no paragraph (a separator or past the end)")


def map_span(where: ParagraphSpan, translated: Sequence[str], separator: str) -> tuple[int, int]:
    """The span's estimated ``[start, end)`` in the joined translation: same fractions of the same paragraph.

    The span keeps at least one character and stays inside its paragraph.
    """
    _, offsets = join_with_offsets(translated, separator)
    offset, length = offsets[where.paragraph], len(translated[where.paragraph])
    if length == 0:
        raise ValueError(f"translated paragraph {where.paragraph} is empty")
    start = min(math.floor(where.start_fraction * length), length - 1)
    end = max(min(math.ceil(where.end_fraction * length), length), start + 1)
    return offset + start, offset + end
