"""Controlled-position statistics against scipy, statsmodels and hand computation on hand-made scores."""

from __future__ import annotations

import math
import warnings
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from posir.metrics.bootstrap import BootstrapParams
from posir.metrics.controlled import (
    FEWER_THAN_3_POSITIONS,
    NO_VARIATION,
    WILCOXON_ENUMERATED,
    controlled_statistics,
    pooled_over_lengths,
    position_matrix,
    wilcoxon_two_sided,
)
from posir.metrics.measures.psi import psi as controlled_psi

# 8 queries x 4 positions: evidence found worse the later it sits (primacy), with ties and one reversal
SCORES = np.array(
    [
        [1.0, 1.0, 0.5, 0.0],
        [1.0, 0.63, 0.63, 0.43],
        [0.5, 0.39, 0.0, 0.0],
        [1.0, 1.0, 1.0, 1.0],
        [0.63, 0.5, 0.43, 0.39],
        [0.0, 0.39, 0.0, 0.0],
        [1.0, 0.5, 0.63, 0.33],
        [0.43, 0.43, 0.39, 0.0],
    ]
)
TARGETS = [0.0, 1 / 3, 2 / 3, 1.0]


def params(interval: str = "percentile", resamples: int = 2000) -> BootstrapParams:
    return BootstrapParams(resamples=resamples, seed=13, confidence=0.9, interval=interval)


def long_table(scores: np.ndarray, **groups: object) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {**groups, "qid": f"q{i}", "position_index": j, "ndcg@10": float(scores[i, j])}
            for i in range(scores.shape[0])
            for j in range(scores.shape[1])
        ]
    )


def run(scores: np.ndarray, **kwargs):
    tests, positions = controlled_statistics(
        long_table(scores, model="m", length="Q2"),
        params(**kwargs),
        targets=TARGETS[: scores.shape[1]] if scores.shape[1] == 4 else None,
    )
    return tests.iloc[0], positions


def test_page_l_against_scipy_and_by_hand():
    row, _ = run(SCORES)
    k = SCORES.shape[1]
    ranks = np.apply_along_axis(stats.rankdata, 1, SCORES)  # within each query, ties averaged
    # primacy predicts the first position best: predicted ranks k, ..., 1 (rank k = highest score)
    assert row["page_l_primacy"] == pytest.approx(float(np.sum(ranks.sum(axis=0) * np.arange(k, 0, -1))))
    assert row["page_l_recency"] == pytest.approx(float(np.sum(ranks.sum(axis=0) * np.arange(1, k + 1))))
    reversed_columns = stats.page_trend_test(SCORES[:, ::-1])  # scipy's default order, positions reversed
    assert row["page_l_primacy"] == pytest.approx(reversed_columns.statistic)
    assert row["page_p_primacy"] == pytest.approx(reversed_columns.pvalue)
    assert row["page_p_recency"] == pytest.approx(stats.page_trend_test(SCORES).pvalue)
    assert row["page_p_primacy"] < 0.05 < row["page_p_recency"]
    assert row["page_method"] == reversed_columns.method


def test_friedman_against_scipy_and_the_untied_formula():
    row, _ = run(SCORES)
    expected = stats.friedmanchisquare(*SCORES.T)
    assert row["friedman_statistic"] == pytest.approx(expected.statistic)
    assert row["friedman_p"] == pytest.approx(expected.pvalue)
    untied = np.array([[0.9, 0.5, 0.2], [0.8, 0.7, 0.1], [0.3, 0.6, 0.2], [1.0, 0.4, 0.5]])
    n, k = untied.shape
    rank_sums = np.apply_along_axis(stats.rankdata, 1, untied).sum(axis=0)
    by_hand = 12 / (n * k * (k + 1)) * np.sum(rank_sums**2) - 3 * n * (k + 1)
    tests, _ = controlled_statistics(long_table(untied), params(), group_columns=())
    assert tests.iloc[0]["friedman_statistic"] == pytest.approx(by_hand)


