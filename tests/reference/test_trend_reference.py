"""Trend statistics and the thirds test against independent references: statsmodels OLS, numpy,
brute-force Kendall and exact enumeration of the permutation null."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from posir.metrics.aggregate import bin_table
from posir.metrics.trend import permutation_p, thirds_test, trend_table


@pytest.fixture(scope="module")
def noisy_bins() -> pd.DataFrame:
    """Per-query scores falling with position plus noise; bin 3 of Q1 too small to count."""
    rng = np.random.default_rng(7)
    rows = []
    for b in range(8):
        n = 2 if b == 3 else 12
        scores = np.clip(0.8 - 0.4 * (b + 0.5) / 8 + rng.normal(0, 0.15, n), 0, 1)
        rows += [(f"q{b}-{i}", s, "Q1", b) for i, s in enumerate(scores)]
    frame = pd.DataFrame(rows, columns=["qid", "ndcg@10", "length_bucket", "position_bin"])
    return bin_table(frame, ["Q1"], 8)


def _used(bins: pd.DataFrame, minimum: int) -> tuple[np.ndarray, np.ndarray]:
    q1 = bins[(bins["bucket"] == "Q1") & (bins["n_queries"] >= minimum)]
    return ((q1["bin_start"] + q1["bin_end"]) / 2).to_numpy(), q1["ndcg@10"].to_numpy()


def test_slope_and_its_p_value_match_statsmodels_ols(noisy_bins: pd.DataFrame) -> None:
    row = trend_table(noisy_bins, 5).set_index("bucket").loc["Q1"]
    x, y = _used(noisy_bins, 5)
    assert row["bins_used"] == len(x) == 7
    ols = sm.OLS(y, sm.add_constant(x)).fit()
    assert row["slope"] == pytest.approx(ols.params[1], rel=1e-10)
    assert row["intercept"] == pytest.approx(ols.params[0], rel=1e-10)
    assert row["slope_stderr"] == pytest.approx(ols.bse[1], rel=1e-10)
    assert row["slope_p"] == pytest.approx(ols.pvalues[1], rel=1e-8)
    # Pearson's test of r = 0 is the slope's t-test
    assert row["pearson_r"] == pytest.approx(np.corrcoef(x, y)[0, 1], rel=1e-10)
    assert row["pearson_p"] == pytest.approx(ols.pvalues[1], rel=1e-8)


def test_rank_correlations_match_ranks_and_pair_counts(noisy_bins: pd.DataFrame) -> None:
    row = trend_table(noisy_bins, 5).set_index("bucket").loc["Q1"]
    x, y = _used(noisy_bins, 5)
    ranks_x, ranks_y = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    assert row["spearman_rho"] == pytest.approx(np.corrcoef(ranks_x, ranks_y)[0, 1], rel=1e-10)
    # scipy's Spearman p-value is the t-test of Pearson's r on the ranks
    ols = sm.OLS(ranks_y, sm.add_constant(ranks_x)).fit()
    assert row["spearman_p"] == pytest.approx(ols.pvalues[1], rel=1e-8)
    pairs = list(itertools.combinations(range(len(x)), 2))
    concordant = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs)
    assert row["kendall_tau"] == pytest.approx(concordant / len(pairs))
    # no ties among 7 bins: scipy's p is exact, i.e. the share of the 7! orderings with |tau| as large
    taus = [
        sum(np.sign(i - j) * np.sign(p[i] - p[j]) for i, j in pairs) / len(pairs)
        for p in itertools.permutations(range(len(x)))
    ]
    exact = np.mean(np.abs(taus) >= abs(row["kendall_tau"]) - 1e-12)
    assert row["kendall_p"] == pytest.approx(exact, rel=1e-9)


def _hand_permutation_p(a: np.ndarray, b: np.ndarray) -> float:
    """scipy's two-sided definition, min(1, 2 min(P(T >= t), P(T <= t))), over every split of the pooled values."""
    pooled = np.concatenate([a, b])
    observed = a.mean() - b.mean()
    null = []
    for first in itertools.combinations(range(len(pooled)), len(a)):
        mask = np.zeros(len(pooled), dtype=bool)
        mask[list(first)] = True
        null.append(pooled[mask].mean() - pooled[~mask].mean())
    null = np.array(null)
    tolerance = 1e-12
    return min(1.0, 2 * min(np.mean(null >= observed - tolerance), np.mean(null <= observed + tolerance)))


@pytest.mark.parametrize(
    "a,b", [([1.0, 1.0, 0.5, 1.0], [0.0, 0.5, 0.0, 0.33, 0.0]), ([0.2, 0.9, 0.4], [0.3, 0.1, 0.0, 0.6, 0.25, 0.05])]
)
def test_permutation_p_is_exact_when_resamples_cover_every_split(a: list[float], b: list[float]) -> None:
    a_, b_ = np.array(a), np.array(b)
    splits = math.comb(len(a) + len(b), len(a))
    assert permutation_p(a_, b_, n_resamples=10 * splits, seed=0) == pytest.approx(
        _hand_permutation_p(a_, b_), abs=1e-12
    )


def test_randomised_permutation_p_is_seeded_and_close_to_exact() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.uniform(0.3, 1, 9), rng.uniform(0, 0.8, 9)  # C(18, 9) = 48,620 splits
    exact = _hand_permutation_p(a, b)
    first = permutation_p(a, b, n_resamples=4000, seed=5)
    assert first == permutation_p(a, b, n_resamples=4000, seed=5)
    assert first == pytest.approx(exact, abs=0.02)


def test_thirds_test_uses_the_right_queries_per_bucket() -> None:
    rng = np.random.default_rng(11)
    n = 60
    per_query = pd.DataFrame(
        {
            "qid": [f"q{i}" for i in range(n)],
            "ndcg@10": rng.uniform(0, 1, n),
            "length_bucket": np.where(np.arange(n) % 2, "Q1", "Q2"),
            "relative_position": rng.uniform(0, 1, n),
        }
    )
    per_query["position_bin"] = np.minimum((per_query["relative_position"] * 20).astype(int), 19)
    table = thirds_test(per_query, ["Q1", "Q2"], n_resamples=500, seed=2).set_index("bucket")
    for bucket, frame in [("all", per_query), ("Q1", per_query[per_query["length_bucket"] == "Q1"])]:
        first = frame[frame["relative_position"] <= 1 / 3]["ndcg@10"].to_numpy()
        last = frame[frame["relative_position"] > 2 / 3]["ndcg@10"].to_numpy()
        assert table.loc[bucket, "n_first"] == len(first) and table.loc[bucket, "n_last"] == len(last)
        assert table.loc[bucket, "difference"] == pytest.approx(first.mean() - last.mean())
        assert table.loc[bucket, "permutation_p"] == permutation_p(first, last, 500, 2)
