"""A benchmark's position-group table, laid out as Zeng et al.'s Table 1: a model per row, nDCG@10 x 100 per
position group and the PSI over the groups, our runs first and the published rows of the same groups below, marked
as published and naming their source.

The long form (``position_groups.csv``, :data:`posir.results.schemas.POSITION_GROUPS_COLUMNS`) holds every group's
query count and interval and each run's PSI interval, trend and left-out queries; published rows fill what the
paper printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from posir.metrics.columns import CI_HIGH, CI_LOW, GROUP, MODEL, N_QUERIES, SETTING, suffixed
from posir.metrics.group_scores import (
    GROUP_ORDER,
    GROUPS_USED,
    QUERIES_LEFT_OUT,
    TREND_DIRECTION,
    TREND_P,
    TREND_TAU,
    GroupScores,
)
from posir.published import PublishedGroups
from posir.results.schemas import NDCG, OWN_RUNS, POSITION_GROUPS_COLUMNS, PSI, SOURCE
from posir.tables.layout import MISSING, SCORE_LABEL, Block, Cell, Rendering, number_cell

PSI_LOW, PSI_HIGH = suffixed(PSI, CI_LOW), suffixed(PSI, CI_HIGH)


def group_table(
    runs: Mapping[tuple[str, str], GroupScores], published: Sequence[PublishedGroups], names: Sequence[str]
) -> pd.DataFrame:
    """Long table: a row per (run, group), ours in the runs' order, then each published table's rows."""
    parts = []
    for (model, setting), scores in runs.items():
        frame = scores.groups.assign(**{MODEL: model, SETTING: setting, SOURCE: OWN_RUNS}, **scores.run)
        parts.append(frame)
    order = {name: i for i, name in enumerate(names, 1)}
    for table in published:
        rows = [
            {MODEL: r[MODEL], SOURCE: table.label, GROUP: r[GROUP], GROUP_ORDER: order[r[GROUP]], NDCG: r[NDCG],
             PSI: r[PSI]}
            for r in table.rows
        ]  # fmt: skip
        parts.append(pd.DataFrame(rows))
    if not parts:
        return pd.DataFrame(columns=list(POSITION_GROUPS_COLUMNS))
    table = pd.concat(parts, ignore_index=True).reindex(columns=list(POSITION_GROUPS_COLUMNS))
    # counts stay integers beside the published rows, which have none
    return table.astype({column: "Int64" for column in (GROUP_ORDER, N_QUERIES, GROUPS_USED)})


def group_rendering(
    table: pd.DataFrame, names: Sequence[str], grouping: str, published: Sequence[PublishedGroups], caption: str
) -> Rendering:
    """Table 1's layout: nDCG@10 x 100 per group and PSI, our runs (with PSI's interval and the trend) then each
    published table's rows in a block of their own."""
    headers = [MODEL, SETTING, *names, "PSI", "trend (Kendall tau, p)"]
    blocks = []
    ours = table[table[SOURCE] == OWN_RUNS]
    if len(ours):
        rows = [_row(run, names, with_interval=True) for _, run in ours.groupby([MODEL, SETTING], sort=False)]
        blocks.append(Block(rows, f"{OWN_RUNS}: {SCORE_LABEL} x 100 per group, PSI [interval]"))
    for source in published:
        rows = [_row(run, names) for _, run in table[table[SOURCE] == source.label].groupby(MODEL, sort=False)]
        blocks.append(Block(rows, f"published: {source.label}"))
    notes = [f"Groups: {grouping}. A group's {SCORE_LABEL} is the mean of its queries' (trec_eval semantics)."]
    left_out = sorted({str(v) for v in ours[QUERIES_LEFT_OUT].dropna() if str(v)})
    if left_out:
        notes.append(f"Queries in no group, left out (reason:count): {', '.join(left_out)}.")
    if len(ours):
        notes.append(
            "Intervals: bootstrap over queries (metrics.bootstrap). Trend: Kendall's tau between group order and each "
            "query's score (Jonckheere-Terpstra); negative: scores fall towards the end."
        )
    notes += [f"Published: {source.source}; numbers as printed." for source in published]
    return Rendering(headers, "ll" + "r" * (len(names) + 2), blocks, notes, caption=caption)


def _row(run: pd.DataFrame, names: Sequence[str], with_interval: bool = False) -> list[Cell]:
    by_group = run.set_index(GROUP)
    first = run.iloc[0]
    values = [number_cell(100 * by_group.at[name, NDCG]) if name in by_group.index else Cell(None) for name in names]
    psi = number_cell(first[PSI], 3)
    if with_interval and psi.text is not None and pd.notna(first[PSI_LOW]):
        psi = Cell(f"{psi.text} [{first[PSI_LOW]:.3f}, {first[PSI_HIGH]:.3f}]")
    trend = Cell(None)
    if with_interval and pd.notna(first[TREND_TAU]):
        trend = Cell(f"{first[TREND_TAU]:+.3f}, p={_p(first[TREND_P])} ({first[TREND_DIRECTION]})")
    setting = str(first[SETTING]) if pd.notna(first[SETTING]) else MISSING
    return [Cell(str(first[MODEL])), Cell(setting), *values, psi, trend]


def _p(value: float) -> str:
    return "<0.001" if value < 1e-3 else f"{value:.3f}"
