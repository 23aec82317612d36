"""Trend statistics and the first-vs-last-third test on hand-made tables (posir.metrics.trend)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from posir.metrics.aggregate import bin_table, summarize
from posir.metrics.trend import cliffs_delta, cohens_d, flag_psi_trends, thirds_test, trend_table


def _per_query(rows: list[tuple[str, float, str, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["qid", "ndcg@10", "length_bucket", "position_bin"])
    return frame.assign(relative_position=(frame["position_bin"] + 0.5) / 5)


def _linear_table(n_bins: int = 5) -> pd.DataFrame:
    """Q1: bin b holds two queries scoring 0.9 - 0.5 * centre(b); bin 4 also an outlier alone in Q2."""
    rows = []
    for b in range(n_bins):
        centre = (b + 0.5) / n_bins
        rows += [(f"q{b}a", 0.9 - 0.5 * centre, "Q1", b), (f"q{b}b", 0.9 - 0.5 * centre, "Q1", b)]
    return _per_query(rows)


def test_a_linear_decline_gives_its_slope_and_perfect_rank_correlations() -> None:
    per_query = _linear_table()
    trends = trend_table(bin_table(per_query, ["Q1"], 5), min_bin_queries=1).set_index("bucket")
    q1 = trends.loc["Q1"]
    assert q1["bins_used"] == 5
    assert q1["slope"] == pytest.approx(-0.5) and q1["intercept"] == pytest.approx(0.9)
    assert q1["pearson_r"] == pytest.approx(-1.0)
    assert q1["spearman_rho"] == pytest.approx(-1.0) and q1["kendall_tau"] == pytest.approx(-1.0)
    assert q1["slope_p"] < 1e-6


def test_bins_below_the_minimum_are_left_out_exactly_as_psi_leaves_them_out() -> None:
    per_query = _linear_table()
    # bin 4 keeps a single query, far off the line
    per_query = per_query[per_query["qid"] != "q4b"].copy()
    per_query.loc[per_query["qid"] == "q4a", "ndcg@10"] = 1.0
    bins = bin_table(per_query, ["Q1"], 5)
    for minimum in (0, 1, 2, 3):
        trends = trend_table(bins, minimum).set_index("bucket")
        summary = summarize(per_query, bins, minimum).set_index("bucket")
        for bucket in ("Q1", "all"):
            assert trends.loc[bucket, "bins_used"] == summary.loc[bucket, "psi_bins_used"]
            assert trends.loc[bucket, "bins_skipped"] == summary.loc[bucket, "psi_bins_skipped"]
    # without the one-query bin the remaining four lie on the line again
    two = trend_table(bins, 2).set_index("bucket").loc["Q1"]
    assert two["bins_used"] == 4 and two["bins_skipped"] == "4"
    assert two["slope"] == pytest.approx(-0.5)
    one = trend_table(bins, 1).set_index("bucket").loc["Q1"]
    assert one["bins_used"] == 5 and one["slope"] > -0.5


def test_too_few_bins_or_flat_means_give_no_trend() -> None:
    flat = _per_query([(f"q{b}", 0.5, "Q1", b) for b in range(5)])
    short = _per_query([("a", 0.2, "Q1", 0), ("b", 0.8, "Q1", 4)])
    for per_query in (flat, short):
        row = trend_table(bin_table(per_query, ["Q1"], 5), 1).set_index("bucket").loc["Q1"]
        assert math.isnan(row["slope"]) and math.isnan(row["spearman_p"])


def test_cohens_d_by_hand() -> None:
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 3.0, 4.0, 5.0])
    pooled = math.sqrt((2 * 1.0 + 3 * (5.0 / 3.0)) / 5)  # variances 1 and 5/3
    assert cohens_d(a, b) == pytest.approx((2.0 - 3.5) / pooled)
    assert math.isnan(cohens_d(np.array([1.0, 1.0]), np.array([1.0, 1.0])))


def test_cliffs_delta_counts_pairs_with_ties() -> None:
    a, b = np.array([1.0, 0.5, 0.5, 0.0]), np.array([0.5, 0.0, 0.0])
    greater = sum(x > y for x in a for y in b)
    less = sum(x < y for x in a for y in b)
    assert cliffs_delta(a, b) == pytest.approx((greater - less) / (len(a) * len(b)))
    assert cliffs_delta(np.array([1.0]), np.array([0.0])) == 1.0


def test_thirds_cut_at_closed_upper_edges() -> None:
    per_query = pd.DataFrame(
        {
            "qid": list("abcdef"),
            "ndcg@10": [1.0, 1.0, 0.5, 0.5, 0.0, 0.0],
            "length_bucket": ["Q1"] * 6,
            "relative_position": [0.0, 1 / 3, 0.5, 2 / 3, 0.7, 1.0],
            "position_bin": [0, 6, 10, 13, 14, 19],
        }
    )
    row = thirds_test(per_query, ["Q1"], n_resamples=100).set_index("bucket").loc["Q1"]
    assert (row["n_first"], row["n_last"]) == (2, 2)  # 1/3 is first, 2/3 is middle
    assert row["difference"] == 1.0 and row["cliffs_delta"] == 1.0


def test_flag_uses_the_chosen_test_and_never_flags_an_undefined_trend() -> None:
    summary = pd.DataFrame({"bucket": ["all", "Q1", "Q2"], "psi": [0.5, 0.4, 0.9]})
    trends = pd.DataFrame(
        {
            "bucket": ["all", "Q1", "Q2"],
            "bins_used": [20, 20, 2],
            "spearman_rho": [-0.8, 0.3, math.nan],
            "spearman_p": [0.001, 0.2, math.nan],
            "kendall_p": [0.04, 0.01, math.nan],
        }
    )
    flags = flag_psi_trends(summary, trends, alpha=0.05).set_index("bucket")
    assert flags["psi_trend_significant"].tolist() == [True, False, False]
    assert flags["direction"].tolist() == ["primacy", "recency", "none"]
    kendall = flag_psi_trends(summary, trends, alpha=0.05, test="kendall").set_index("bucket")
    assert kendall["psi_trend_significant"].tolist() == [True, True, False]
    with pytest.raises(ValueError, match="test must be one of"):
        flag_psi_trends(summary, trends, test="anova")
