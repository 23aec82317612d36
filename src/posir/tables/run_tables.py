"""A run's own tables: its per-query scores with the position of each query's evidence, and its aggregates (the
bins, the bucket summary with each PSI's trend flag, the trend tests, the bootstrap intervals) -- PosIR section 5.2,
with the statistics it does not report beside it.

Every function takes frames (or mappings) and returns frames whose columns :mod:`posir.results.schemas` names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from posir.metrics import aggregate
from posir.metrics.bootstrap import bootstrap_summary, interval_columns
from posir.metrics.columns import BUCKET, DOC_ID, ID_COLUMNS, MODEL, P_VALUE, POSITION_BIN, QID, SETTING
from posir.metrics.measure import RankingMeasure
from posir.metrics.params import MetricParams, StatisticsParams, TableParams
from posir.metrics.trend import (
    BINS_USED,
    DIRECTION,
    PSI_TREND_DIRECTION,
    PSI_TREND_P,
    PSI_TREND_SIGNIFICANT,
    THIRDS_PREFIX,
    flag_psi_trends,
    thirds_test,
    trend_table,
)
from posir.results.schemas import DOC_INPUT_TOKENS, LANGUAGES_OUTSIDE_MODEL, PSI_BINS_USED, PSI_LOW_BINS, score_columns


def per_query_table(
    scores: Mapping[str, Mapping[str, float]],
    positions: pd.DataFrame,
    measures: Sequence[RankingMeasure],
    where: str,
    input_tokens: pd.Series | None = None,
) -> pd.DataFrame:
    """One row per scored query: its measures (``scores``: per qid, by column) and its positive's position
    (``positions``: the benchmark's positions.tsv, ``where``), in score_columns' order, the benchmark's further
    position fields after them; with ``input_tokens`` (token positions the model processed, per document, summed over
    windows) DOC_INPUT_TOKENS last. A query without a position is an error naming ``where``."""
    values = pd.DataFrame([{QID: qid, **by_column} for qid, by_column in scores.items()])
    table = positions.merge(values, on=QID, how="right", validate="one_to_one")
    unplaced = table[DOC_ID].isna() | (table[DOC_ID] == "")
    if unplaced.any():
        missing = table.loc[unplaced, QID].head(5).tolist()
        raise ValueError(f"{where}: no position for qrels queries {missing}; rebuild the benchmark")
    if input_tokens is not None:
        table[DOC_INPUT_TOKENS] = table[DOC_ID].map(input_tokens)
    columns = list(score_columns(measures))
    return table[columns + [c for c in table.columns if c not in columns]]


def spanned(per_query: pd.DataFrame) -> pd.DataFrame:
    """The queries with an evidence span (a position bin), which every bin, bucket PSI and trend reads; a query whose
    position is a group label only (FineWeb-PosQ) is left out of them (:func:`unspanned_count` counts it)."""
    if not per_query[POSITION_BIN].isna().any():
        return per_query
    kept = per_query[per_query[POSITION_BIN].notna()]
    return kept.astype({POSITION_BIN: "int64"})


def unspanned_count(per_query: pd.DataFrame) -> int:
    """Queries without an evidence span, which the relative-position tables leave out."""
    return int(per_query[POSITION_BIN].isna().sum())


@dataclass(frozen=True)
class RunSummary:
    """A run's bucket summary and (with statistics) its trend tests."""

    summary: pd.DataFrame
    trends: pd.DataFrame | None


def run_bins(per_query: pd.DataFrame, metrics: TableParams) -> pd.DataFrame:
    """Bins x buckets means and counts (PosIR 5.2), of the queries with a span."""
    return aggregate.bin_table(spanned(per_query), metrics.bucket_names, metrics.n_bins)


def run_summary(
    per_query: pd.DataFrame,
    bins: pd.DataFrame,
    metrics: TableParams,
    languages_outside_model: Sequence[str] = (),
    statistics: StatisticsParams | None = None,
) -> RunSummary:
    """Per bucket both means, PSI and skipped bins (PosIR 5.2) from the run's :func:`run_bins`; the summary names the
    languages of the setting the model does not declare. With ``statistics``, each bucket's position trend and
    first-against-last-third test, and the summary says whether its PSI rests on a significant trend."""
    per_query = spanned(per_query)
    summary = aggregate.summarize(per_query, bins, metrics.min_bin_queries)
    summary[LANGUAGES_OUTSIDE_MODEL] = " ".join(languages_outside_model)
    trends = None
    if statistics is not None:
        trends = position_trends(per_query, bins, summary, metrics, statistics)
        flags = trends.set_index(BUCKET)
        summary[PSI_TREND_P] = summary[BUCKET].map(flags[P_VALUE])
        summary[PSI_TREND_DIRECTION] = summary[BUCKET].map(flags[DIRECTION])
        summary[PSI_TREND_SIGNIFICANT] = summary[BUCKET].map(flags[PSI_TREND_SIGNIFICANT])
    return RunSummary(summary, trends)


def position_trends(
    per_query: pd.DataFrame,
    bins: pd.DataFrame,
    summary: pd.DataFrame,
    metrics: TableParams,
    statistics: StatisticsParams,
) -> pd.DataFrame:
    """Per bucket: the trend of the bin means against position, the PSI flag, and first third against last."""
    trends = trend_table(bins, metrics.min_bin_queries)
    flags = flag_psi_trends(summary, trends, statistics.alpha, statistics.trend_test)
    thirds = thirds_test(per_query, metrics.bucket_names, statistics.resamples, statistics.seed)
    merged = trends.merge(flags.drop(columns=[BINS_USED]), on=BUCKET, validate="one_to_one")
    return merged.merge(
        thirds.add_prefix(THIRDS_PREFIX).rename(columns={THIRDS_PREFIX + BUCKET: BUCKET}),
        on=BUCKET,
        how="left",
        validate="one_to_one",
    )


def run_intervals(per_query: pd.DataFrame, metrics: MetricParams) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bootstrap intervals of bucket nDCG@10 and PSI (per bucket) and of the bin means (per bin)."""
    return bootstrap_summary(
        spanned(per_query), metrics.bucket_names, metrics.n_bins, metrics.min_bin_queries, metrics.bootstrap
    )


def with_intervals(long: pd.DataFrame, bootstraps: Mapping[tuple[str, str], pd.DataFrame], n_bins: int) -> pd.DataFrame:
    """The long main table plus each run's bootstrap interval columns and the PSI low-count flag."""
    parts = [frame.assign(**{MODEL: model, SETTING: setting}) for (model, setting), frame in bootstraps.items()]
    intervals = pd.concat(parts, ignore_index=True)
    keys = [*ID_COLUMNS, BUCKET]
    merged = long.merge(intervals[keys + interval_columns(intervals)], on=keys, how="left", validate="one_to_one")
    merged[PSI_LOW_BINS] = merged[PSI_BINS_USED] < n_bins
    return merged
