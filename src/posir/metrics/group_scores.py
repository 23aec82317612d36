"""A run's nDCG@10 per position group, the PSI over the groups, their bootstrap intervals and the trend over the
ordered groups (Zeng et al., section 3.3 and Table 1; the groups are the benchmark's grouping,
:mod:`posir.metrics.groupings`).

* **group scores**: a group's nDCG@10 is the mean over the queries in it (a query in two groups counts in both, as
  Zeng et al.'s code counts a start of exactly 100 in ``0-100`` and ``100-200``); groups are not within length
  buckets, as the paper's are not. Their code scores each group with scikit-learn's ``ndcg_score`` over the top 100,
  binary gains: with one relevant document per query that is trec_eval's nDCG@10 (the per-query scores here) but
  where tied scores straddle the relevant document (scikit-learn averages over ties; trec_eval orders them by
  document id).
* **PSI** = 1 - min/max of the group scores (:func:`posir.metrics.measures.psi.psi`), over the groups holding at least
  ``min_bin_queries`` queries.
* **intervals**: queries resampled with replacement within strata of queries that share their groups (a query in
  ``0-100`` alone, one in both ``0-100`` and ``100-200``), so every resample keeps each group's query count, as the
  run's bootstrap keeps each length bucket's (:mod:`posir.metrics.bootstrap`); a stratum's resampled score sum goes
  to every group of the stratum. Intervals: :func:`posir.metrics.resampling.interval`.
* **trend**: Kendall's tau-b between a query's group rank and its nDCG@10, each (query, group) membership one
  observation, with its two-sided p-value: the Jonckheere-Terpstra test of an ordered trend across independent
  groups in its Kendall form, which handles the ties of nDCG@10's few values. A negative tau: scores fall towards
  the end (primacy).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posir.metrics.columns import CI_HIGH, CI_LOW, GROUP, N_QUERIES, suffixed
from posir.metrics.groupings import Grouping
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import draws, generator, interval
from posir.metrics.trend import NO_DIRECTION, PRIMACY, RECENCY

_PSI = PositionSensitivity()
NDCG = POSITION_MEASURE.column
GROUP_ORDER = "group_order"
#: Per group of one run: its order, query count, nDCG@10 and interval.
GROUP_COLUMNS = (GROUP, GROUP_ORDER, N_QUERIES, NDCG, suffixed(NDCG, CI_LOW), suffixed(NDCG, CI_HIGH))
GROUPS_USED, GROUPS_SKIPPED = _PSI.of_psi("groups_used"), _PSI.of_psi("groups_skipped")
TREND_TAU, TREND_P, TREND_DIRECTION = "trend_tau", "trend_p", "trend_direction"
QUERIES_LEFT_OUT = "queries_left_out"
#: One run over all its groups: PSI with its interval, the groups it compared, the trend, the queries in no group.
RUN_GROUP_COLUMNS = (
    _PSI.column,
    suffixed(_PSI.column, CI_LOW),
    suffixed(_PSI.column, CI_HIGH),
    GROUPS_USED,
    GROUPS_SKIPPED,
    TREND_TAU,
    TREND_P,
    TREND_DIRECTION,
    QUERIES_LEFT_OUT,
)


@dataclass(frozen=True)
class GroupScores:
    """One run's scores by position group: a row per group (:data:`GROUP_COLUMNS`) and the run's PSI, trend and
    left-out queries (:data:`RUN_GROUP_COLUMNS`)."""

    groups: pd.DataFrame
    run: dict[str, object]


def group_scores(
    per_query: pd.DataFrame,
    grouping: Grouping,
    n_bins: int,
    min_bin_queries: int,
    bootstrap: BootstrapParams,
    measure: str = NDCG,
) -> GroupScores:
    """The scores of one run's per-query table (its position columns included) by ``grouping``'s groups."""
    names = grouping.names(n_bins)
    members = grouping.membership(per_query, n_bins)
    scores = per_query[measure].to_numpy(dtype=float)
    counts = members.sum(axis=0)
    sums = scores @ members
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
    position = PositionSensitivity(min_bin_queries=min_bin_queries)
    psi = float(position(means, counts))
    replicate_means = _resampled_group_means(scores, members, counts, bootstrap)
    low, high, _ = interval(replicate_means, means, bootstrap, POSITION_MEASURE.bounds)
    psi_low, psi_high, _ = interval(
        position(replicate_means, np.broadcast_to(counts, replicate_means.shape), axis=1),
        np.asarray(psi),
        bootstrap,
        PositionSensitivity.bounds,
    )
    groups = pd.DataFrame(
        {
            GROUP: list(names),
            GROUP_ORDER: np.arange(1, len(names) + 1),
            N_QUERIES: counts.astype(int),
            measure: means,
            suffixed(measure, CI_LOW): np.where(counts > 0, low, np.nan),
            suffixed(measure, CI_HIGH): np.where(counts > 0, high, np.nan),
        },
        columns=list(GROUP_COLUMNS),
    )
    eligible = counts >= max(int(min_bin_queries), 1)
    tau, p = group_trend(scores, members)
    left_out = grouping.left_out(per_query, n_bins)
    run = {
        _PSI.column: psi,
        suffixed(_PSI.column, CI_LOW): float(psi_low),
        suffixed(_PSI.column, CI_HIGH): float(psi_high),
        GROUPS_USED: int(eligible.sum()),
        GROUPS_SKIPPED: ",".join(n for n, c, e in zip(names, counts, eligible) if c > 0 and not e),
        TREND_TAU: tau,
        TREND_P: p,
        TREND_DIRECTION: PRIMACY if tau < 0 else RECENCY if tau > 0 else NO_DIRECTION,
        QUERIES_LEFT_OUT: ";".join(f"{reason}:{n}" for reason, n in sorted(left_out.items())),
    }
    return GroupScores(groups, run)


def _resampled_group_means(
    scores: np.ndarray, members: np.ndarray, counts: np.ndarray, params: BootstrapParams
) -> np.ndarray:
    """(resamples, groups) group means, the queries resampled within strata of one membership pattern each."""
    sums = np.zeros((params.resamples, members.shape[1]))
    patterns, stratum = np.unique(members, axis=0, return_inverse=True)
    for index, pattern in enumerate(patterns):
        if not pattern.any():
            continue  # queries in no group are in no mean
        values = scores[stratum.ravel() == index]
        label = "".join("1" if member else "0" for member in pattern)
        totals = np.zeros(params.resamples)
        for start, picks in draws(len(values), params.resamples, generator(params.seed, label)):
            totals[start : start + len(picks)] = values[picks].sum(axis=1)
        sums += totals[:, None] * pattern[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)


def group_trend(scores: np.ndarray, members: np.ndarray) -> tuple[float, float]:
    """Kendall's tau-b of (group rank, score) over every (query, group) membership, and its two-sided p-value; NaN
    with fewer than two groups holding queries or constant scores."""
    rows, columns = np.nonzero(members)
    if len(np.unique(columns)) < 2 or np.ptp(scores[rows]) == 0:
        return math.nan, math.nan
    from scipy.stats import kendalltau

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = kendalltau(columns, scores[rows])
    return float(result.statistic), float(result.pvalue)