def test_wilcoxon_against_the_first_position_with_holm():
    _, positions = run(SCORES)
    raw = [stats.wilcoxon(SCORES[:, j], SCORES[:, 0]).pvalue for j in range(1, 4)]
    assert positions["wilcoxon_p"].tolist()[1:] == pytest.approx(raw)
    assert positions["wilcoxon_p_holm"].tolist()[1:] == pytest.approx(multipletests(raw, method="holm")[1])
    assert math.isnan(positions["wilcoxon_p"].iloc[0])
    differing = [int(np.sum(SCORES[:, j] != SCORES[:, 0])) for j in (1, 2, 3)]
    assert positions["wilcoxon_nonzero"].tolist() == [0, *differing]
    assert positions["target_position"].tolist() == pytest.approx(TARGETS)


def test_position_means_and_controlled_psi():
    row, positions = run(SCORES)
    means = SCORES.mean(axis=0)
    assert positions["mean"].tolist() == pytest.approx(means)
    assert positions["difference_from_first"].tolist() == pytest.approx(means - means[0])
    assert row["psi"] == pytest.approx(1 - means.min() / means.max())
    assert row["mean"] == pytest.approx(SCORES.mean())
    assert math.isnan(float(controlled_psi(np.zeros(4))))


def test_the_bootstrap_resamples_whole_queries_with_every_position():
    row, positions = run(SCORES, resamples=500)
    # the same draws by hand: one index row per resample, used for every position at once
    rng = np.random.default_rng([13, zlib.crc32(b"length=Q2")])
    picks = rng.integers(0, SCORES.shape[0], size=(500, SCORES.shape[0]))
    replicates = SCORES[picks].mean(axis=1)
    low, high = np.percentile(replicates, [5, 95], axis=0)
    assert positions["ci_low"].tolist() == pytest.approx(low)
    assert positions["ci_high"].tolist() == pytest.approx(high)
    psi = 1 - replicates.min(axis=1) / replicates.max(axis=1)
    assert [row["psi_ci_low"], row["psi_ci_high"]] == pytest.approx(np.percentile(psi, [5, 95]))


def test_models_of_one_length_resample_the_same_queries():
    shifted = np.clip(SCORES * 0.5 + 0.25, 0, 1)  # within (0, 1): no clipping of the interval either
    frame = pd.concat([long_table(SCORES * 0.5, model="a", length="Q2"), long_table(shifted, model="b", length="Q2")])
    _, positions = controlled_statistics(frame, params())
    a, b = positions[positions["model"] == "a"], positions[positions["model"] == "b"]
    assert (b["ci_low"].to_numpy() - a["ci_low"].to_numpy()) == pytest.approx(np.full(4, 0.25))
    assert (b["ci_high"].to_numpy() - a["ci_high"].to_numpy()) == pytest.approx(np.full(4, 0.25))


