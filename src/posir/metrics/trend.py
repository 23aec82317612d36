"""Trend statistics of nDCG@10 against evidence position, and a test between positions.

PSI (Zeng et al., section 3.3; PosIR section 5.2) is a worst-case ratio over
position bins: it is never zero on noisy data, so it alone cannot say whether a
bucket has a *position trend* or only bin-to-bin noise. PosIR's own analysis
correlates bin means with position but never reports it; here, per length
bucket (and ``all``):

* :func:`trend_table` -- the bin means of :func:`posir.metrics.aggregate.bin_table`
  against the bin centres (PosIR section 4.1's equal-width bins): the OLS slope
  with its two-sided p-value (``scipy.stats.linregress``), Pearson's r,
  Spearman's rho and Kendall's tau with their two-sided p-values. The slope is
  in metric units per unit of relative position, i.e. the fitted change from
  the start to the end of a document. Bins are weighted equally, as PSI and the
  bucket nDCG weigh them, and the bins used are exactly PSI's (at least
  ``min_bin_queries`` queries, :func:`posir.metrics.aggregate.summarize`).
* :func:`thirds_test` -- is evidence in the first third of a document found
  better than evidence in the last third? A two-sample permutation test of the
  difference in mean per-query nDCG@10 (``scipy.stats.permutation_test``,
  seeded) with effect sizes: the difference in means, Cohen's d (pooled SD) and
  Cliff's delta from the Mann-Whitney U statistic.
* :func:`flag_psi_trends` -- per bucket, whether PSI rests on a significant
  trend (a chosen p-value below ``alpha``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from posir.metrics.columns import (
    ALL,
    ALPHA,
    BIN_END,
    BIN_START,
    BUCKET,
    DIFFERENCE,
    LENGTH_BUCKET,
    N_QUERIES,
    P_VALUE,
    POSITION_BIN,
    RELATIVE_POSITION,
)
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity
from posir.metrics.resampling import CHUNK_ENTRIES

_PSI = PositionSensitivity()
BINS_USED, BINS_SKIPPED = "bins_used", "bins_skipped"
SLOPE, SLOPE_STDERR, SLOPE_P, INTERCEPT = "slope", "slope_stderr", "slope_p", "intercept"
PEARSON_R, PEARSON_P = "pearson_r", "pearson_p"
SPEARMAN_RHO, SPEARMAN_P = "spearman_rho", "spearman_p"
KENDALL_TAU, KENDALL_P = "kendall_tau", "kendall_p"
#: Per bucket: the bin means against position (PSI's bins): OLS slope, Pearson, Spearman, Kendall with p-values.
TREND_FIT_COLUMNS = (
    BUCKET,
    BINS_USED,
    BINS_SKIPPED,
    SLOPE,
    SLOPE_STDERR,
    SLOPE_P,
    INTERCEPT,
    PEARSON_R,
    PEARSON_P,
    SPEARMAN_RHO,
    SPEARMAN_P,
    KENDALL_TAU,
    KENDALL_P,
)
DIRECTION, TEST = "direction", "test"
PRIMACY, RECENCY, NO_DIRECTION = "primacy", "recency", "none"
# Per bucket of a run's summary: the trend test's p-value, the trend's direction, whether p < alpha
PSI_TREND_P, PSI_TREND_DIRECTION, PSI_TREND_SIGNIFICANT = (
    _PSI.of_psi("trend_p"),
    _PSI.of_psi("trend_direction"),
    _PSI.of_psi("trend_significant"),
)
PSI_TREND_COLUMNS = (PSI_TREND_P, PSI_TREND_DIRECTION, PSI_TREND_SIGNIFICANT)
#: Per bucket: PSI beside the chosen trend test's p-value and whether it lies below alpha (flag_psi_trends).
PSI_TREND_FLAG_COLUMNS = (BUCKET, _PSI.column, BINS_USED, DIRECTION, TEST, P_VALUE, ALPHA, PSI_TREND_SIGNIFICANT)
N_FIRST, N_LAST, MEAN_FIRST, MEAN_LAST = "n_first", "n_last", "mean_first", "mean_last"
PERMUTATION_P, COHENS_D, CLIFFS_DELTA = "permutation_p", "cohens_d", "cliffs_delta"
#: Per bucket: per-query nDCG@10 with the evidence in the first third against the last (thirds_test).
THIRDS_COLUMNS = (BUCKET, N_FIRST, N_LAST, MEAN_FIRST, MEAN_LAST, DIFFERENCE, PERMUTATION_P, COHENS_D, CLIFFS_DELTA)
THIRDS_PREFIX = "thirds_"
#: The thirds test's statistics as a run's trend file names them (first third's mean - last third's, its tests).
THIRDS_DIFFERENCE = THIRDS_PREFIX + DIFFERENCE
THIRDS_PERMUTATION_P, THIRDS_CLIFFS_DELTA = THIRDS_PREFIX + PERMUTATION_P, THIRDS_PREFIX + CLIFFS_DELTA
#: A run's trend file: the fit, the PSI flag, the thirds test (its columns prefixed ``thirds_``).
TREND_COLUMNS = (
    *TREND_FIT_COLUMNS,
    *(c for c in PSI_TREND_FLAG_COLUMNS if c not in (BUCKET, BINS_USED)),
    *(THIRDS_PREFIX + c for c in THIRDS_COLUMNS if c != BUCKET),
)

# Fewer bins than this leave no degrees of freedom for a slope's p-value (n - 2 = 0).
MIN_TREND_BINS = 3
TREND_TESTS = {"slope": SLOPE_P, "pearson": PEARSON_P, "spearman": SPEARMAN_P, "kendall": KENDALL_P}


def eligible_bins(bins: pd.DataFrame, min_bin_queries: int) -> pd.Series:
    """Mask of the bins PSI uses: non-empty and holding at least ``min_bin_queries`` queries (aggregate.summarize)."""
    return bins[N_QUERIES] >= max(int(min_bin_queries), 1)


def bin_centres(bins: pd.DataFrame) -> np.ndarray:
    """Relative position of each bin's centre, from the bin table's own edges."""
    return ((bins[BIN_START] + bins[BIN_END]) / 2).to_numpy(dtype=float)


def _trend(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Slope and the three correlations with p-values; NaN where undefined (too few bins, constant means)."""
    from scipy import stats

    nan = dict.fromkeys(TREND_FIT_COLUMNS[3:], math.nan)
    if len(x) < MIN_TREND_BINS or np.ptp(y) == 0 or np.ptp(x) == 0:
        return nan
    # scipy warns on ties it handles correctly anyway; the caller only needs the numbers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = stats.linregress(x, y)
        pearson = stats.pearsonr(x, y)
        spearman = stats.spearmanr(x, y)
        kendall = stats.kendalltau(x, y)
    return {
        SLOPE: float(fit.slope),
        SLOPE_STDERR: float(fit.stderr),
        SLOPE_P: float(fit.pvalue),
        INTERCEPT: float(fit.intercept),
        PEARSON_R: float(pearson.statistic),
        PEARSON_P: float(pearson.pvalue),
        SPEARMAN_RHO: float(spearman.statistic),
        SPEARMAN_P: float(spearman.pvalue),
        KENDALL_TAU: float(kendall.statistic),
        KENDALL_P: float(kendall.pvalue),
    }


