"""A document as a sequence of units (paragraphs or sentences) that tile it exactly.

Controlled variants (:mod:`posir.controlled`) move or insert whole units, never
parts of one, and the evidence-pairs builder (:mod:`posir.builders.pairs`) joins
questions whose evidence lies in different units. So a unit is the smallest
piece of text that keeps its meaning on its own, and the
evidence span (PosIR section 3.2: a character span of the positive) must lie
inside one unit to be moved with it. Where the
source joins paragraphs with a known separator (our SQuAD-format builders,
:mod:`posir.builders.squad`, join them with ``"\\n\\n"``), a unit is a
paragraph; otherwise it is a sentence.

Sentences come from `sentencex <https://github.com/wikimedia/sentencex>`_
(Wikimedia; rule-based, about 300 languages, character offsets). Chosen over
pysbd, syntok and blingfire on XQuAD's English, Spanish, Chinese and Arabic
paragraphs (240 each): it tiles every paragraph exactly in all four
languages; pysbd cuts Arabic at commas and colons (2,428 "sentences" where the
others find about 1,200); blingfire's offsets do not tile 37 of the Spanish,
Chinese and Arabic paragraphs; syntok does not split Chinese at all. Its
known misses (a Chinese sentence starting with a digit after ``。``, sentences
inside a quotation) only make a unit longer: two sentences move together,
none is cut.

Tiling: ``text == gaps[0] + units[0] + gaps[1] + units[1] + ... + units[-1] + gaps[-1]``.
Units carry no surrounding whitespace (it belongs to the gaps), so moving
units while leaving every gap in its place keeps the document's characters as
a multiset, its length, and its word boundaries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from posir.languages import iso639_1
from posir.text import Span

PARAGRAPH = "paragraph"
SENTENCE = "sentence"
#: Paragraphs where a document has enough of them, sentences otherwise (decided per document).
AUTO = "auto"
UNIT_KINDS = (PARAGRAPH, SENTENCE, AUTO)


@dataclass(frozen=True)
class Units:
    """A document cut into ``units`` with the ``gaps`` between them (one more gap than units).

    ``gaps[0]`` precedes the first unit and ``gaps[-1]`` follows the last; both are
    usually empty. ``kind`` is :data:`PARAGRAPH` or :data:`SENTENCE`.
    """

    kind: str
    units: tuple[str, ...]
    gaps: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.gaps) != len(self.units) + 1:
            raise ValueError(f"{len(self.units)} units need {len(self.units) + 1} gaps, got {len(self.gaps)}")

    def __len__(self) -> int:
        return len(self.units)

    @property
    def text(self) -> str:
        """The document the units tile."""
        return self.arrange(range(len(self.units)))

    @cached_property
    def starts(self) -> tuple[int, ...]:
        """Character offset of each unit in :attr:`text`."""
        return tuple(self.slot_starts(range(len(self.units))))

    def unit_of(self, span: Span) -> int | None:
        """Index of the unit that wholly holds ``span``; None when it crosses units or runs into a gap."""
        for index, (start, unit) in enumerate(zip(self.starts, self.units)):
            if start <= span.start and span.end <= start + len(unit):
                return index
        return None

    def arrange(self, order: Iterable[int]) -> str:
        """The text with the units in ``order`` (a permutation of their indices) and every gap in its place."""
        pieces = [self.gaps[0]]
        for slot, index in enumerate(order):
            pieces += [self.units[index], self.gaps[slot + 1]]
        return "".join(pieces)

    def slot_starts(self, order: Iterable[int]) -> list[int]:
        """Character offset of each slot's unit in :meth:`arrange` of the same ``order``."""
        starts: list[int] = []
        cursor = len(self.gaps[0])
        for slot, index in enumerate(order):
            starts.append(cursor)
            cursor += len(self.units[index]) + len(self.gaps[slot + 1])
        return starts


def units_from_bounds(text: str, kind: str, bounds: Iterable[tuple[int, int]]) -> Units:
    """Units at the given character ranges (sorted, not overlapping), whitespace trimmed into the gaps.

    A range that is blank once trimmed is no unit: its text joins the gap.
    """
    units: list[str] = []
    gaps: list[str] = []
    cursor = 0
    for start, end in bounds:
        if start < cursor or end > len(text):
            raise ValueError(f"unit range [{start}, {end}) overlaps the previous one or leaves the text")
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start == end:
            continue
        gaps.append(text[cursor:start])
        units.append(text[start:end])
        cursor = end
    gaps.append(text[cursor:])
    return Units(kind, tuple(units), tuple(gaps))


def _separated_ranges(text: str, separator: str) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    start = 0
    while (found := text.find(separator, start)) != -1:
        ranges.append((start, found))
        start = found + len(separator)
    ranges.append((start, len(text)))
    return ranges


def paragraph_units(text: str, separator: str) -> Units:
    """Paragraphs: the pieces between occurrences of ``separator`` (blank pieces join the gap)."""
    if not separator:
        raise ValueError("paragraph units need a non-empty separator")
    return units_from_bounds(text, PARAGRAPH, _separated_ranges(text, separator))


def sentence_rules(language: str) -> str:
    """The code sentencex is given for an ISO 639-3 ``language`` (it is keyed by ISO 639-1 codes)."""
    return iso639_1(language) or language


def sentence_ranges(text: str, language: str) -> list[tuple[int, int]]:
    """Character ranges of the sentences of ``text`` by sentencex's rules for ``language`` (ISO 639-3)."""
    import sentencex

    ranges = []
    for boundary in sentencex.get_sentence_boundaries(sentence_rules(language), text):
        start, end = int(boundary["start_index"]), int(boundary["end_index"])
        # sentencex reports character offsets; a release that switched to UTF-8 byte offsets would cut
        # non-ASCII text in the wrong places without this check.
        if text[start:end] != boundary["text"]:
            raise RuntimeError(
                f"sentencex boundary [{start}, {end}) does not hold its own text; are its offsets "
                f"still character offsets?"
            )
        ranges.append((start, end))
    return ranges


def sentence_units(text: str, language: str, separator: str | None = None) -> Units:
    """Sentences of ``text``; with a paragraph ``separator``, no sentence crosses a paragraph boundary."""
    paragraphs = _separated_ranges(text, separator) if separator else [(0, len(text))]
    bounds = [
        (offset + start, offset + end)
        for offset, stop in paragraphs
        for start, end in sentence_ranges(text[offset:stop], language)
    ]
    return units_from_bounds(text, SENTENCE, bounds)


def split_units(text: str, unit: str, language: str, separator: str | None, min_units: int = 1) -> Units:
    """The document's units of kind ``unit``; :data:`AUTO` takes paragraphs when there are at least ``min_units``.

    Paragraphs need ``separator``; without one, :data:`AUTO` always takes sentences.
    """
    if unit not in UNIT_KINDS:
        raise ValueError(f"unit must be one of {UNIT_KINDS}, got {unit!r}")
    if unit == PARAGRAPH:
        if not separator:
            raise ValueError("paragraph units need the source's paragraph separator")
        return paragraph_units(text, separator)
    if unit == AUTO and separator:
        paragraphs = paragraph_units(text, separator)
        if len(paragraphs) >= min_units:
            return paragraphs
    return sentence_units(text, language, separator)
