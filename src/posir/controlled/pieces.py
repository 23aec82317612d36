"""Placing k pieces of evidence: the cells of a spread family and where each group's units go in each.

A query resting on k pieces (:mod:`posir.evidence`) has them in k units (paragraphs) of its positive. The spread
mode of a controlled family rearranges those units, every other unit keeping its order (and every gap its place,
:meth:`posir.text_units.Units.arrange`), so that from cell to cell only where the pieces sit changes. With
``n`` other units, an arrangement is fixed by two numbers: ``before``, the other units in front of the first piece,
and ``between``, the other units between the first piece and the last, shared as evenly as whole units allow by the
k - 1 gaps (earlier gaps take the extra unit)::

    others[:before] + piece 1 + others[before:before + g1] + piece 2 + ... + piece k + others[before + between:]

Two measures of an arrangement, both in characters of the arranged text:

* **position**: the relative position (PosIR section 4.1) of the pieces' envelope, from the first evidence span's
  start to the last one's end: the centre of the evidence;
* **distance**: the share of the other units' characters that lie between the first piece and the last, 0 when the
  pieces are adjacent (one block) and 1 when they sit at the two ends of the document (nothing before the first,
  nothing after the last).

The cells follow LongPiBench (Tian et al., ACL Findings 2025, section 3): its *absolute position* setting moves the
relevant pieces as one block through the context, its *relative position* setting keeps the block's middle fixed and
spreads the pieces from adjacent to evenly over the whole context in equal steps. Here, with ``positions`` = P and
``distances`` = L:

* **position series** (the block moved): distance 0, target position ``p_i = i / (P - 1)``, i = 0..P-1;
* **centre series**: the pieces' centre at ``centre`` (0.5), target distance ``d_j = j / (L - 1)``, j = 0..L-1, so
  that the other text between consecutive pieces is ``d_j / (k - 1)`` of the document's other text: level 0 is the
  block, level L-1 the pieces at the two ends with the rest evenly between them;
* **start series** (``anchors: [centre, start]``): the first piece at the start, the same distance levels.

A cell two series share is one cell (the block at the centre is the centre series' level 0; the start series' level
0 is the block at position 0; every series' last level is the pieces at the two ends), so each cell is one corpus.

Per cell: for each number of other units between the pieces, the arrangement whose position is nearest the target
(a start cell: ``before`` = 0); of these, the one whose distance is nearest the target level (then the position).
So level 0 is exactly adjacent, the last level exactly the two ends, and the levels between keep the centre. Along
each series the arrangements must differ and move the right way (``before`` rising along the position series,
``between`` along a distance series), or the group has too few units for the family (:data:`TOO_FEW_UNITS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from posir.controlled.placement import TOO_FEW_UNITS, VariantRefused, target_positions
from posir.metrics.positions import relative_position
from posir.text import Span
from posir.text_units import Units

CENTRE, START = "centre", "start"
ANCHORS = (CENTRE, START)
#: The series of a spread family: the block moved, and the distance varied about each anchor.
POSITION_SERIES = "position"
DISTANCE_SERIES = {CENTRE: "distance_centre", START: "distance_start"}
#: Drop reasons of spread planning.
PIECES_SHARE_A_UNIT = "pieces_share_a_unit"
PIECE_CROSSES_UNITS = "piece_crosses_units"


@dataclass(frozen=True)
class Cell:
    """One cell of a spread family: the anchor, its target position (the pieces' centre; the document's start for a
    start cell) and the target distance (share of the other text between the first piece and the last)."""

    index: int
    anchor: str
    position: float
    distance: float


def spread_cells(
    positions: int, distances: int, anchors: Sequence[str] = (CENTRE,), centre: float = 0.5
) -> tuple[list[Cell], dict[str, list[int]]]:
    """The family's cells and each series' cells in level order (module docstring), shared cells counted once."""
    keys: list[tuple[str, float, float]] = []
    series: dict[str, list[int]] = {}

    def cell(anchor: str, position: float, distance: float) -> int:
        if distance == 1.0:
            anchor, position = CENTRE, centre  # the pieces at the two ends, whatever the anchor
        elif anchor == START and distance == 0.0:
            anchor = CENTRE  # the block at the start
        key = (anchor, position, distance)
        if key not in keys:
            keys.append(key)
        return keys.index(key)

    series[POSITION_SERIES] = [cell(CENTRE, p, 0.0) for p in target_positions(positions)]
    levels = target_positions(distances)
    for anchor in anchors:
        series[DISTANCE_SERIES[anchor]] = [cell(anchor, centre if anchor == CENTRE else 0.0, d) for d in levels]
    return [Cell(i, *key) for i, key in enumerate(keys)], series


@dataclass(frozen=True)
class Arrangement:
    """Where a group's units go in one cell: the unit order, the pieces' spans in the arranged text and the achieved
    measures."""

    cell: int
    before: int
    between: int
    order: tuple[int, ...]
    spans: tuple[Span, ...]
    position: float
    distance: float

    @property
    def units_moved(self) -> int:
        """Units not in their own place (0: the document as it was)."""
        return sum(1 for slot, unit in enumerate(self.order) if slot != unit)


def gaps(between: int, k: int) -> list[int]:
    """Other units in each of the k - 1 gaps, as even as whole units allow, earlier gaps first."""
    return [between // (k - 1) + (1 if i < between % (k - 1) else 0) for i in range(k - 1)]


def arrange(
    units: Units, piece_units: Sequence[int], local: Sequence[Span], before: int, between: int, cell: int = -1
) -> Arrangement:
    """The arrangement with ``before`` other units in front of the first piece and ``between`` among the pieces.

    ``piece_units`` are the units holding the pieces (in document order), ``local`` each piece's span within its
    unit."""
    pieces = list(piece_units)
    others = [i for i in range(len(units)) if i not in set(pieces)]
    order = list(others[:before])
    cursor = before
    for index, unit in enumerate(pieces):
        order.append(unit)
        if index < len(pieces) - 1:
            step = gaps(between, len(pieces))[index]
            order += others[cursor : cursor + step]
            cursor += step
    order += others[cursor:]
    starts = dict(zip(order, units.slot_starts(order)))
    spans = tuple(span.shifted(starts[unit]) for unit, span in zip(pieces, local))
    length = len(units.text)
    other_chars = sum(len(units.units[i]) for i in others)
    between_chars = sum(len(units.units[i]) for i in others[before : before + between])
    return Arrangement(
        cell,
        before,
        between,
        tuple(order),
        spans,
        relative_position(spans[0].start, spans[-1].end, length),
        between_chars / other_chars if other_chars else 0.0,
    )


def piece_units(units: Units, spans: Sequence[Span]) -> tuple[list[int], list[Span]]:
    """The unit of each piece and the piece's span within it; raises :class:`VariantRefused` when a piece crosses
    units or two share one (they could not move apart)."""
    found, local = [], []
    for span in spans:
        unit = units.unit_of(span)
        if unit is None:
            raise VariantRefused(PIECE_CROSSES_UNITS, f"span [{span.start}, {span.end}) is not inside one unit")
        found.append(unit)
        local.append(Span(span.start - units.starts[unit], span.end - units.starts[unit]))
    if len(set(found)) < len(found):
        raise VariantRefused(PIECES_SHARE_A_UNIT, f"pieces in units {found}: each piece needs a unit of its own")
    return found, local


def plan_arrangements(
    units: Units, spans: Sequence[Span], cells: Sequence[Cell], series: dict[str, list[int]]
) -> list[Arrangement]:
    """One arrangement per cell (module docstring); raises :class:`VariantRefused` when a series cannot be laid out
    with distinct arrangements moving the right way."""
    pieces, local = piece_units(units, spans)
    n = len(units) - len(pieces)
    if n < 1:
        raise VariantRefused(TOO_FEW_UNITS, f"{len(units)} units hold {len(pieces)} pieces and nothing else")
    # per count of other units between the pieces, every arrangement (how many others come first)
    by_between = [[arrange(units, pieces, local, before, between) for before in range(n + 1 - between)]
                  for between in range(n + 1)]  # fmt: skip
    chosen: list[Arrangement] = []
    for cell in cells:
        if cell.anchor == START:
            options = [arrangements[0] for arrangements in by_between]
        else:  # the best-centred arrangement of each spread, so the distance levels keep the centre
            options = [min(a, key=lambda a: (abs(a.position - cell.position), a.before)) for a in by_between]
        best = min(options, key=lambda a: (abs(a.distance - cell.distance), abs(a.position - cell.position), a.between))
        chosen.append(Arrangement(cell.index, *[getattr(best, f) for f in _FIELDS]))
    for name, members in series.items():
        attribute = "before" if name == POSITION_SERIES else "between"
        values = [getattr(chosen[i], attribute) for i in members]
        if any(b <= a for a, b in zip(values, values[1:])):
            raise VariantRefused(
                TOO_FEW_UNITS,
                f"{len(units)} {units.kind} units give the {name} series {attribute} = {values}, not "
                f"{len(members)} distinct rising levels",
            )
    return chosen


_FIELDS = ("before", "between", "order", "spans", "position", "distance")
