"""Paired comparison of the models of one benchmark and setting (not reported by PosIR).

PosIR (section 5.2, Table 3) and Zeng et al. (section 3.3) compare models by
point values of nDCG@10 and PSI. Two models of a setting answer the *same*
queries, so their differences are paired. For every pair of models, overall
(``all``) and within each length bucket:

* **Fisher's randomisation test** on per-query nDCG@10: under the null the two
  models' scores of a query are exchangeable, so each query's difference keeps
  or flips its sign; ``scipy.stats.permutation_test(permutation_type='samples')``
  with the mean difference as statistic, seeded (exact when ``n_resamples`` is at
  least 2^n, as for tiny buckets). Its randomised form draws each resample's signs
  in a per-query Python loop (a second per thousand queries and thousand
  resamples); :func:`sign_flip_null` draws the same signs from the same generator
  at once, value for value (checked against scipy in the reference tests).
* **Paired t-test** (``scipy.stats.ttest_rel``) beside it, the usual IR companion.
* **Holm's correction** (``statsmodels.stats.multitest.multipletests(method='holm')``)
  over the comparisons of one bucket: a family is every model pair within one bucket,
  each test kind corrected separately.
* A **paired bootstrap interval of the PSI difference** (and of the bucket
  nDCG@10 difference): queries are resampled within buckets with the *same*
  indices for both models, by :func:`posir.metrics.bootstrap.stratified_totals`,
  and PSI keeps its minimum-bin rule (:mod:`posir.metrics.aggregate`).

Why scipy and statsmodels rather than ranx or PyTerrier: both of those
recompute the metrics from runs and qrels with their own evaluators, whereas
the per-query scores here already exist (pytrec_eval, ``metrics.per_query``)
with the bucket and bin labels the families are built from; ranx would add
numba and its own metric code, PyTerrier a Java runtime. scipy is already a
dependency and provides exact/randomised permutation tests and the t-test;
statsmodels provides the reference implementation of Holm's step-down
procedure. Nothing statistical is re-implemented here.

:func:`pairwise_tests` and :func:`psi_differences` return CSV-ready frames;
:func:`posir.tables.pairs.significance_rendering` and
:func:`posir.tables.pairs.psi_difference_rendering` lay them out for Markdown and LaTeX.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from posir.metrics.bootstrap import BootstrapParams, statistics, stratified_totals
from posir.metrics.columns import (
    ALL,
    ALPHA,
    BUCKET,
    CONFIDENCE,
    DIFFERENCE,
    INTERVAL,
    LENGTH_BUCKET,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    N_RESAMPLES,
    POSITION_BIN,
    QID,
    suffixed,
    with_interval,
)
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity
from posir.metrics.resampling import CHUNK_ENTRIES, interval
from posir.metrics.trend import two_sided_permutation_p

# The columns two models' per-query tables must agree on, query by query, to be compared.
POSITION_COLUMNS = (LENGTH_BUCKET, POSITION_BIN)

MEAN_A, MEAN_B, MEAN_DIFFERENCE = "mean_a", "mean_b", "mean_difference"
RANDOMISATION_P, TTEST_P, T_STATISTIC = "randomisation_p", "ttest_p", "t_statistic"
HOLM = "holm"
RANDOMISATION_P_HOLM, TTEST_P_HOLM = suffixed(RANDOMISATION_P, HOLM), suffixed(TTEST_P, HOLM)
SIGNIFICANT = "significant"
#: Per (bucket, model pair): the paired randomisation test and t-test of per-query nDCG@10, Holm-corrected.
SIGNIFICANCE_COLUMNS = (
    BUCKET,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    MEAN_A,
    MEAN_B,
    MEAN_DIFFERENCE,
    RANDOMISATION_P,
    RANDOMISATION_P_HOLM,
    T_STATISTIC,
    TTEST_P,
    TTEST_P_HOLM,
    SIGNIFICANT,
    N_RESAMPLES,
    ALPHA,
)
DEFINED_SHARE, SHARE_A_HIGHER = "defined_share", "share_a_higher"


def paired_columns(column: str) -> tuple[str, ...]:
    """A statistic of both models of a pair, their difference (a - b) with its interval, the share of resamples in
    which both are defined and in which a's is higher."""
    difference = suffixed(column, DIFFERENCE)
    return (
        suffixed(column, "a"),
        suffixed(column, "b"),
        *with_interval(difference),
        suffixed(column, DEFINED_SHARE),
        suffixed(column, SHARE_A_HIGHER),
    )


