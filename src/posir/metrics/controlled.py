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
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posir.metrics.bootstrap import CHUNK_ENTRIES, BootstrapParams, interval
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.significance import holm

POSITION_INDEX = "position_index"
TARGET_POSITION = "target_position"
NO_VARIATION = "no_variation"
FEWER_THAN_3_POSITIONS = "fewer_than_3_positions"
FEWER_THAN_2_QUERIES = "fewer_than_2_queries"

TEST_COLUMNS = [
    "n_queries",
    "incomplete_queries",
    "n_positions",
    "mean",
    "psi",
    "psi_ci_low",
    "psi_ci_high",
    "psi_bootstrap_bias",
    "page_l_primacy",
    "page_p_primacy",
    "page_l_recency",
    "page_p_recency",
    "page_method",
    "friedman_statistic",
    "friedman_p",
    "note",
    "n_resamples",
    "confidence",
    "interval",
]
POSITION_COLUMNS = [
    POSITION_INDEX,
    TARGET_POSITION,
    "n_queries",
    "mean",
    "ci_low",
    "ci_high",
    "bootstrap_bias",
    "difference_from_first",
    "wilcoxon_statistic",
    "wilcoxon_p",
    "wilcoxon_p_holm",
    "wilcoxon_nonzero",
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
    columns = ["qid", POSITION_INDEX, TARGET_POSITION, "length_target", "natural_length_bucket", "round"]
    joined = per_query.merge(controlled[columns], on="qid", how="inner", validate="one_to_one")
    if len(joined) != len(controlled):
        raise ValueError(f"{len(controlled) - len(joined)} controlled queries have no per-query score")
    target = joined["length_target"]
    joined["length"] = target.where(target.notna() & (target.astype(str) != ""), joined["natural_length_bucket"])
    return joined


def pooled_over_lengths(per_query: pd.DataFrame, metric: str = POSITION_MEASURE.column) -> pd.DataFrame:
    """The ``length="all"`` rows: each query's score at a position averaged over its lengths.

    In insert mode a query is measured at every position of every haystack length; pooling the lengths must keep
    the query the paired unit (one row per query and position), so its lengths are averaged. In move mode a
    query has one length (its natural bucket) and the rows are unchanged.
    """
    keys = [c for c in ("model", "setting") if c in per_query.columns] + ["qid", POSITION_INDEX]
    pooled = per_query.groupby(keys, as_index=False, sort=True)[metric].mean()
    return pooled.assign(length="all")


def position_matrix(frame: pd.DataFrame, metric: str = POSITION_MEASURE.column) -> PositionMatrix:
    """Queries x positions from a long table (``qid``, ``position_index``, ``metric``); incomplete queries left out.

    Raises on a query scored twice at one position (tables of two rounds or models mixed up).
    """
    repeated = frame.duplicated(["qid", POSITION_INDEX])
    if repeated.any():
        example = frame.loc[repeated, "qid"].tolist()[:5]
        raise ValueError(f"{int(repeated.sum())} (query, position) pairs are scored twice, e.g. {example}")
    wide = frame.pivot(index="qid", columns=POSITION_INDEX, values=metric).sort_index().sort_index(axis=1)
    complete = wide.dropna()
    return PositionMatrix(
        [str(q) for q in complete.index],
        [int(p) for p in complete.columns],
        complete.to_numpy(dtype=float),
        len(wide) - len(complete),
    )


def controlled_psi(means: np.ndarray) -> np.ndarray:
    """1 - min/max over the last axis (the positions); NaN where the best mean is not positive."""
    means = np.asarray(means, dtype=float)
    best, worst = means.max(axis=-1), means.min(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(best > 0, 1.0 - worst / np.where(best > 0, best, 1.0), np.nan)


def resampled_means(scores: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Position means of ``resamples`` resamples of the queries (rows), each drawn whole: shape (resamples, k)."""
    n, k = scores.shape
    means = np.empty((resamples, k))
    chunk = max(1, min(resamples, CHUNK_ENTRIES // max(n * k, 1)))
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        picks = rng.integers(0, n, size=(rows, n))
        means[start : start + rows] = scores[picks].mean(axis=1)
    return means


def resampling_rng(seed: int, label: str) -> np.random.Generator:
    """The generator of one group's resamples, fixed by the seed and the group's label."""
    return np.random.default_rng([seed, zlib.crc32(label.encode("utf-8"))])


def page_trend(scores: np.ndarray) -> dict[str, object]:
    """Page's L, one-sided for primacy (scores fall with position) and for recency (they rise)."""
    from scipy.stats import page_trend_test

    k = scores.shape[1]
    recency = page_trend_test(scores, predicted_ranks=list(range(1, k + 1)))
    primacy = page_trend_test(scores, predicted_ranks=list(range(k, 0, -1)))
    return {
        "page_l_primacy": float(primacy.statistic),
        "page_p_primacy": float(primacy.pvalue),
        "page_l_recency": float(recency.statistic),
        "page_p_recency": float(recency.pvalue),
        "page_method": str(primacy.method),
    }


def friedman(scores: np.ndarray) -> tuple[float, float]:
    """(statistic, p) of scipy's Friedman test over the positions (columns)."""
    from scipy.stats import friedmanchisquare

    result = friedmanchisquare(*scores.T)
    return float(result.statistic), float(result.pvalue)


#: A Wilcoxon test not run: the first position itself, or a position no query scores differently at.
NO_WILCOXON = {"wilcoxon_statistic": math.nan, "wilcoxon_p": math.nan, "wilcoxon_nonzero": 0}
NO_PAGE = {
    "page_l_primacy": math.nan,
    "page_p_primacy": math.nan,
    "page_l_recency": math.nan,
    "page_p_recency": math.nan,
    "page_method": "",
}


def wilcoxon_against_first(scores: np.ndarray) -> list[dict[str, float]]:
    """Per position after the first: scipy's two-sided Wilcoxon signed-rank test against the first position.

    :data:`NO_WILCOXON` where no query's score differs (module docstring).
    """
    from scipy.stats import wilcoxon

    results: list[dict[str, float]] = []
    for j in range(1, scores.shape[1]):
        nonzero = int(np.count_nonzero(scores[:, j] != scores[:, 0]))
        if nonzero == 0:
            results.append(dict(NO_WILCOXON))
            continue
        result = wilcoxon(scores[:, j], scores[:, 0], zero_method="wilcox", alternative="two-sided")
        results.append(
            {
                "wilcoxon_statistic": float(result.statistic),
                "wilcoxon_p": float(result.pvalue),
                "wilcoxon_nonzero": nonzero,
            }
        )
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
    matrix: PositionMatrix, params: BootstrapParams, label: str, targets: Sequence[float] | None = None
) -> tuple[dict[str, object], list[dict[str, object]]]:
    """The tests row and the position rows of one group (module docstring); ``label`` seeds its resamples."""
    scores = matrix.scores
    n, k = scores.shape
    if n == 0:
        raise ValueError(f"group {label!r} has no query scored at every position")
    note = untestable_reason(scores)
    point = scores.mean(axis=0)
    boot = resampled_means(scores, params.resamples, resampling_rng(params.seed, label))
    psi_low, psi_high, psi_bias = interval(controlled_psi(boot), controlled_psi(point), params)
    row: dict[str, object] = {
        "n_queries": n,
        "incomplete_queries": matrix.incomplete,
        "n_positions": k,
        "mean": float(point.mean()),
        "psi": float(controlled_psi(point)),
        "psi_ci_low": float(psi_low),
        "psi_ci_high": float(psi_high),
        "psi_bootstrap_bias": float(psi_bias),
    }
    with warnings.catch_warnings():
        # ties make scipy warn about its approximations; what we report about them is in the module docstring
        warnings.simplefilter("ignore", RuntimeWarning)
        row.update(page_trend(scores) if not note else NO_PAGE)
        row["friedman_statistic"], row["friedman_p"] = friedman(scores) if not note else (math.nan, math.nan)
        against_first = (
            [dict(NO_WILCOXON) for _ in range(k - 1)] if note == NO_VARIATION else wilcoxon_against_first(scores)
        )
    row.update(note=note, n_resamples=params.resamples, confidence=params.confidence, interval=params.interval)
    adjusted = holm([r["wilcoxon_p"] for r in against_first])
    tests = [
        {**NO_WILCOXON, "wilcoxon_p_holm": math.nan},
        *({**r, "wilcoxon_p_holm": float(a)} for r, a in zip(against_first, adjusted)),
    ]
    low, high, bias = interval(boot, point, params)
    positions = [
        {
            POSITION_INDEX: position,
            TARGET_POSITION: float(targets[position]) if targets is not None else math.nan,
            "n_queries": n,
            "mean": float(point[j]),
            "ci_low": float(low[j]),
            "ci_high": float(high[j]),
            "bootstrap_bias": float(bias[j]),
            "difference_from_first": float(point[j] - point[0]),
            **tests[j],
        }
        for j, position in enumerate(matrix.positions)
    ]
    return row, positions


def controlled_statistics(
    per_query: pd.DataFrame,
    params: BootstrapParams,
    group_columns: Sequence[str] = ("model", "length"),
    paired_across: Sequence[str] = ("model",),
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