def trend_table(bins: pd.DataFrame, min_bin_queries: int, metric: str = POSITION_MEASURE.column) -> pd.DataFrame:
    """One row per bucket of ``bins`` (aggregate.bin_table's long table): trend of bin means against position.

    Columns: ``bucket``, ``bins_used`` (PSI's bins), ``bins_skipped`` (non-empty bins below the
    minimum, comma-separated as in the summary), ``slope``, ``slope_stderr``, ``slope_p``,
    ``intercept``, ``pearson_r``/``_p``, ``spearman_rho``/``_p``, ``kendall_tau``/``_p``. Statistics are
    NaN with fewer than three bins or constant bin means.
    """
    rows = []
    for name, frame in bins.groupby(BUCKET, sort=False):
        used = frame[eligible_bins(frame, min_bin_queries)]
        skipped = frame[(frame[N_QUERIES] > 0) & ~eligible_bins(frame, min_bin_queries)][POSITION_BIN]
        rows.append(
            {
                BUCKET: name,
                BINS_USED: int(len(used)),
                BINS_SKIPPED: ",".join(str(b) for b in skipped.tolist()),
                **_trend(bin_centres(used), used[metric].to_numpy(dtype=float)),
            }
        )
    return pd.DataFrame(rows, columns=list(TREND_FIT_COLUMNS))


# --- first third against last third ------------------------------------------------------------


def cohens_d(a: np.ndarray, b: np.ndarray) -> float:
    """(mean a - mean b) / pooled standard deviation (ddof 1); NaN when it is zero or undefined."""
    n1, n2 = len(a), len(b)
    if n1 < 2 or n2 < 2:
        return math.nan
    pooled = math.sqrt(((n1 - 1) * np.var(a, ddof=1) + (n2 - 1) * np.var(b, ddof=1)) / (n1 + n2 - 2))
    return float((np.mean(a) - np.mean(b)) / pooled) if pooled > 0 else math.nan


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> float:
    """P(a > b) - P(a < b) over all pairs, as 2U/(n1 n2) - 1 with U Mann-Whitney's statistic of ``a``."""
    from scipy.stats import mannwhitneyu

    if len(a) == 0 or len(b) == 0:
        return math.nan
    u = mannwhitneyu(a, b, alternative="two-sided").statistic
    return float(2.0 * u / (len(a) * len(b)) - 1.0)


