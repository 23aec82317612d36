"""A spread family's statistics (posir.metrics.distance) on hand-made per-query tables: cells, series (the one PSI
and the move family's tests, reused), the comparison with the questions asked alone, and the token accounting."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posir.evidence import JOINED, SINGLE
from posir.metrics import distance as d
from posir.metrics.columns import DIFFERENCE, MODEL, N_QUERIES, QID, SETTING, suffixed
from posir.metrics.controlled import PositionMatrix, group_statistics
from posir.metrics.measures.psi import psi
from posir.metrics.params import BootstrapParams
from posir.tables.controlled import distance_markdown

PARAMS = BootstrapParams(resamples=200, seed=13, confidence=0.95, interval="centered")
CELLS = pd.DataFrame(
    {
        d.CELL: [0, 1, 2, 3],
        d.ANCHOR: ["centre"] * 4,
        d.POSITION: [0.0, 0.5, 1.0, 0.5],
        d.DISTANCE: [0.0, 0.0, 0.0, 1.0],
    }
)
SERIES = {"position": ([0, 1, 2], [0.0, 0.5, 1.0]), "distance_centre": ([1, 3], [0.0, 1.0])}
GROUPS = 24


def per_query(model: str = "m", falls_with_distance: bool = True) -> pd.DataFrame:
    """24 groups, each a joined query and two questions alone, at 4 cells; the joined query loses 0.5 at distance."""
    rng = np.random.default_rng(7)
    rows = []
    for g in range(GROUPS):
        base = float(rng.uniform(0.5, 1.0))
        for cell in range(4):
            drop = 0.5 if (falls_with_distance and cell == 3 and g % 2 == 0) else 0.0
            rows.append({QID: f"a{g}+b{g}", d.EVIDENCE_GROUP: f"a{g}+b{g}", d.FORM: JOINED, d.PIECE: "",
                         d.CELL: cell, d.SCORE: base - drop})  # fmt: skip
            for piece, member in enumerate((f"a{g}", f"b{g}")):
                rows.append({QID: member, d.EVIDENCE_GROUP: f"a{g}+b{g}", d.FORM: SINGLE, d.PIECE: piece,
                             d.CELL: cell, d.SCORE: base - 0.25})  # fmt: skip
    frame = pd.DataFrame(rows)
    return frame.assign(**{MODEL: model, SETTING: "eng-eng", d.ACHIEVED_POSITION: 0.5, d.ACHIEVED_DISTANCE: 0.0})


def test_cells_hold_the_mean_per_cell_with_an_interval_around_it() -> None:
    table = d.cell_statistics(per_query(), CELLS, PARAMS)
    assert tuple(table.columns) == d.CELL_COLUMNS
    joined = table[table[d.FORM] == JOINED].set_index(d.CELL)
    frame = per_query()
    expected = frame[frame[d.FORM] == JOINED].groupby(d.CELL)[d.SCORE].mean()
    assert joined[d.SCORE].to_numpy() == pytest.approx(expected.to_numpy())
    assert (joined[N_QUERIES] == GROUPS).all()
    low, high = joined[suffixed(d.SCORE, "ci_low")], joined[suffixed(d.SCORE, "ci_high")]
    assert (low <= joined[d.SCORE]).all() and (joined[d.SCORE] <= high).all() and (low < high).all()
    assert joined.loc[3, d.DISTANCE] == 1.0 and joined.loc[2, d.POSITION] == 1.0
    # two models of a setting resample the same queries: the same scores give the same interval
    both = d.cell_statistics(pd.concat([per_query("a"), per_query("b")]), CELLS, PARAMS)
    a, b = (both[(both[MODEL] == m) & (both[d.FORM] == JOINED)] for m in ("a", "b"))
    assert a[suffixed(d.SCORE, "ci_low")].tolist() == b[suffixed(d.SCORE, "ci_low")].tolist()


def test_a_series_is_the_move_family_test_over_its_levels_and_its_psi_is_the_one_psi() -> None:
    tests, levels = d.series_statistics(per_query(), SERIES, PARAMS)
    assert tuple(tests.columns) == d.SERIES_TEST_COLUMNS and tuple(levels.columns) == d.LEVEL_COLUMNS
    row = tests[(tests[d.FORM] == JOINED) & (tests[d.SERIES] == "distance_centre")].iloc[0]
    frame = per_query()
    means = frame[frame[d.FORM] == JOINED].groupby(d.CELL)[d.SCORE].mean()
    assert row["psi"] == pytest.approx(float(psi(means.loc[[1, 3]].to_numpy())))  # the DSI
    # the same numbers as the move family's statistics over these two levels
    wide = frame[frame[d.FORM] == JOINED].pivot(index=QID, columns=d.CELL, values=d.SCORE).sort_index()
    matrix = PositionMatrix(list(wide.index), [0, 1], wide[[1, 3]].to_numpy(), 0)
    label = "|".join(f"{k}={v}" for k, v in {SETTING: "eng-eng", d.FORM: JOINED, d.SERIES: "distance_centre"}.items())  # noqa: E501
    reference, _ = group_statistics(matrix, PARAMS, label, [0.0, 1.0])
    for column in ("psi_ci_low", "psi_ci_high", "friedman_p"):  # the same resamples (summed in another order)
        assert row[column] == pytest.approx(reference[column], rel=1e-12, nan_ok=True)
    level = levels[(levels[d.FORM] == JOINED) & (levels[d.SERIES] == "distance_centre")]
    assert level[d.CELL].tolist() == [1, 3] and level[d.LEVEL_TARGET].tolist() == [0.0, 1.0]
    assert level["wilcoxon_p_holm"].iloc[1] < 0.01  # half the queries lose 0.5 apart
    flat = tests[(tests[d.FORM] == JOINED) & (tests[d.SERIES] == "position")].iloc[0]
    assert flat["psi"] == 0 and flat["note"] == "no_variation" and np.isnan(flat[d.PAGE_P_FALLING])
    # three levels: Page's test runs, falling one-sided
    spread = {"distance_centre": ([0, 1, 3], [0.0, 0.5, 1.0])}
    tests, _ = d.series_statistics(per_query(), spread, PARAMS)
    joined = tests[tests[d.FORM] == JOINED].iloc[0]
    assert joined[d.PAGE_P_FALLING] < 0.05 < joined[d.PAGE_P_RISING]


def test_the_joined_query_is_compared_with_its_questions_alone_in_each_cell() -> None:
    table = d.single_comparison(per_query(), PARAMS)
    assert tuple(table.columns) == d.SINGLE_COLUMNS
    assert table[d.FORM].unique().tolist() == [JOINED] and table[d.CELL].tolist() == [0, 1, 2, 3]
    assert table[DIFFERENCE].iloc[0] == pytest.approx(0.25)
    assert table[DIFFERENCE].iloc[3] == pytest.approx(0.0)  # half lose 0.5 at distance: +0.25 - 0.25
    assert (table[N_QUERIES] == GROUPS).all()
    assert table["wilcoxon_p_holm"].iloc[0] < 0.01


def test_token_accounting_counts_each_piece_and_the_shared_windows() -> None:
    views = pd.DataFrame(
        [
            {MODEL: "m", d.EVIDENCE_GROUP: g, d.CELL: c, d.PIECE: p, d.FIRST_TOKEN: 0, d.LAST_TOKEN: 1,
             d.DOCUMENT_TOKENS: 900, d.WINDOW_TOKENS: 254, d.TOKENS_SEEN: 0,
             d.SEEN_SHARE: 1.0 if (p == 0 or c == 0) else (0.5 if g == "g1" else 0.0), d.SHARED_WINDOW: c == 0}
            for g in ("g1", "g2") for c in (0, 1) for p in (0, 1)
        ]
    )  # fmt: skip
    tokens = d.token_accounting(views).set_index(d.CELL)
    assert tokens.loc[0, d.piece_seen(1)] == 1.0 and tokens.loc[1, d.piece_seen(1)] == 0.25
    assert tokens.loc[1, d.ALL_PIECES_SEEN] == 0.0 and tokens.loc[0, d.ALL_PIECES_SEEN] == 1.0
    assert tokens.loc[0, d.SHARED_WINDOW] == 1.0 and tokens.loc[1, d.SHARED_WINDOW] == 0.0
    cells = d.with_tokens(d.cell_statistics(per_query(), CELLS, PARAMS), d.token_accounting(views))
    counted = cells[cells[d.CELL] <= 1]  # the views above count cells 0 and 1
    assert counted[d.piece_seen(0)].notna().all() and counted[d.WINDOW_TOKENS].eq(254).all()
    assert cells.loc[cells[d.CELL] > 1, d.piece_seen(0)].isna().all()
    tests, _ = d.series_statistics(per_query(), SERIES, PARAMS)
    text = distance_markdown(cells, tests, d.single_comparison(per_query(), PARAMS), "family")
    assert "100% / 25%" in text and "PSI over levels (DSI)" in text and "questions alone" in text
