"""Bootstrap confidence intervals for bucket nDCG@10 and PSI (not reported by PosIR).

PosIR section 5.2 reports point values only. Given per-query scores, queries are
resampled with replacement *within each length bucket* (a stratified bootstrap:
every resample keeps each bucket's query count), and for every resample the
statistics of :mod:`posir.metrics.aggregate` are recomputed exactly:

* bucket nDCG@10 = mean of the bucket's non-empty position-bin means
  (``ndcg@10_bin_mean``), and the plain query mean (``ndcg@10_query_mean``);
* PSI = 1 - min/max over the bins holding at least ``min_bin_queries`` queries
  in that resample (NaN when no bin qualifies or the best bin scores 0).

The ``all`` row pools the buckets' resamples (queries outside every bucket form
their own stratum).

Intervals (``metrics.bootstrap.interval``): ``centered`` (default) places the
resamples' spread around the point estimate, ``[est - max(m - q_lo, 0),
est + max(q_hi - m, 0)]`` with ``m`` the resamples' mean and ``q`` their
quantiles, clipped to [0, 1];
``percentile`` is the plain ``[q_lo, q_hi]``. PSI is a max/min statistic and
resampling inflates it (``*_bootstrap_bias`` = m - est): for nearly flat
position curves the plain percentile interval can lie wholly above the point
estimate, which the centered interval cannot. For the nDCG means the bias is
~0 and both intervals coincide.
Everything is vectorised: a resample is a row of bin sums and bin counts
obtained with one ``np.bincount`` per chunk of resamples.
"""

from __future__ import annotations

import math
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.params import BootstrapParams
from posir.results import ALL, CONFIDENCE, INTERVAL, INTERVAL_SUFFIXES, N_RESAMPLES, PSI_DEFINED_SHARE

INTERVALS = ("centered", "percentile")
#: Rendered tables and figures show no interval for a statistic of fewer queries: resampling one query gives
#: ``[x, x]``, which reads as certainty, and a handful give an interval as wide as the data allows.
MIN_INTERVAL_QUERIES = 10

# Resample index matrices are generated in chunks of at most this many entries.
CHUNK_ENTRIES = 4_000_000


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
    n = len(scores)
    sums = np.zeros((resamples, n_bins))
    counts = np.zeros((resamples, n_bins), dtype=np.int64)
    if n == 0:
        return BinTotals(sums, counts)
    chunk = max(1, min(resamples, CHUNK_ENTRIES // n))
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        picks = rng.integers(0, n, size=(rows, n))
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
        eligible = np.where(counts >= max(int(min_bin_queries), 1), means, np.nan)
        best = np.nanmax(eligible, axis=1)
        worst = np.nanmin(eligible, axis=1)
        psi = np.where(np.isfinite(best) & (best > 0), 1.0 - worst / np.where(best > 0, best, 1.0), np.nan)
    return {"bin_means": means, "bin_mean": bin_mean, "query_mean": query_mean, "psi": psi}


def _stratum_rng(seed: int, stratum: str) -> np.random.Generator:
    """One generator per stratum, fixed by the seed and the stratum's name only."""
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(stratum.encode("utf-8"))]))


def interval(
    replicates: np.ndarray, point: np.ndarray, params: BootstrapParams, bounds: tuple[float, float] = (0.0, 1.0)
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, bias) over the resample axis 0; NaN replicates are ignored; a centered interval is clipped to
    ``bounds``, the statistic's range (PSI and nDCG: [0, 1])."""
    alpha = 1.0 - params.confidence
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(replicates, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
        centre = np.nanmean(replicates, axis=0)
    bias = centre - point
    if params.interval == "centered":
        low = np.clip(point - np.maximum(centre - low, 0.0), *bounds)
        high = np.clip(point + np.maximum(high - centre, 0.0), *bounds)
    return low, high, bias


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
    bins = per_query["position_bin"].to_numpy(dtype=np.int64)
    if len(bins) and (bins.min() < 0 or bins.max() >= n_bins):
        raise ValueError(f"position_bin outside [0, {n_bins}); was the table built with {n_bins} bins?")
    strata = per_query["length_bucket"].astype(str).to_numpy()

    observed: dict[str, BinTotals] = {}
    resampled: dict[str, BinTotals] = {}
    for stratum in sorted(set(strata)):
        mask = strata == stratum
        observed[stratum] = observed_totals(scores[mask], bins[mask], n_bins)
        resampled[stratum] = resample_totals(
            scores[mask], bins[mask], n_bins, params.resamples, _stratum_rng(params.seed, stratum)
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
    """Percentile intervals per bucket (and 'all') and per (bucket, position bin).

    Returns ``(summary, bins)``: ``summary`` has one row per bucket with the point
    estimates of aggregate.summarize and their ``*_ci_low`` / ``*_ci_high``;
    ``bins`` has one row per (bucket, bin) with the bin mean and its interval.
    """
    groups = stratified_totals(per_query, buckets, n_bins, params, metric)
    summary_rows: list[dict[str, object]] = []
    bin_rows: list[dict[str, object]] = []
    for name, (point_totals, boot_totals) in groups.items():
        point = statistics(point_totals, min_bin_queries)
        boot = statistics(boot_totals, min_bin_queries)
        row: dict[str, object] = {
            "bucket": name,
            "n_queries": int(point_totals.counts.sum()),
            "n_resamples": params.resamples,
            "confidence": params.confidence,
        }
        for key, column in (("bin_mean", f"{metric}_bin_mean"), ("query_mean", f"{metric}_query_mean"), ("psi", "psi")):
            low, high, bias = interval(boot[key], point[key][0], params)
            row[column] = float(point[key][0])
            row[f"{column}_ci_low"] = float(low)
            row[f"{column}_ci_high"] = float(high)
            row[f"{column}_bootstrap_bias"] = float(bias)
        row["psi_defined_share"] = float(np.mean(np.isfinite(boot["psi"])))
        row["interval"] = params.interval
        summary_rows.append(row)
        low, high, _ = interval(boot["bin_means"], point["bin_means"][0], params)
        for b in range(n_bins):
            count = int(point_totals.counts[0, b])
            mean = float(point["bin_means"][0, b])
            bin_rows.append(
                {
                    "bucket": name,
                    "position_bin": b,
                    "n_queries": count,
                    metric: mean,
                    f"{metric}_ci_low": float(low[b]) if count else math.nan,
                    f"{metric}_ci_high": float(high[b]) if count else math.nan,
                }
            )
    return pd.DataFrame(summary_rows), pd.DataFrame(bin_rows)


def interval_columns(frame: pd.DataFrame) -> list[str]:
    """The interval columns of a bootstrap summary, for merging into other tables."""
    extra = [PSI_DEFINED_SHARE, N_RESAMPLES, CONFIDENCE, INTERVAL]
    return [c for c in frame.columns if c.endswith(INTERVAL_SUFFIXES)] + [c for c in extra if c in frame.columns]