_PSI = PositionSensitivity()
PSI_DIFFERENCE = suffixed(_PSI.column, DIFFERENCE)
#: Per (bucket, model pair): paired bootstrap intervals of the PSI and bucket nDCG@10 differences.
PSI_DIFFERENCE_COLUMNS = (
    BUCKET,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    *paired_columns(_PSI.column),
    *paired_columns(_PSI.bin_mean),
    N_RESAMPLES,
    CONFIDENCE,
    INTERVAL,
)


class AlignmentError(ValueError):
    """Per-query tables of one setting that do not describe the same queries."""


def align_scores(tables: Mapping[str, pd.DataFrame], metric: str = POSITION_MEASURE.column) -> pd.DataFrame:
    """One row per query (sorted by qid): its length bucket, position bin and each model's ``metric``.

    Raises :class:`AlignmentError` when a table repeats a qid, when the models' qid sets differ
    (naming the model, the counts and a few qids), or when they disagree on a query's bucket or
    bin (tables of different benchmarks). Columns: ``qid``, ``length_bucket``, ``position_bin``,
    then one column per model, named by the model.
    """
    if not tables:
        raise AlignmentError("align_scores: no per-query tables given")
    names = list(tables)
    reference_name = names[0]
    aligned: pd.DataFrame | None = None
    for name in names:
        table = tables[name]
        duplicated = table[QID][table[QID].duplicated()].unique().tolist()
        if duplicated:
            raise AlignmentError(f"model '{name}': {len(duplicated)} qid(s) appear twice, e.g. {duplicated[:5]}")
        frame = table[[QID, *POSITION_COLUMNS, metric]].rename(columns={metric: name}).sort_values(QID)
        frame = frame.reset_index(drop=True)
        if aligned is None:
            aligned = frame
            continue
        missing = sorted(set(aligned[QID]) - set(frame[QID]))
        extra = sorted(set(frame[QID]) - set(aligned[QID]))
        if missing or extra:
            raise AlignmentError(
                f"models '{reference_name}' and '{name}' were scored on different queries: {len(missing)} qid(s) only "
                f"in '{reference_name}' (e.g. {missing[:5]}), {len(extra)} only in '{name}' (e.g. {extra[:5]}); "
                "compare runs of the same benchmark and setting"
            )
        for column in POSITION_COLUMNS:
            differs = aligned[column].astype(str).to_numpy() != frame[column].astype(str).to_numpy()
            if differs.any():
                example = aligned[QID][differs].tolist()[:5]
                raise AlignmentError(
                    f"models '{reference_name}' and '{name}' disagree on {column} for "
                    f"{int(differs.sum())} queries (e.g. {example}): not the same benchmark"
                )
        aligned[name] = frame[name].to_numpy(dtype=float)
    assert aligned is not None
    return aligned


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def _uint32_stream(bit_generator):
    """A function giving the next ``k`` 32-bit outputs of ``bit_generator`` as numpy's ``next_uint32`` gives them:
    each 64-bit output split low half first (little-endian memory order), an unused high half kept for the next
    call."""
    carry = np.empty(0, dtype=np.uint32)

    def take(k: int) -> np.ndarray:
        nonlocal carry
        needed = k - len(carry)
        halves = bit_generator.random_raw((needed + 1) // 2).astype("<u8").view("<u4")
        stream = np.concatenate([carry, halves[:needed]])
        carry = halves[needed:]
        return stream

    return take


def sign_flip_null(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The null distribution of scipy's paired ``permutation_test`` of mean(a - b) (``permutation_type="samples"``,
    seeded), its ``null_distribution`` value for value, without scipy's per-query Python loop; not for the exact
    test.

    scipy draws a resample's pairings with ``Generator.permuted`` over a (batch, queries, 2) index array: one
    Fisher-Yates step per query, ``next_uint32 & 1`` deciding whether the pair swaps (0 swaps), the whole batch
    drawn even for the last, shorter one. This draws the same 32-bit outputs from the same generator, lays the
    swapped pairs out in the memory order scipy's statistic reads them in (so that every mean is summed in the
    same order).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = len(a)
    if n_resamples >= 2**n:
        raise ValueError(f"{n_resamples} resamples of {n} pairs: scipy enumerates every pairing (the exact test)")
    batch = min(max(1, CHUNK_ENTRIES // max(2 * n, 1)), n_resamples)
    take = _uint32_stream(np.random.default_rng(seed).bit_generator)
    difference = a - b
    null = np.empty(n_resamples)
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        keep = (take(batch * n).reshape(batch, n)[:rows] & 1).astype(bool)
        # scipy stacks the queries' pairings along axis 0 and subtracts through a swap of the axes, so its x - y is
        # laid out query-major (Fortran order); the same layout makes numpy sum every mean in the same order
        keep_by_query = np.ascontiguousarray(keep.T)
        differences = np.where(keep_by_query, difference[:, None], -difference[:, None]).T
        null[start : start + rows] = np.mean(differences, axis=-1)
    return null


def sign_flip_p(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> float:
    """Two-sided p-value of Fisher's paired randomisation test of mean(a - b), scipy's ``permutation_test``'s
    (``permutation_type="samples"``, seeded) value for value: its exact test where ``n_resamples`` covers every
    pairing, else :func:`sign_flip_null` counted as scipy counts (a relative tolerance of 100 eps around the
    observed mean, one added to both counts)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if n_resamples >= 2 ** len(a):
        return two_sided_permutation_p(a, b, _mean_difference, "samples", n_resamples, seed)
    null = sign_flip_null(a, b, n_resamples, seed)
    observed = _mean_difference(a, b)
    gamma = abs(np.finfo(float).eps * 100 * observed)
    less = (np.count_nonzero(null <= observed + gamma) + 1) / (n_resamples + 1)
    greater = (np.count_nonzero(null >= observed - gamma) + 1) / (n_resamples + 1)
    return float(np.clip(min(less, greater) * 2, 0.0, 1.0))


def randomisation_p(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> float:
    """Two-sided p-value of Fisher's paired randomisation test of mean(a - b) (scipy's permutation_test)."""
    if len(a) == 0:
        return math.nan
    # A query both models score alike adds 0 to every resample's sum of differences, so it changes only the
    # scale of the mean, never the p-value: leaving ties out keeps the test and saves most of its time
    # (nDCG@10 ties are common: both models rank the positive first).
    differs = a != b
    if differs.sum() < 2:
        return 1.0  # flipping the sign of one difference (or none) reaches the observed |mean| every time
    a, b = a[differs], b[differs]
    return sign_flip_p(a, b, n_resamples, seed)


def family_resamples(resamples: int, comparisons: int, alpha: float) -> int:
    """At least ``resamples``, and enough that Holm over ``comparisons`` tests can reach ``alpha``.

    A two-sided randomisation p-value is at least 2 / (resamples + 1) (twice the smaller one-sided one,
    as scipy computes it); Holm multiplies the smallest by the family size, so with too few resamples no
    difference could ever be significant. Twice the bare minimum leaves room for a few resamples as
    extreme as the observed difference. (Counting the floor as 1 / (resamples + 1) put it exactly at
    ``alpha`` for 13 models, and no pair of a 13-model setting could be significant.)
    """
    return max(resamples, math.ceil(2 * 2 * comparisons / alpha) - 1)


def paired_t(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(t, two-sided p) of scipy's ttest_rel; NaN with fewer than two queries or identical scores."""
    from scipy.stats import ttest_rel

    if len(a) < 2 or np.all(a == b):
        return math.nan, math.nan
    with warnings.catch_warnings():
        # constant non-zero differences give t = inf; scipy warns, the value is what we want
        warnings.simplefilter("ignore", RuntimeWarning)
        result = ttest_rel(a, b)
    return float(result.statistic), float(result.pvalue)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm-adjusted p-values (statsmodels), NaN kept in place and left out of the family."""
    from statsmodels.stats.multitest import multipletests

    values = np.asarray(p_values, dtype=float)
    adjusted = np.full(values.shape, np.nan)
    finite = np.isfinite(values)
    if finite.any():
        adjusted[finite] = multipletests(values[finite], method="holm")[1]
    return adjusted


def _groups(aligned: pd.DataFrame, buckets: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    return [(ALL, aligned)] + [(b, aligned[aligned[LENGTH_BUCKET] == b]) for b in buckets]


def pairwise_tests(
    aligned: pd.DataFrame,
    models: Sequence[str],
    buckets: Sequence[str],
    n_resamples: int = 9999,
    seed: int = 13,
    alpha: float = 0.05,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Every pair of ``models`` (in the given order, a before b), per bucket and overall, on ``aligned`` scores.

    ``aligned`` is :func:`align_scores`'s table. Columns (``SIGNIFICANCE_COLUMNS``):
    ``mean_difference`` is mean(a - b); ``randomisation_p`` / ``ttest_p`` are two-sided; ``*_holm`` are
    Holm-adjusted over the pairs of the row's bucket; ``significant`` is ``randomisation_p_holm < alpha``. A
    bucket with no queries gives NaN tests.
    """
    if len(models) < 2:
        raise ValueError(f"pairwise_tests: need at least two models, got {list(models)}")
    absent = [m for m in models if m not in aligned.columns]
    if absent:
        raise ValueError(f"pairwise_tests: no score column for model(s) {absent}; run align_scores on their tables")
    rows = []
    for name, frame in _groups(aligned, buckets):
        family = []
        for model_a, model_b in combinations(models, 2):
            a = frame[model_a].to_numpy(dtype=float)
            b = frame[model_b].to_numpy(dtype=float)
            t_statistic, t_p = paired_t(a, b)
            family.append(
                {
                    BUCKET: name,
                    MODEL_A: model_a,
                    MODEL_B: model_b,
                    N_QUERIES: int(len(a)),
                    MEAN_A: float(a.mean()) if len(a) else math.nan,
                    MEAN_B: float(b.mean()) if len(b) else math.nan,
                    MEAN_DIFFERENCE: float((a - b).mean()) if len(a) else math.nan,
                    RANDOMISATION_P: randomisation_p(a, b, n_resamples, seed),
                    T_STATISTIC: t_statistic,
                    TTEST_P: t_p,
                }
            )
            if progress is not None:
                progress(1)
        for column in (RANDOMISATION_P, TTEST_P):
            for row, adjusted in zip(family, holm([r[column] for r in family])):
                row[suffixed(column, HOLM)] = float(adjusted)
        for row in family:
            row.update({SIGNIFICANT: bool(row[RANDOMISATION_P_HOLM] < alpha), N_RESAMPLES: n_resamples, ALPHA: alpha})
        rows += family
    return pd.DataFrame(rows, columns=list(SIGNIFICANCE_COLUMNS))


# --- paired bootstrap of PSI differences -------------------------------------------------------


def _per_query(aligned: pd.DataFrame, model: str, metric: str) -> pd.DataFrame:
    return aligned[[QID, *POSITION_COLUMNS]].assign(**{metric: aligned[model].to_numpy(dtype=float)})


def psi_differences(
    aligned: pd.DataFrame,
    models: Sequence[str],
    buckets: Sequence[str],
    n_bins: int,
    min_bin_queries: int,
    params: BootstrapParams,
    metric: str = POSITION_MEASURE.column,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Paired stratified bootstrap of PSI(a) - PSI(b) and bin-mean nDCG(a) - nDCG(b), every pair, every bucket.

    Both models of a resample see the same queries (``stratified_totals`` draws indices from the
    seed, the bucket and its size only, and ``aligned`` orders both by qid), so the interval
    reflects the models' disagreement, not the query sample twice. Columns: ``bucket``,
    ``model_a``, ``model_b``, ``n_queries``, ``psi_a``, ``psi_b``, ``psi_difference`` (a - b) with
    ``_ci_low``/``_ci_high`` and ``_bootstrap_bias`` (resample mean - point), ``psi_defined_share``
    (resamples where both PSIs exist), ``share_a_higher`` (resamples with PSI(a) > PSI(b)), the
    same for ``ndcg@10_bin_mean`` (PosIR's bucket score), ``n_resamples``, ``confidence``, ``interval``.
    """
    position = PositionSensitivity(min_bin_queries=min_bin_queries)
    totals = {m: stratified_totals(_per_query(aligned, m, metric), buckets, n_bins, params, metric) for m in models}
    rows = []
    for bucket in [ALL, *buckets]:
        stats = {}
        for m in models:
            observed, resampled = totals[m][bucket]
            stats[m] = (statistics(observed, min_bin_queries), statistics(resampled, min_bin_queries))
        for model_a, model_b in combinations(models, 2):
            (point_a, boot_a), (point_b, boot_b) = stats[model_a], stats[model_b]
            row: dict[str, object] = {
                BUCKET: bucket,
                MODEL_A: model_a,
                MODEL_B: model_b,
                N_QUERIES: int(totals[model_a][bucket][0].counts.sum()),
            }
            for key, column in (("psi", position.column), ("bin_mean", f"{metric}_bin_mean")):
                point = float(point_a[key][0] - point_b[key][0])
                replicates = boot_a[key] - boot_b[key]
                defined = np.isfinite(replicates)
                low, high, _ = interval(replicates, np.asarray(point), params, position.difference_bounds)
                bias = float(replicates[defined].mean() - point) if defined.any() else math.nan
                higher = float((replicates[defined] > 0).mean()) if defined.any() else math.nan
                values = (point_a[key][0], point_b[key][0], point, low, high, bias, defined.mean(), higher)
                row.update(zip(paired_columns(column), map(float, values)))
            row.update({N_RESAMPLES: params.resamples, CONFIDENCE: params.confidence, INTERVAL: params.interval})
            rows.append(row)
            if progress is not None:
                progress(1)
    return pd.DataFrame(rows)
