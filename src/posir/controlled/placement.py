"""Placing the evidence unit at target relative positions (move mode and insert mode).

Relative position is PosIR's (section 4.1): the evidence span's midpoint over
the document's length in characters. Targets are evenly spaced from the start
(0) to the end (1) of the document. The evidence unit can only sit between
units, so each target gets the *slot* whose achieved position is closest,
with distinct slots in increasing order (:func:`assign_slots`): every position
of a query is a different document, and achieved positions rise with targets.

* **move**: the positive keeps its units; the evidence unit leaves its place and
  the other units close up in their order. Gaps stay where they are, so the
  document's length and characters do not change.
* **insert**: a haystack of filler units (:mod:`posir.controlled.filler`) joined by
  one separator receives the evidence unit, the needle, in one of its slots.

Both are the same operation on a :class:`posir.text_units.Units`: the
evidence unit is taken out and put back into another slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from posir.metrics.positions import relative_position
from posir.text import Span
from posir.text_units import Units

#: Drop reasons (the card and drops.tsv name them).
EVIDENCE_CROSSES_UNITS = "evidence_crosses_units"
TOO_FEW_UNITS = "too_few_units"


class VariantRefused(ValueError):
    """A query has no variant at every target (too few units, no filler...); ``reason`` is its drop reason."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Placement:
    """Where the evidence unit of one query goes for one target (the text is made by :func:`placed_text`).

    ``slot`` is the evidence unit's index among the document's units,
    ``units_moved`` how many units change place against the document's own
    order (the evidence unit and the units it passes; 0 when it stays; None in
    insert mode, which has no own order), ``span`` the evidence span in the
    placed text, and ``relative_position`` the achieved relative position of its midpoint.
    """

    position_index: int
    target: float
    slot: int
    units_moved: int | None
    span: Span
    relative_position: float


def target_positions(count: int) -> list[float]:
    """``count`` relative positions evenly spaced from 0 (the start) to 1 (the end)."""
    if count < 2:
        raise ValueError(f"controlled positions need at least 2 targets (the start and the end), got {count}")
    return [index / (count - 1) for index in range(count)]


def assign_slots(achievable: Sequence[float], targets: Sequence[float]) -> list[int] | None:
    """Strictly increasing slots, one per target, minimising the summed distance |achieved - target|.

    ``achievable[j]`` is the position reached in slot ``j`` (increasing in ``j``).
    Dynamic programming over (target, slot): O(targets x slots). Ties go to the
    earlier slot. None when there are fewer slots than targets.
    """
    n_slots, n_targets = len(achievable), len(targets)
    if n_slots < n_targets:
        return None
    infinity = float("inf")
    # cost[j]: best total for targets[: k + 1] with target k in slot j; choice[k][j]: slot of target k - 1
    cost = [abs(a - targets[0]) for a in achievable]
    choices: list[list[int]] = []
    for k in range(1, n_targets):
        best_before, best_slot = infinity, -1
        new_cost = [infinity] * n_slots
        choice = [-1] * n_slots
        for j in range(n_slots):
            if j >= 1 and cost[j - 1] < best_before:
                best_before, best_slot = cost[j - 1], j - 1
            if best_slot >= 0:
                new_cost[j] = best_before + abs(achievable[j] - targets[k])
                choice[j] = best_slot
        cost = new_cost
        choices.append(choice)
    slot = min(range(n_slots), key=lambda j: (cost[j], j))
    slots = [slot]
    for choice in reversed(choices):
        slot = choice[slot]
        slots.append(slot)
    return slots[::-1]


def plan_placements(
    units: Units, evidence_index: int, span: Span, targets: Sequence[float], natural: bool = True
) -> list[Placement]:
    """Where unit ``evidence_index`` (holding ``span``) goes for each target: the slot nearest to it.

    The other units keep their order, every gap keeps its place. ``natural``:
    the units' given order is the document's own (move mode), so
    ``units_moved`` is counted against it. Raises :class:`VariantRefused`
    (:data:`TOO_FEW_UNITS`) when there are fewer slots than targets.
    """
    others = [i for i in range(len(units)) if i != evidence_index]
    local = Span(span.start - units.starts[evidence_index], span.end - units.starts[evidence_index])
    if not 0 <= local.start < local.end <= len(units.units[evidence_index]):
        raise ValueError(f"span {span} does not lie in unit {evidence_index}")
    length = len(units.text)
    # In slot j the evidence unit follows others[:j], each with the gap after its own slot.
    starts = [len(units.gaps[0])]
    for slot, other in enumerate(others):
        starts.append(starts[-1] + len(units.units[other]) + len(units.gaps[slot + 1]))
    achievable = [relative_position(s + local.start, s + local.end, length) for s in starts]
    slots = assign_slots(achievable, targets)
    if slots is None:
        raise VariantRefused(
            TOO_FEW_UNITS, f"{len(units)} {units.kind} units give {len(units)} slots for {len(targets)} positions"
        )
    return [
        Placement(
            index,
            target,
            slot,
            (abs(slot - evidence_index) + 1 if slot != evidence_index else 0) if natural else None,
            local.shifted(starts[slot]),
            achievable[slot],
        )
        for index, (target, slot) in enumerate(zip(targets, slots))
    ]


def placed_text(units: Units, evidence_index: int, slot: int) -> str:
    """The text with unit ``evidence_index`` in ``slot``, the other units in their order, the gaps in place."""
    others = [i for i in range(len(units)) if i != evidence_index]
    return units.arrange(others[:slot] + [evidence_index] + others[slot:])


def evidence_unit(units: Units, span: Span) -> int:
    """Index of the unit holding ``span``; raises :class:`VariantRefused` when it crosses units."""
    index = units.unit_of(span)
    if index is None:
        raise VariantRefused(
            EVIDENCE_CROSSES_UNITS,
            f"span [{span.start}, {span.end}) is not inside one of the {len(units)} {units.kind} units",
        )
    return index


def haystack(filler: Sequence[str], needle: str, separator: str, kind: str) -> Units:
    """Filler units joined by ``separator`` with the needle appended as the last unit (insert mode)."""
    pieces = (*filler, needle)
    return Units(kind, tuple(pieces), ("", *([separator] * len(filler)), ""))
