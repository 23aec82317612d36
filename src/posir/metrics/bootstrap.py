"""Bootstrap intervals of a run's position statistics: bucket scores, PSI and the bin means (not reported by PosIR).

Given per-query scores, queries are resampled with replacement *within each length bucket* (a stratified
bootstrap: every resample keeps each bucket's query count; :func:`posir.metrics.resampling.draws`, one generator per
stratum), and for every resample the statistics of :mod:`posir.metrics.aggregate` are recomputed exactly:

* bucket nDCG@10 = mean of the bucket's non-empty position-bin means (``ndcg@10_bin_mean``), and the plain query
  mean (``ndcg@10_query_mean``);
* PSI (:func:`posir.metrics.measures.psi.psi`) over the bins holding at least ``min_bin_queries`` queries in that
  resample (NaN when no bin qualifies or the best bin scores 0).

The ``all`` row pools the buckets' resamples (queries outside every bucket form their own stratum). Intervals are
:func:`posir.metrics.resampling.interval`'s. Everything is vectorised: a resample is a row of bin sums and bin
counts obtained with one ``np.bincount`` per chunk of resamples.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posir.metrics.columns import (
    ALL,
    BUCKET,
    CI_HIGH,
    CI_LOW,
    CONFIDENCE,
    INTERVAL,
    INTERVAL_SUFFIXES,
    LENGTH_BUCKET,
    N_QUERIES,
    N_RESAMPLES,
    POSITION_BIN,
    suffixed,
    with_interval,
)
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import draws, generator, interval


@dataclass(frozen=True)
class BinTotals:
    """Per-bin score sums and query counts, one row per resample: arrays of shape (resamples, n_bins)."""

    sums: np.ndarray
    counts: np.ndarray

    def __add__(self, other: BinTotals) -> BinTotals:
        return BinTotals(self.sums + other.sums, self.counts + other.counts)


def observed_totals(scores: np.ndarray, bins: np.ndarray, n_bins: int) -> BinTotals:
    """The data itself as a single 'resample'."""
    sums = np.bincount(bins, weights=scores, minlength=n_bins)[None, :n_bins].astype(float)
    counts = np.bincount(bins, minlength=n_bins)[None, :n_bins].astype(np.int64)
    return BinTotals(sums, counts)


def resample_totals(
    scores: np.ndarray, bins: np.ndarray, n_bins: int, resamples: int, rng: np.random.Generator
) -> BinTotals:
    """Bin sums and counts of ``resamples`` bootstrap resamples of the given queries."""
    sums = np.zeros((resamples, n_bins))
    counts = np.zeros((resamples, n_bins), dtype=np.int64)
    for start, picks in draws(len(scores), resamples, rng):
        rows = len(picks)
        cells = (bins[picks] + n_bins * np.arange(rows)[:, None]).ravel()
        sums[start : start + rows] = np.bincount(cells, weights=scores[picks].ravel(), minlength=rows * n_bins).reshape(
            rows, n_bins
        )
        counts[start : start + rows] = np.bincount(cells, minlength=rows * n_bins).reshape(rows, n_bins)
    return BinTotals(sums, counts)


def statistics(totals: BinTotals, min_bin_queries: int) -> dict[str, np.ndarray]:
    """Bin means, bin-mean nDCG, query-mean nDCG and PSI for each row of ``totals`` (as aggregate.py)."""
    sums, counts = totals.sums, totals.counts
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)
        bin_mean = np.nanmean(means, axis=1)
        totals_n = counts.sum(axis=1)
        query_mean = np.where(totals_n > 0, sums.sum(axis=1) / np.where(totals_n > 0, totals_n, 1), np.nan)
    psi = PositionSensitivity(min_bin_queries=min_bin_queries)(means, counts, axis=1)
    return {"bin_means": means, "bin_mean": bin_mean, "query_mean": query_mean, "psi": psi}


def stratified_totals(
    per_query: pd.DataFrame,
    buckets: Sequence[str],
    n_bins: int,
    params: BootstrapParams,
    metric: str = POSITION_MEASURE.column,
) -> dict[str, tuple[BinTotals, BinTotals]]:
    """Per bucket (and 'all'): the observed bin totals and those of ``params.resamples`` stratified resamples.

    Which queries a resample draws depends only on the seed, the stratum's name and its query
    count, never on the scores: two tables with the same queries in the same order (two models
    on one benchmark) get the same resampled queries, which makes paired bootstraps of model
    differences (posir.metrics.significance) a matter of calling this once per model.
    """
    scores = per_query[metric].to_numpy(dtype=float)
    bins = per_query[POSITION_BIN].to_numpy(dtype=np.int64)
    if len(bins) and (bins.min() < 0 or bins.max() >= n_bins):
        raise ValueError(f"{POSITION_BIN} outside [0, {n_bins}); was the table built with {n_bins} bins?")
    strata = per_query[LENGTH_BUCKET].astype(str).to_numpy()

    observed: dict[str, BinTotals] = {}
    resampled: dict[str, BinTotals] = {}
    for stratum in sorted(set(strata)):
        mask = strata == stratum
        observed[stratum] = observed_totals(scores[mask], bins[mask], n_bins)
        resampled[stratum] = resample_totals(
            scores[mask], bins[mask], n_bins, params.resamples, generator(params.seed, stratum)
        )
    empty = BinTotals(np.zeros((1, n_bins)), np.zeros((1, n_bins), dtype=np.int64))
    empty_resampled = BinTotals(
        np.zeros((params.resamples, n_bins)), np.zeros((params.resamples, n_bins), dtype=np.int64)
    )
    groups: dict[str, tuple[BinTotals, BinTotals]] = {
        ALL: (sum(observed.values(), start=empty), sum(resampled.values(), start=empty_resampled))
    }
    for bucket in buckets:
        groups[bucket] = (observed.get(bucket, empty), resampled.get(bucket, empty_resampled))
    return groups


def bootstrap_summary(
    per_query: pd.DataFrame,
    buckets: Sequence[str],
    n_bins: int,
    min_bin_queries: int,
    params: BootstrapParams,
    metric: str = POSITION_MEASURE.column,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Intervals per bucket (and 'all') and per (bucket, position bin).

    Returns ``(summary, bins)``: ``summary`` has one row per bucket with the point
    estimates of aggregate.summarize and their ``*_ci_low`` / ``*_ci_high``;
    ``bins`` has one row per (bucket, bin) with the bin mean and its interval.
    """
    position = PositionSensitivity(min_bin_queries=min_bin_queries)
    bin_mean, query_mean = f"{metric}_bin_mean", f"{metric}_query_mean"
    groups = stratified_totals(per_query, buckets, n_bins, params, metric)
    summary_rows: list[dict[str, object]] = []
    bin_rows: list[dict[str, object]] = []
    for name, (point_totals, boot_totals) in groups.items():
        point = statistics(point_totals, min_bin_queries)
        boot = statistics(boot_totals, min_bin_queries)
        row: dict[str, object] = {
            BUCKET: name,
            N_QUERIES: int(point_totals.counts.sum()),
            N_RESAMPLES: params.resamples,
            CONFIDENCE: params.confidence,
        }
        for key, column in (("bin_mean", bin_mean), ("query_mean", query_mean), ("psi", position.column)):
            low, high, bias = interval(boot[key], point[key][0], params)
            for name_of, value in zip(with_interval(column), (point[key][0], low, high, bias)):
                row[name_of] = float(value)
        row[position.defined_share] = float(np.mean(np.isfinite(boot["psi"])))
        row[INTERVAL] = params.interval
        summary_rows.append(row)
        low, high, _ = interval(boot["bin_means"], point["bin_means"][0], params)
        for b in range(n_bins):
            count = int(point_totals.counts[0, b])
            bin_rows.append(
                {
                    BUCKET: name,
                    POSITION_BIN: b,
                    N_QUERIES: count,
                    metric: float(point["bin_means"][0, b]),
                    suffixed(metric, CI_LOW): float(low[b]) if count else math.nan,
                    suffixed(metric, CI_HIGH): float(high[b]) if count else math.nan,
                }
            )
    return pd.DataFrame(summary_rows), pd.DataFrame(bin_rows)


def interval_columns(frame: pd.DataFrame) -> list[str]:
    """The interval columns of a bootstrap summary, for merging into other tables."""
    extra = [PositionSensitivity().defined_share, N_RESAMPLES, CONFIDENCE, INTERVAL]
    return [c for c in frame.columns if c.endswith(INTERVAL_SUFFIXES)] + [c for c in extra if c in frame.columns]
