"""Who gets seen, as tables: per group the mean of each exposure measure over a run's queries, PEER per attribute,
and the paired differences of two runs with their bootstrap intervals (posir.metrics.exposure's per-query values).

Every function takes frames and returns a frame whose columns :mod:`posir.results.schemas` names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import pandas as pd

from posir.metrics.columns import (
    ATTRIBUTE,
    CUTOFF,
    GROUP,
    MODEL,
    N_QUERIES,
    SETTING,
)
from posir.metrics.exposure import CORPUS_SHARE, RELEVANT_SHARE, DocumentGroups
from posir.metrics.measure import EXPOSURE_TABLE, GROUP_SCOPE, PEER_TABLE, PERCENT_SHARE, RUN_SCOPE, GroupMeasure
from posir.metrics.measures.peer import PEER
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import paired_difference
from posir.results.schemas import EXPOSURE_PAIR_COLUMNS, N_UNDEFINED, exposure_columns, peer_columns


def _peer(measures: Sequence[GroupMeasure]) -> PEER | None:
    """The measure with a table of its own (PEER's), if any."""
    return cast("PEER | None", next((m for m in measures if m.table == PEER_TABLE), None))


def exposure_rows(
    model: str, corpus: DocumentGroups, frame: pd.DataFrame, measures: Sequence[GroupMeasure], attributes: Sequence[str]
) -> list[dict[str, object]]:
    """Per compared attribute and group of the corpus: its shares of the corpus and of the relevant documents, and
    the mean of each measure over the run's queries (``frame``: per_query_values')."""
    columns = exposure_columns(measures)
    rows = []
    for attribute in attributes:
        if not corpus.compared(attribute):
            continue
        relevant = corpus.relevant_shares(attribute)
        for group, share in corpus.shares(attribute).items():
            row: dict[str, object] = {
                MODEL: model,
                SETTING: corpus.setting,
                ATTRIBUTE: attribute,
                GROUP: group,
                N_QUERIES: len(frame),
                CORPUS_SHARE: share,
                RELEVANT_SHARE: relevant.get(group, 0.0),
            }
            for measure in measures:
                if measure.table != EXPOSURE_TABLE:
                    continue
                owner = "" if measure.scope == RUN_SCOPE else attribute
                of_group = group if measure.scope == GROUP_SCOPE else ""
                row.update({column: measure.aggregate(frame[(owner, of_group, column)]) for column in measure.columns})
            rows.append({column: row[column] for column in columns})
    return rows


def peer_rows(
    model: str, corpus: DocumentGroups, frame: pd.DataFrame, measures: Sequence[GroupMeasure], attributes: Sequence[str]
) -> list[dict[str, object]]:
    """Per attribute whose groups hold equally relevant documents: mean PEER over the queries whose test is defined,
    how many are not, and per grade the mean p-value."""
    measure = _peer(measures)
    if measure is None:
        return []
    rows = []
    for attribute in attributes:
        key = (attribute, "", measure.column)
        if key not in frame:
            continue
        finite = frame[key].notna()
        row: dict[str, object] = {
            MODEL: model,
            SETTING: corpus.setting,
            ATTRIBUTE: attribute,
            CUTOFF: measure.cutoff,
            N_QUERIES: int(finite.sum()),
            # the authors' mean is NaN once one query's test is 0/0 (one value, equal to the filler): those queries are
            # counted here and left out of the mean
            N_UNDEFINED: int((~finite).sum()),
            measure.column: measure.aggregate(frame.loc[finite, key]),
        }
        for grade, column in zip(measure.weights, measure.columns[1:]):
            row[measure.grade_column(grade)] = measure.aggregate(frame.loc[finite, (attribute, "", column)])
        rows.append(row)
    return rows


def pair_rows(
    pair: tuple[str, str],
    setting: str,
    frames: dict[str, pd.DataFrame],
    measures: Sequence[GroupMeasure],
    params: BootstrapParams,
) -> list[dict[str, object]]:
    """Per value of both runs of a configured pair (a group's, an attribute's or the run's, in the per-query frame's
    order): mean a - b over the queries both answer, and its paired bootstrap interval."""
    first, second = pair
    if first not in frames or second not in frames:
        return []
    a, b = frames[first].align(frames[second], join="inner", axis=0)
    of_column = {column: measure for measure in measures for column in measure.paired}
    rows = []
    for attribute, group, column in a.columns:
        measure = of_column.get(column)
        if measure is None:
            continue  # not compared in pairs (PEER, EE-D: posir.metrics.measures)
        paired = a[(attribute, group, column)].notna() & b[(attribute, group, column)].notna()
        point, low, high = paired_difference(
            a.loc[paired, (attribute, group, column)].to_numpy(float),
            b.loc[paired, (attribute, group, column)].to_numpy(float),
            params,
            measure.difference_bounds,
        )
        rows.append(
            dict(
                zip(
                    EXPOSURE_PAIR_COLUMNS,
                    (first, second, setting, attribute, group, column, int(paired.sum()), point, low, high),
                )
            )
        )
    return rows


def exposure_tables(
    exposure: list[dict[str, object]],
    peers: list[dict[str, object]],
    pairs: list[dict[str, object]],
    measures: Sequence[GroupMeasure],
) -> dict[str, pd.DataFrame]:
    """The three tables of a benchmark's exposure, with their declared columns (empty tables keep them)."""
    peer = _peer(measures) or PEER()
    return {
        EXPOSURE_TABLE: pd.DataFrame(exposure, columns=list(exposure_columns(measures))),
        PEER_TABLE: pd.DataFrame(peers, columns=list(peer_columns(peer))),
        "pairs": pd.DataFrame(pairs, columns=list(EXPOSURE_PAIR_COLUMNS)),
    }


OTHER_DIGITS = 4  # a number no measure declares the display of


def exposure_markdown(
    name: str, table: pd.DataFrame, left_out: Sequence[str] = (), measures: Sequence[GroupMeasure] = ()
) -> str:
    """An exposure table (``exposure``, ``peer`` or ``pairs``) in Markdown, each measure as it declares (shares in
    percent), the shares of the corpus in percent, other numbers to 4 places; ``left_out`` says what runs' queries
    were not read, and why."""
    dropped = "".join(f"\nLeft out: {line}.\n" for line in left_out)
    if table.empty:
        why = {
            EXPOSURE_TABLE: "no attribute has two groups in any setting's corpus",
            PEER_TABLE: "no query has relevant documents in several groups of an attribute (PEER compares those)",
            "pairs": "no pair under exposure.benchmarks.<benchmark>.compare has runs of both its models in this config",
        }
        return f"No rows: {why.get(name, 'nothing to report')}.\n" + dropped
    displays = {CORPUS_SHARE: PERCENT_SHARE, RELEVANT_SHARE: PERCENT_SHARE}
    displays |= {column: measure.display for measure in measures for column in measure.columns}
    shown = table.copy()
    for column in shown.columns:
        display = displays.get(column)
        if display is not None:
            shown[column] = (shown[column] * display.scale).round(display.digits)
        elif shown[column].dtype.kind == "f":
            shown[column] = shown[column].round(OTHER_DIGITS)
    percent = [column for column in shown.columns if column in displays and displays[column].percent]
    note = "Shares in percent.\n\n" if percent else ""
    if name == "pairs":
        note = "Mean of a - b over the queries both answer, with its bootstrap interval; shares as fractions.\n\n"
    return note + shown.to_markdown(index=False) + "\n" + dropped
