"""Statistics of controlled-position runs: one query measured at every position (not reported by PosIR).

In a controlled family (:mod:`posir.controlled`) each query has an nDCG@10 at
every target position, so positions are *repeated measures* of the same
queries, not independent groups as PosIR's natural position bins are
(section 5.2). Per model and length (the caller's groups):

* **position means** with **paired bootstrap** intervals: queries are resampled
  with replacement and a resampled query brings its scores at *every* position,
  so the pairing across positions is kept; the resampled queries depend only on
  the seed, the group's label without the model and the query count, so two
  models of one length are paired too (as in :mod:`posir.metrics.bootstrap`);
  intervals are :func:`posir.metrics.bootstrap.interval`'s (``centered`` or ``percentile``);
* **controlled PSI** = 1 - min/max of the position means (Zeng et al., section
  3.3, over positions instead of bins), with the same bootstrap;
* **Page's L test** of a monotone trend over the ordered positions
  (``scipy.stats.page_trend_test``), one-sided both ways: *primacy* (scores
  fall as the evidence moves towards the end, PosIR section 5.2's common
  pattern) and *recency* (they rise, its NV-Embed-v2);
* the **Friedman test** of any difference between positions (``scipy.stats.friedmanchisquare``);
* **Wilcoxon signed-rank** tests of each position against the first
  (``scipy.stats.wilcoxon``, zero differences discarded as in Wilcoxon's
  original test), Holm-corrected over the positions of a group
  (``statsmodels.stats.multitest.multipletests``, via :func:`posir.metrics.significance.holm`).

Edge cases, and what is reported:

* every query scores alike at every position (BM25 in move mode, where the
  bag of words does not change): scipy's Friedman statistic is 0/0 (NaN with a
  warning) and Page's L sits at its null mean with a meaningless p; Wilcoxon has
  no non-zero difference (scipy 1.17 returns p = 1, earlier releases raised).
  There is nothing to test, so all p-values are NaN, ``note`` says
  ``no_variation``, the position means are equal and PSI is 0;
* a position whose scores all equal the first position's: its Wilcoxon p is
  NaN (``wilcoxon_nonzero`` = 0) and it is left out of the Holm family;
* fewer than three positions (Page and Friedman need three) or fewer than two
  queries: those tests are NaN and ``note`` says why;
* a best position mean of 0: PSI is NaN (undefined, Zeng et al. Eq. 1);
* a query lacking a position is left out of its group (``incomplete_queries``):
  every test here needs complete blocks.

scipy's Page test does not correct for ties (nDCG@10 ties often: rank 1 at
several positions); scipy documents its exact p-values as conservative under ties.
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
    BOOTSTRAP_BIAS,
    CI_HIGH,
    CI_LOW,
    CONFIDENCE,
    INTERVAL,
    MEAN,
    MODEL,
    N_QUERIES,
    N_RESAMPLES,
    QID,
    SETTING,
    suffixed,
    with_interval,
)
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity, psi
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import generator, interval
from posir.metrics.resampling import resampled_means as _resampled_means
from posir.metrics.significance import holm

POSITION_INDEX = "position_index"
TARGET_POSITION = "target_position"
LENGTH = "length"  # a group's length: the haystack length (insert mode) or the natural length bucket (move mode)
LENGTH_TARGET, NATURAL_LENGTH_BUCKET, ROUND = "length_target", "natural_length_bucket", "round"
VARIANT = "variant"  # the family's variant a score comes from (one per position, length and round)
NO_VARIATION = "no_variation"
FEWER_THAN_3_POSITIONS = "fewer_than_3_positions"
FEWER_THAN_2_QUERIES = "fewer_than_2_queries"

_PSI = PositionSensitivity()
INCOMPLETE_QUERIES, N_POSITIONS = "incomplete_queries", "n_positions"
PAGE_L_PRIMACY, PAGE_P_PRIMACY = "page_l_primacy", "page_p_primacy"
PAGE_L_RECENCY, PAGE_P_RECENCY, PAGE_METHOD = "page_l_recency", "page_p_recency", "page_method"
FRIEDMAN_STATISTIC, FRIEDMAN_P = "friedman_statistic", "friedman_p"
NOTE = "note"
TEST_COLUMNS = [
    N_QUERIES,
    INCOMPLETE_QUERIES,
    N_POSITIONS,
    MEAN,
    *with_interval(_PSI.column),
    PAGE_L_PRIMACY,
    PAGE_P_PRIMACY,
    PAGE_L_RECENCY,
    PAGE_P_RECENCY,
    PAGE_METHOD,
    FRIEDMAN_STATISTIC,
    FRIEDMAN_P,
    NOTE,
    N_RESAMPLES,
    CONFIDENCE,
    INTERVAL,
]
DIFFERENCE_FROM_FIRST = "difference_from_first"
WILCOXON_STATISTIC, WILCOXON_P, WILCOXON_NONZERO = "wilcoxon_statistic", "wilcoxon_p", "wilcoxon_nonzero"
WILCOXON_P_HOLM = suffixed(WILCOXON_P, "holm")
POSITION_COLUMNS = [
    POSITION_INDEX,
    TARGET_POSITION,
    N_QUERIES,
    MEAN,
    CI_LOW,
    CI_HIGH,
    BOOTSTRAP_BIAS,
    DIFFERENCE_FROM_FIRST,
    WILCOXON_STATISTIC,
    WILCOXON_P,
    WILCOXON_P_HOLM,
    WILCOXON_NONZERO,
]


@dataclass(frozen=True)
class PositionMatrix:
    """Scores of complete queries: ``scores[i, j]`` is query ``qids[i]`` at position ``positions[j]``."""

    qids: list[str]
    positions: list[int]
    scores: np.ndarray
    incomplete: int


def with_positions(per_query: pd.DataFrame, controlled: pd.DataFrame) -> pd.DataFrame:
    """One variant's per-query scores joined with its ``controlled.tsv`` rows, with the group column ``length``.

    ``length`` is the haystack length in insert mode (``length_target``) and the
    positive's natural length bucket in move mode, where the document's length
    does not change (PosIR section 5.1's Q1-Q4). Concatenate the results of all
    variants of a model (and add a ``model`` column) for :func:`controlled_statistics`.
    """
    # the per-query table (posir.steps.evaluation.score_run) already holds the achieved relative_position
    columns = [QID, POSITION_INDEX, TARGET_POSITION, LENGTH_TARGET, NATURAL_LENGTH_BUCKET, ROUND]
    joined = per_query.merge(controlled[columns], on=QID, how="inner", validate="one_to_one")
    if len(joined) != len(controlled):
        raise ValueError(f"{len(controlled) - len(joined)} controlled queries have no per-query score")
    target = joined[LENGTH_TARGET]
    joined[LENGTH] = target.where(target.notna() & (target.astype(str) != ""), joined[NATURAL_LENGTH_BUCKET])
    return joined


def pooled_over_lengths(per_query: pd.DataFrame, metric: str = POSITION_MEASURE.column) -> pd.DataFrame:
    """The ``length="all"`` rows: each query's score at a position averaged over its lengths.

    In insert mode a query is measured at every position of every haystack length; pooling the lengths must keep
    the query the paired unit (one row per query and position), so its lengths are averaged. In move mode a
    query has one length (its natural bucket) and the rows are unchanged.
    """
    keys = [c for c in (MODEL, SETTING) if c in per_query.columns] + [QID, POSITION_INDEX]
    pooled = per_query.groupby(keys, as_index=False, sort=True)[metric].mean()
    return pooled.assign(**{LENGTH: ALL})


def position_matrix(frame: pd.DataFrame, metric: str = POSITION_MEASURE.column) -> PositionMatrix:
    """Queries x positions from a long table (``qid``, ``position_index``, ``metric``); incomplete queries left out.

    Raises on a query scored twice at one position (tables of two rounds or models mixed up).
    """
    repeated = frame.duplicated([QID, POSITION_INDEX])
    if repeated.any():
        example = frame.loc[repeated, QID].tolist()[:5]
        raise ValueError(f"{int(repeated.sum())} (query, position) pairs are scored twice, e.g. {example}")
    wide = frame.pivot(index=QID, columns=POSITION_INDEX, values=metric).sort_index().sort_index(axis=1)
    complete = wide.dropna()
    return PositionMatrix(
        [str(q) for q in complete.index],
        [int(p) for p in complete.columns],
        complete.to_numpy(dtype=float),
        len(wide) - len(complete),
    )


def page_trend(scores: np.ndarray) -> dict[str, object]:
    """Page's L, one-sided for primacy (scores fall with position) and for recency (they rise)."""
    from scipy.stats import page_trend_test

    k = scores.shape[1]
    recency = page_trend_test(scores, predicted_ranks=list(range(1, k + 1)))
    primacy = page_trend_test(scores, predicted_ranks=list(range(k, 0, -1)))
    return {
        PAGE_L_PRIMACY: float(primacy.statistic),
        PAGE_P_PRIMACY: float(primacy.pvalue),
        PAGE_L_RECENCY: float(recency.statistic),
        PAGE_P_RECENCY: float(recency.pvalue),
        PAGE_METHOD: str(primacy.method),
    }


def friedman(scores: np.ndarray) -> tuple[float, float]:
    """(statistic, p) of scipy's Friedman test over the positions (columns)."""
    from scipy.stats import friedmanchisquare

    result = friedmanchisquare(*scores.T)
    return float(result.statistic), float(result.pvalue)


#: A Wilcoxon test not run: the first position itself, or a position no query scores differently at.
NO_WILCOXON = {WILCOXON_STATISTIC: math.nan, WILCOXON_P: math.nan, WILCOXON_NONZERO: 0}
NO_PAGE: dict[str, object] = {
    PAGE_L_PRIMACY: math.nan,
    PAGE_P_PRIMACY: math.nan,
    PAGE_L_RECENCY: math.nan,
    PAGE_P_RECENCY: math.nan,
    PAGE_METHOD: "",
}


#: scipy's ``wilcoxon(method="auto")`` enumerates every sign flip of at most this many differences when they tie or
#: hold zeros (its permutation test, exact below 2**13 resamples); larger samples go to the normal approximation.
WILCOXON_ENUMERATED = 13


def wilcoxon_two_sided(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(statistic, p) of scipy's two-sided ``wilcoxon(x, y, zero_method="wilcox")``, value for value.

    Where scipy enumerates the sign flips (at most :data:`WILCOXON_ENUMERATED` differences that tie or hold zeros)
    it calls the rank sum once per flip, 2**n Python calls (0.4 s for 12 queries); here the 2**m rank sums of the m
    non-zero differences are one matrix product, each a sum of halves, exact in floating point, counted as scipy
    counts (zeros double every count and the total alike). Every other case is scipy's own call.
    """
    from scipy.stats import rankdata, wilcoxon

    differences = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    nonzero = differences[differences != 0]
    ties_or_zeros = len(nonzero) < len(differences) or len(np.unique(np.abs(nonzero))) < len(nonzero)
    if len(differences) > WILCOXON_ENUMERATED or not ties_or_zeros or len(nonzero) == 0:
        result = wilcoxon(x, y, zero_method="wilcox", alternative="two-sided")
        return float(result.statistic), float(result.pvalue)
    ranks = rankdata(np.abs(nonzero))
    r_plus, r_minus = float(np.sum((nonzero > 0) * ranks)), float(np.sum((nonzero < 0) * ranks))
    flips = (np.arange(2 ** len(nonzero))[:, None] >> np.arange(len(nonzero))) & 1
    null = flips @ ranks
    gamma = abs(np.finfo(float).eps * 100 * r_plus)
    less = np.count_nonzero(null <= r_plus + gamma) / len(null)
    greater = np.count_nonzero(null >= r_plus - gamma) / len(null)
    return min(r_plus, r_minus), float(np.clip(min(less, greater) * 2, 0.0, 1.0))


def wilcoxon_against_first(scores: np.ndarray) -> list[dict[str, float]]:
    """Per position after the first: scipy's two-sided Wilcoxon signed-rank test against the first position
    (:func:`wilcoxon_two_sided`).

    :data:`NO_WILCOXON` where no query's score differs (module docstring).
    """
    results: list[dict[str, float]] = []
    for j in range(1, scores.shape[1]):
        nonzero = int(np.count_nonzero(scores[:, j] != scores[:, 0]))
        if nonzero == 0:
            results.append(dict(NO_WILCOXON))
            continue
        statistic, p = wilcoxon_two_sided(scores[:, j], scores[:, 0])
        results.append({WILCOXON_STATISTIC: statistic, WILCOXON_P: p, WILCOXON_NONZERO: nonzero})
    return results


def untestable_reason(scores: np.ndarray) -> str:
    """Why Page's and Friedman's tests are not run on these scores ("" when they are)."""
    n, k = scores.shape
    if k < 3:
        return FEWER_THAN_3_POSITIONS
    if n < 2:
        return FEWER_THAN_2_QUERIES
    if np.all(scores == scores[:, :1]):
        return NO_VARIATION
    return ""


def group_statistics(
    matrix: PositionMatrix,
    params: BootstrapParams,
    label: str,
    targets: Sequence[float] | None = None,
    level_columns: tuple[str, str] = (POSITION_INDEX, TARGET_POSITION),
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """The tests row and the position rows of one group (module docstring); ``label`` seeds its resamples.

    The positions may be any ordered levels of a repeated measure (a spread family's distance levels,
    :mod:`posir.metrics.distance`): ``level_columns`` name a level row's index and target columns."""
    scores = matrix.scores
    n, k = scores.shape
    if n == 0:
        raise ValueError(f"group {label!r} has no query scored at every position")
    note = untestable_reason(scores)
    point = scores.mean(axis=0)
    boot = _resampled_means(scores, params.resamples, generator(params.seed, label))
    point_psi = psi(point)
    psi_low, psi_high, psi_bias = interval(psi(boot), point_psi, params, _PSI.bounds)
    row: dict[str, object] = {
        N_QUERIES: n,
        INCOMPLETE_QUERIES: matrix.incomplete,
        N_POSITIONS: k,
        MEAN: float(point.mean()),
    }
    row.update(zip(with_interval(_PSI.column), map(float, (point_psi, psi_low, psi_high, psi_bias))))
    with warnings.catch_warnings():
        # ties make scipy warn about its approximations; what we report about them is in the module docstring
        warnings.simplefilter("ignore", RuntimeWarning)
        row.update(page_trend(scores) if not note else NO_PAGE)
        row[FRIEDMAN_STATISTIC], row[FRIEDMAN_P] = friedman(scores) if not note else (math.nan, math.nan)
        against_first = (
            [dict(NO_WILCOXON) for _ in range(k - 1)] if note == NO_VARIATION else wilcoxon_against_first(scores)
        )
    row.update({NOTE: note, N_RESAMPLES: params.resamples, CONFIDENCE: params.confidence, INTERVAL: params.interval})
    adjusted = holm([r[WILCOXON_P] for r in against_first])
    tests = [
        {**NO_WILCOXON, WILCOXON_P_HOLM: math.nan},
        *({**r, WILCOXON_P_HOLM: float(a)} for r, a in zip(against_first, adjusted)),
    ]
    low, high, bias = interval(boot, point, params, POSITION_MEASURE.bounds)
    index_column, target_column = level_columns
    positions = [
        {
            index_column: position,
            target_column: float(targets[position]) if targets is not None else math.nan,
            N_QUERIES: n,
            MEAN: float(point[j]),
            CI_LOW: float(low[j]),
            CI_HIGH: float(high[j]),
            BOOTSTRAP_BIAS: float(bias[j]),
            DIFFERENCE_FROM_FIRST: float(point[j] - point[0]),
            **tests[j],
        }
        for j, position in enumerate(matrix.positions)
    ]
    return row, positions


def controlled_statistics(
    per_query: pd.DataFrame,
    params: BootstrapParams,
    group_columns: Sequence[str] = (MODEL, LENGTH),
    paired_across: Sequence[str] = (MODEL,),
    metric: str = POSITION_MEASURE.column,
    targets: Sequence[float] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per group (e.g. model and length): a tests table and a positions table (module docstring).

    ``per_query`` is long: ``qid``, ``position_index``, ``metric`` and the
    ``group_columns``. ``paired_across`` names group columns left out of the
    resampling seed, so groups differing only there (models of one length)
    resample the same queries. ``targets`` maps a position index to its target
    relative position (the family's ``params.targets``). Returns ``(tests,
    positions)``: ``tests`` has the group columns and :data:`TEST_COLUMNS`,
    ``positions`` the group columns and :data:`POSITION_COLUMNS`.
    """
    groups = list(group_columns)
    test_rows: list[dict[str, object]] = []
    position_rows: list[dict[str, object]] = []
    for values, frame in per_query.groupby(groups, sort=True) if groups else [((), per_query)]:
        values = values if isinstance(values, tuple) else (values,)
        keys = dict(zip(groups, values))
        label = "|".join(f"{g}={v}" for g, v in keys.items() if g not in paired_across)
        row, positions = group_statistics(position_matrix(frame, metric), params, label, targets)
        test_rows.append({**keys, **row})
        position_rows += [{**keys, **p} for p in positions]
    return (
        pd.DataFrame(test_rows, columns=[*groups, *TEST_COLUMNS]),
        pd.DataFrame(position_rows, columns=[*groups, *POSITION_COLUMNS]),
    )


def family_statistics(
    per_query: pd.DataFrame, params: BootstrapParams, targets: Sequence[float] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A controlled family's tests and positions per model, setting and length, the lengths pooled first (the
    ``length="all"`` rows: each query's score at a position averaged over its lengths). ``per_query`` holds every
    variant's with_positions rows of every model and setting (``model``, ``setting`` columns); models of one
    length resample the same queries (paired)."""
    groups = (MODEL, SETTING, LENGTH)
    tests, positions = controlled_statistics(per_query, params, groups, (MODEL,), targets=targets)
    overall, overall_positions = controlled_statistics(
        pooled_over_lengths(per_query), params, groups, (MODEL,), targets=targets
    )
    return pd.concat([overall, tests], ignore_index=True), pd.concat([overall_positions, positions], ignore_index=True)