def two_sided_permutation_p(
    a: np.ndarray, b: np.ndarray, statistic, permutation_type: str, n_resamples: int, seed: int
) -> float:
    """scipy's two-sided ``permutation_test`` of ``statistic`` on (a, b), seeded, in batches that fit in memory.

    ``permutation_type`` is "independent" (two groups) or "samples" (paired signs). A batch is bounded so
    that 10,000 resamples of 10,000 queries fit in memory.
    """
    from scipy.stats import permutation_test

    result = permutation_test(
        (a, b),
        statistic,
        permutation_type=permutation_type,
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
        batch=max(1, CHUNK_ENTRIES // max(len(a) + len(b), 1)),
    )
    return float(result.pvalue)


def _difference_in_means(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def permutation_p(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> float:
    """Two-sided permutation p-value of mean(a) - mean(b); exact when ``n_resamples`` covers every split."""
    if len(a) < 2 or len(b) < 2:
        return math.nan  # scipy needs two observations per sample; a third this thin tests nothing
    return two_sided_permutation_p(a, b, _difference_in_means, "independent", n_resamples, seed)


def thirds_test(
    per_query: pd.DataFrame,
    buckets: Sequence[str],
    n_resamples: int = 9999,
    seed: int = 13,
    metric: str = POSITION_MEASURE.column,
    first: float = 1 / 3,
    last: float = 2 / 3,
) -> pd.DataFrame:
    """Per bucket (and 'all'): per-query ``metric`` with evidence at ``relative_position <= first`` against ``> last``.

    The cut follows PosIR's ``(a, b]`` bins (section 4.1): position 0 belongs to the first
    third, position ``last`` to the middle. Columns: ``bucket``, ``n_first``, ``n_last``,
    ``mean_first``, ``mean_last``, ``difference`` (first - last, positive = primacy),
    ``permutation_p`` (two-sided, ``n_resamples`` permutations from ``seed``; NaN with fewer than two
    queries in a third), ``cohens_d``,
    ``cliffs_delta``. Every bucket uses the same seed, so reruns reproduce the table.
    """
    if not 0.0 < first <= last < 1.0:
        raise ValueError(f"thirds_test: need 0 < first <= last < 1, got first={first}, last={last}")
    rows = []
    groups = [(ALL, per_query)] + [(b, per_query[per_query[LENGTH_BUCKET] == b]) for b in buckets]
    for name, frame in groups:
        position = frame[RELATIVE_POSITION].to_numpy(dtype=float)
        scores = frame[metric].to_numpy(dtype=float)
        a, b = scores[position <= first], scores[position > last]
        rows.append(
            {
                BUCKET: name,
                N_FIRST: int(len(a)),
                N_LAST: int(len(b)),
                MEAN_FIRST: float(np.mean(a)) if len(a) else math.nan,
                MEAN_LAST: float(np.mean(b)) if len(b) else math.nan,
                DIFFERENCE: float(np.mean(a) - np.mean(b)) if len(a) and len(b) else math.nan,
                PERMUTATION_P: permutation_p(a, b, n_resamples, seed),
                COHENS_D: cohens_d(a, b),
                CLIFFS_DELTA: cliffs_delta(a, b),
            }
        )
    return pd.DataFrame(rows)


# --- does PSI rest on a trend? ------------------------------------------------------------------


def flag_psi_trends(
    summary: pd.DataFrame, trends: pd.DataFrame, alpha: float = 0.05, test: str = "spearman"
) -> pd.DataFrame:
    """Per bucket: PSI beside the chosen trend test's p-value and whether it lies below ``alpha``.

    ``summary`` is aggregate.summarize's table, ``trends`` :func:`trend_table`'s; ``test`` is one of
    ``slope``, ``pearson``, ``spearman``, ``kendall``. ``direction`` reads the sign of Spearman's rho
    (``primacy``: scores fall towards the end; ``recency``: they rise). ``psi_trend_significant`` is
    False where the p-value is undefined, so a PSI over too few bins is never called significant.
    """
    if test not in TREND_TESTS:
        raise ValueError(f"flag_psi_trends: test must be one of {sorted(TREND_TESTS)}, not '{test}'")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"flag_psi_trends: alpha must lie strictly between 0 and 1, not {alpha}")
    p_column = TREND_TESTS[test]
    merged = summary[[BUCKET, _PSI.column]].merge(
        trends[[BUCKET, BINS_USED, SPEARMAN_RHO, p_column]], on=BUCKET, how="left", validate="one_to_one"
    )
    rho = merged[SPEARMAN_RHO]
    merged[DIRECTION] = np.select([rho < 0, rho > 0], [PRIMACY, RECENCY], default=NO_DIRECTION)
    merged[TEST] = test
    merged[ALPHA] = alpha
    merged[P_VALUE] = merged[p_column]
    merged[PSI_TREND_SIGNIFICANT] = merged[P_VALUE].lt(alpha).fillna(False).astype(bool)
    return merged[list(PSI_TREND_FLAG_COLUMNS)]
