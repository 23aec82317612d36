"""Bucketed position metrics and PSI on hand-made per-query tables."""

import math

import pandas as pd
import pytest

from posir.metrics.aggregate import bin_table, psi, summarize


def test_psi_is_one_minus_min_over_max():
    assert psi([0.8, 0.4, 0.6]) == pytest.approx(0.5)
    assert psi([0.5, 0.5]) == 0.0
    assert psi([0.0, 1.0]) == 1.0


def test_psi_is_undefined_without_a_positive_best_bin():
    assert math.isnan(psi([]))
    assert math.isnan(psi([0.0, 0.0]))
    assert psi([float("nan"), 0.2, 0.1]) == pytest.approx(0.5)


def _table(rows):
    return pd.DataFrame(rows, columns=["qid", "ndcg@10", "length_bucket", "position_bin"])


def test_bucket_ndcg_is_the_mean_of_bin_means_and_the_query_mean_is_reported_beside_it():
    per_query = _table(
        [
            ("a", 1.0, "Q1", 0),
            ("b", 1.0, "Q1", 0),
            ("c", 1.0, "Q1", 0),  # bin 0 mean 1.0, 3 queries
            ("d", 0.0, "Q1", 3),  # bin 3 mean 0.0, 1 query
            ("e", 0.5, "Q2", 1),
            ("f", 0.25, "Q2", 1),
        ]
    )
    bins = bin_table(per_query, ["Q1", "Q2"], n_bins=4)
    assert len(bins) == 3 * 4
    q1 = bins[bins["bucket"] == "Q1"].set_index("position_bin")
    assert q1.loc[0, "n_queries"] == 3 and q1.loc[0, "ndcg@10"] == 1.0
    assert q1.loc[1, "n_queries"] == 0 and math.isnan(q1.loc[1, "ndcg@10"])
    summary = summarize(per_query, bins, min_bin_queries=1).set_index("bucket")
    assert summary.loc["Q1", "ndcg@10_bin_mean"] == pytest.approx(0.5)  # (1.0 + 0.0) / 2
    assert summary.loc["Q1", "ndcg@10_query_mean"] == pytest.approx(0.75)  # 3 / 4
    assert summary.loc["Q1", "psi"] == pytest.approx(1.0)
    assert summary.loc["Q2", "psi"] == 0.0 and summary.loc["Q2", "n_queries"] == 2
    # 'all' bins pool every bucket: bin 0 = 1.0, bin 1 = 0.375, bin 3 = 0.0
    assert summary.loc["all", "ndcg@10_bin_mean"] == pytest.approx((1.0 + 0.375 + 0.0) / 3)
    assert summary.loc["all", "n_queries"] == 6


def test_psi_skips_and_names_bins_below_the_minimum():
    per_query = _table(
        [
            ("a", 0.8, "Q1", 0),
            ("b", 0.8, "Q1", 0),
            ("c", 0.4, "Q1", 1),
            ("d", 0.4, "Q1", 1),
            ("e", 0.0, "Q1", 2),  # a single query: too few to trust
        ]
    )
    bins = bin_table(per_query, ["Q1"], n_bins=3)
    summary = summarize(per_query, bins, min_bin_queries=2).set_index("bucket")
    assert summary.loc["Q1", "psi"] == pytest.approx(0.5)
    assert summary.loc["Q1", "psi_bins_used"] == 2
    assert summary.loc["Q1", "psi_bins_skipped"] == "2"
    # the bucket mean still uses every non-empty bin
    assert summary.loc["Q1", "ndcg@10_bin_mean"] == pytest.approx((0.8 + 0.4 + 0.0) / 3)


def test_empty_bucket_yields_nan_not_an_error():
    per_query = _table([("a", 1.0, "Q1", 0)])
    summary = summarize(per_query, bin_table(per_query, ["Q1", "Q2"], 2), 1).set_index("bucket")
    assert summary.loc["Q2", "n_queries"] == 0
    assert math.isnan(summary.loc["Q2", "ndcg@10_bin_mean"]) and math.isnan(summary.loc["Q2", "psi"])
