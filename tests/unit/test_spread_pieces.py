"""The cells of a spread family and the arrangement of a group's units in each (posir.controlled.pieces)."""

from __future__ import annotations

import pytest

from posir.controlled.pieces import (
    CENTRE,
    DISTANCE_SERIES,
    PIECES_SHARE_A_UNIT,
    POSITION_SERIES,
    START,
    arrange,
    gaps,
    plan_arrangements,
    spread_cells,
)
from posir.controlled.placement import TOO_FEW_UNITS, VariantRefused
from posir.controlled.spec import SPREAD_KEYS, ControlledParams
from posir.text import Span
from posir.text_units import paragraph_units


def document(n: int) -> str:
    """``n`` paragraphs of different lengths, each naming its index."""
    return "\n\n".join(f"Paragraph {i} " + "word " * (5 + 3 * (i % 4)) for i in range(n))


def spans_in(text: str, paragraphs: list[int]) -> list[Span]:
    """The word ``Paragraph <i>`` of each of the given paragraphs: one piece in each."""
    spans = []
    for i in paragraphs:
        start = text.index(f"Paragraph {i} ")
        spans.append(Span(start, start + len(f"Paragraph {i}")))
    return spans


def test_cells_shared_by_two_series_are_one_cell() -> None:
    cells, series = spread_cells(3, 3, (CENTRE, START))
    assert [(c.anchor, c.position, c.distance) for c in cells] == [
        (CENTRE, 0.0, 0.0),
        (CENTRE, 0.5, 0.0),
        (CENTRE, 1.0, 0.0),
        (CENTRE, 0.5, 0.5),
        (CENTRE, 0.5, 1.0),
        (START, 0.0, 0.5),
    ]
    assert series[POSITION_SERIES] == [0, 1, 2]
    # the block at the centre is the centre series' level 0; every series ends with the pieces at the two ends
    assert series[DISTANCE_SERIES[CENTRE]] == [1, 3, 4]
    # the start series begins with the block at the start
    assert series[DISTANCE_SERIES[START]] == [0, 5, 4]
    # an even number of positions has no block at the centre: the centre series brings its own
    cells, series = spread_cells(4, 2)
    assert len(cells) == 6 and series[DISTANCE_SERIES[CENTRE]] == [4, 5]


def test_a_move_family_dumps_no_spread_key_and_a_spread_family_every_one() -> None:
    move = ControlledParams(mode="move").model_dump(mode="json")
    assert not set(SPREAD_KEYS) & set(move)
    spread = ControlledParams(mode="spread", positions=3).model_dump(mode="json")
    assert set(SPREAD_KEYS) <= set(spread)
    keys = ControlledParams(mode="spread", positions=3, distances=3, rounds=2).variant_keys()
    assert [k.slug for k in keys][:6] == ["r0-c0", "r0-c1", "r0-c2", "r0-c3", "r0-c4", "r1-c0"]


def test_gaps_share_the_units_between_the_pieces_evenly() -> None:
    assert gaps(5, 2) == [5] and gaps(5, 3) == [3, 2] and gaps(4, 3) == [2, 2] and gaps(0, 4) == [0, 0, 0]


@pytest.mark.parametrize("k", [2, 3])
def test_every_cell_rearranges_whole_units_and_keeps_the_pieces_text(k: int) -> None:
    text = document(12)
    units = paragraph_units(text, "\n\n")
    pieces = [2, 5, 9][:k]
    spans = spans_in(text, pieces)
    cells, series = spread_cells(3, 4, (CENTRE, START))
    arrangements = plan_arrangements(units, spans, cells, series)
    assert len(arrangements) == len(cells)
    for cell, arrangement in zip(cells, arrangements):
        placed = units.arrange(arrangement.order)
        assert sorted(placed.split("\n\n")) == sorted(text.split("\n\n")) and len(placed) == len(text)
        assert [placed[s.start : s.end] for s in arrangement.spans] == [text[s.start : s.end] for s in spans]
        assert [arrangement.order.index(p) for p in pieces] == sorted(arrangement.order.index(p) for p in pieces)
        others = [u for u in arrangement.order if u not in pieces]
        assert others == sorted(others)  # every other paragraph in its own order
        if cell.anchor == START:
            assert arrangement.before == 0
    levels = [arrangements[i] for i in series[DISTANCE_SERIES[CENTRE]]]
    assert levels[0].between == 0 and levels[0].distance == 0.0  # adjacent: one block
    assert levels[-1].before == 0 and levels[-1].between == 12 - k and levels[-1].distance == 1.0  # the two ends
    assert [a.distance for a in levels] == sorted(a.distance for a in levels)
    assert all(abs(a.position - 0.5) < 0.15 for a in levels)  # the centre held
    block = [arrangements[i] for i in series[POSITION_SERIES]]
    assert [a.between for a in block] == [0, 0, 0] and block[0].before == 0 and block[-1].before == 12 - k
    assert block[0].position < block[1].position < block[2].position


def test_the_distance_is_the_share_of_the_other_text_between_the_first_piece_and_the_last() -> None:
    text = document(6)
    units = paragraph_units(text, "\n\n")
    local = [Span(0, 11), Span(0, 11)]
    arrangement = arrange(units, [0, 3], local, before=1, between=2)
    others = [1, 2, 4, 5]
    between = sum(len(units.units[i]) for i in others[1:3])
    assert arrangement.order == (1, 0, 2, 4, 3, 5)
    assert arrangement.distance == pytest.approx(between / sum(len(units.units[i]) for i in others))


def test_a_group_is_refused_when_its_pieces_cannot_move_apart() -> None:
    text = document(3)
    units = paragraph_units(text, "\n\n")
    cells, series = spread_cells(3, 3)
    with pytest.raises(VariantRefused) as refused:
        plan_arrangements(units, spans_in(text, [0, 2]), cells, series)  # one other paragraph: two levels at most
    assert refused.value.reason == TOO_FEW_UNITS
    start = text.index("word")
    with pytest.raises(VariantRefused) as refused:
        plan_arrangements(units, [Span(0, 5), Span(start, start + 4)], cells, series)
    assert refused.value.reason == PIECES_SHARE_A_UNIT


def test_a_model_reads_the_pieces_in_its_first_window_and_says_whether_one_window_holds_both() -> None:
    from posir.controlled.token_view import pieces_view

    text = "aa bb cc dd ee ff gg hh"  # one token per word

    def offsets(t: str) -> list[tuple[int, int]]:
        return [(i, i + 2) for i in range(0, len(t), 3)]

    first, last = Span(0, 5), Span(18, 23)  # aa bb | gg hh
    view = pieces_view(text, [first, last], offsets, budget=4)
    assert view.seen_shares() == [1.0, 0.0] and not view.shared_window
    assert pieces_view(text, [first, last], offsets, budget=None).shared_window  # it reads everything
    windows = [(0, 11), (9, 23)]
    assert not pieces_view(text, [first, last], offsets, 4, windows).shared_window
    assert pieces_view(text, [Span(9, 11), Span(18, 20)], offsets, 4, windows).shared_window