def test_all_equal_scores_are_reported_as_no_variation():
    # BM25 in move mode: each query scores alike at every position, queries differ
    constant = np.repeat(SCORES[:, :1], 4, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert math.isnan(stats.friedmanchisquare(*constant.T).statistic)  # what scipy says: 0/0
    row, positions = run(constant)
    assert row["note"] == NO_VARIATION
    for column in ("page_l_primacy", "page_p_primacy", "page_p_recency", "friedman_statistic", "friedman_p"):
        assert math.isnan(row[column]), column
    assert positions["wilcoxon_p"].isna().all() and positions["wilcoxon_p_holm"].isna().all()
    assert row["psi"] == 0.0 and row["psi_ci_low"] == 0.0 and row["psi_ci_high"] == 0.0
    assert positions["mean"].nunique() == 1


def test_a_position_equal_to_the_first_is_left_out_of_holm():
    scores = SCORES.copy()
    scores[:, 1] = scores[:, 0]
    _, positions = run(scores)
    assert positions["wilcoxon_nonzero"].iloc[1] == 0 and math.isnan(positions["wilcoxon_p"].iloc[1])
    raw = [stats.wilcoxon(scores[:, j], scores[:, 0]).pvalue for j in (2, 3)]
    assert positions["wilcoxon_p_holm"].tolist()[2:] == pytest.approx(multipletests(raw, method="holm")[1])


def test_two_positions_have_no_trend_test_and_incomplete_queries_are_counted():
    row, positions = run(SCORES[:, [0, 3]])
    assert row["note"] == FEWER_THAN_3_POSITIONS
    assert math.isnan(row["page_p_primacy"]) and math.isnan(row["friedman_p"])
    assert positions["wilcoxon_p"].iloc[1] == pytest.approx(stats.wilcoxon(SCORES[:, 3], SCORES[:, 0]).pvalue)
    frame = long_table(SCORES)
    frame = frame[~((frame["qid"] == "q2") & (frame["position_index"] == 1))]
    matrix = position_matrix(frame)
    assert matrix.incomplete == 1 and "q2" not in matrix.qids and matrix.scores.shape == (7, 4)
    with pytest.raises(ValueError, match="scored twice"):
        position_matrix(pd.concat([long_table(SCORES), long_table(SCORES)]))


def test_pooling_the_lengths_keeps_the_query_the_paired_unit():
    """Insert mode measures a query at every position of every length: "all" averages its lengths per position
    (before: pooled rows held each (query, position) once per length and the statistics refused them)."""
    rows = [
        {"model": "m", "setting": "eng-eng", "qid": q, "position_index": p, "length": length, "ndcg@10": value}
        for q, base in (("q1", 0.9), ("q2", 0.5))
        for p in range(3)
        for length, value in ((512, base - 0.1 * p), (1024, base - 0.2 * p))
    ]
    pooled = pooled_over_lengths(pd.DataFrame(rows))
    assert not pooled.duplicated(["model", "setting", "qid", "position_index"]).any()
    assert set(pooled["length"]) == {"all"}
    q1 = pooled[pooled["qid"] == "q1"].set_index("position_index")["ndcg@10"]
    assert q1.round(10).tolist() == [0.9, 0.75, 0.6]
    tests, _ = controlled_statistics(pooled, params(), ("model", "setting", "length"), ("model",))
    assert tests.loc[0, "n_queries"] == 2
    # move mode: one length per query, so the rows are the same scores
    move = pd.DataFrame([r for r in rows if r["length"] == 512])
    same = pooled_over_lengths(move).set_index(["qid", "position_index"])["ndcg@10"]
    assert same.equals(move.set_index(["qid", "position_index"])["ndcg@10"])


NDCG_LEVELS = np.array([0.0, 1.0, 0.5, 0.6309297535714575, 0.43067655807339306, 0.38685280723454163])


@pytest.mark.parametrize("seed", range(4))
def test_wilcoxon_is_scipys_value_for_value(seed: int) -> None:
    """Every branch scipy's wilcoxon(method="auto") takes: the enumerated sign flips (ties or zeros, at most 13
    differences), the exact distribution (no ties, no zeros), the normal approximation (more than 13 with ties)."""
    rng = np.random.default_rng(seed)
    branches = set()
    for trial in range(300):
        n = int(rng.integers(1, 2 * WILCOXON_ENUMERATED + 4))
        continuous = trial % 3 == 0  # no ties: scipy's exact distribution
        x = rng.uniform(0, 1, n) if continuous else rng.choice(NDCG_LEVELS, n)
        y = rng.choice(NDCG_LEVELS, n)
        if np.all(x == y):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = stats.wilcoxon(x, y, zero_method="wilcox", alternative="two-sided")
            ours = wilcoxon_two_sided(x, y)
        assert ours == (float(reference.statistic), float(reference.pvalue)), (n, x, y)
        differences = x - y
        ties = len(np.unique(np.abs(differences))) < n or np.any(differences == 0)
        branches.add("enumerated" if ties and n <= WILCOXON_ENUMERATED else "scipy")
    assert branches == {"enumerated", "scipy"}
