"""Stratified bootstrap intervals for bucket nDCG@10 and PSI, on real per-query scores (BM25 on SQuAD dev)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from posir.config import ConfigError
from posir.metrics import aggregate
from posir.metrics.bootstrap import (
    BootstrapParams,
    bootstrap_summary,
    observed_totals,
    resample_totals,
    statistics,
)
from tests._realdata import METRICS, squad_bm25_per_query

BUCKETS = METRICS.bucket_names
N_BINS = METRICS.n_bins
STATS = ("ndcg@10_bin_mean", "ndcg@10_query_mean", "psi")


@pytest.fixture(scope="module")
def per_query() -> pd.DataFrame:
    return squad_bm25_per_query(None)


def subsample(frame: pd.DataFrame, fraction: float, seed: int) -> pd.DataFrame:
    """A stratified share of the queries of every length bucket."""
    return frame.groupby("length_bucket", group_keys=False).sample(frac=fraction, random_state=seed)


@pytest.mark.parametrize("min_bin_queries", [10, 40, 200])
def test_statistic_of_the_data_equals_aggregate(per_query: pd.DataFrame, min_bin_queries: int) -> None:
    """The resampled statistic is aggregate.summarize's, min-bin rule included (200 empties some PSIs)."""
    data = subsample(per_query, 0.3, seed=1)
    expected = aggregate.summarize(data, aggregate.bin_table(data, BUCKETS, N_BINS), min_bin_queries).set_index(
        "bucket"
    )
    got, _ = bootstrap_summary(data, BUCKETS, N_BINS, min_bin_queries, BootstrapParams.from_config(dict(resamples=20)))
    got = got.set_index("bucket")
    for column in STATS:
        assert np.allclose(got[column], expected.loc[got.index, column], rtol=1e-12, atol=0, equal_nan=True), column
    if min_bin_queries == 200:
        assert expected["psi"].isna().any()  # the rule matters at this threshold


def test_observed_totals_are_the_bin_table(per_query: pd.DataFrame) -> None:
    data = per_query[per_query["length_bucket"] == "Q2"]
    totals = observed_totals(data["ndcg@10"].to_numpy(), data["position_bin"].to_numpy(), N_BINS)
    bins = aggregate.bin_table(data, ["Q2"], N_BINS)
    q2 = bins[bins["bucket"] == "Q2"]
    assert totals.counts[0].tolist() == q2["n_queries"].tolist()
    assert np.allclose(statistics(totals, 10)["bin_means"][0], q2["ndcg@10"], equal_nan=True)


def test_resamples_stay_within_their_bucket(per_query: pd.DataFrame) -> None:
    data = per_query[per_query["length_bucket"] == "Q1"]
    totals = resample_totals(
        data["ndcg@10"].to_numpy(), data["position_bin"].to_numpy(), N_BINS, 50, np.random.default_rng(0)
    )
    assert (totals.counts.sum(axis=1) == len(data)).all()
    # resampling changes the bin counts but never invents bins the bucket does not have
    observed = np.bincount(data["position_bin"], minlength=N_BINS)
    assert (totals.counts[:, observed == 0] == 0).all()
    assert (totals.counts != observed).any()


@pytest.mark.parametrize("fraction", [0.05, 0.2, 1.0])
def test_intervals_contain_the_point_estimate(per_query: pd.DataFrame, fraction: float) -> None:
    for seed in range(3):
        data = subsample(per_query, fraction, seed) if fraction < 1 else per_query
        summary, bins = bootstrap_summary(
            data, BUCKETS, N_BINS, METRICS.min_bin_queries, BootstrapParams.from_config(dict(resamples=500, seed=seed))
        )
        for column in STATS:
            defined = summary[column].notna()
            assert (summary.loc[defined, f"{column}_ci_low"] <= summary.loc[defined, column]).all(), column
            assert (summary.loc[defined, column] <= summary.loc[defined, f"{column}_ci_high"]).all(), column
        filled = bins["n_queries"] > 0
        assert (bins.loc[filled, "ndcg@10_ci_low"] <= bins.loc[filled, "ndcg@10"]).all()
        assert (bins.loc[filled, "ndcg@10"] <= bins.loc[filled, "ndcg@10_ci_high"]).all()
        assert bins.loc[~filled, "ndcg@10_ci_low"].isna().all()


def test_percentile_and_centered_agree_for_means(per_query: pd.DataFrame) -> None:
    params = {"resamples": 400, "seed": 5}
    centered, _ = bootstrap_summary(
        per_query, BUCKETS, N_BINS, 10, BootstrapParams.from_config(dict(**params, interval="centered"))
    )
    percentile, _ = bootstrap_summary(
        per_query, BUCKETS, N_BINS, 10, BootstrapParams.from_config(dict(**params, interval="percentile"))
    )
    for column in ("ndcg@10_query_mean", "ndcg@10_bin_mean"):
        assert np.allclose(centered[f"{column}_ci_low"], percentile[f"{column}_ci_low"], atol=2e-3)
        assert (percentile[f"{column}_ci_low"] <= percentile[column]).all()
    # PSI is inflated by resampling: its bootstrap bias is positive in every bucket
    assert (centered["psi_bootstrap_bias"] > 0).all()


def test_intervals_shrink_as_query_counts_grow(per_query: pd.DataFrame) -> None:
    widths = {}
    for fraction in (0.1, 0.3, 1.0):
        data = subsample(per_query, fraction, seed=3) if fraction < 1 else per_query
        summary, _ = bootstrap_summary(
            data, BUCKETS, N_BINS, METRICS.min_bin_queries, BootstrapParams.from_config(dict(resamples=500))
        )
        summary = summary.set_index("bucket")
        widths[fraction] = {c: summary[f"{c}_ci_high"] - summary[f"{c}_ci_low"] for c in STATS}
    for column in STATS:
        small, medium, large = (widths[f][column] for f in (0.1, 0.3, 1.0))
        assert small.mean() > medium.mean() > large.mean(), column
    for column in ("ndcg@10_bin_mean", "ndcg@10_query_mean"):
        assert (widths[0.1][column] > widths[1.0][column]).all(), column
    # a mean's interval width falls roughly as 1/sqrt(n): ten times the queries, about a third of the width
    ratio = (widths[1.0]["ndcg@10_query_mean"] / widths[0.1]["ndcg@10_query_mean"]).loc["all"]
    assert 0.2 < ratio < 0.5


def test_seeded_and_reproducible(per_query: pd.DataFrame) -> None:
    data = subsample(per_query, 0.2, seed=0)
    first, _ = bootstrap_summary(data, BUCKETS, N_BINS, 10, BootstrapParams.from_config(dict(resamples=200, seed=7)))
    again, _ = bootstrap_summary(data, BUCKETS, N_BINS, 10, BootstrapParams.from_config(dict(resamples=200, seed=7)))
    other, _ = bootstrap_summary(data, BUCKETS, N_BINS, 10, BootstrapParams.from_config(dict(resamples=200, seed=8)))
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["psi_ci_low"], other["psi_ci_low"])


def test_thousand_resamples_of_ten_thousand_queries_take_seconds(per_query: pd.DataFrame) -> None:
    assert len(per_query) > 10_000
    start = time.perf_counter()
    bootstrap_summary(per_query, BUCKETS, N_BINS, 10, BootstrapParams.from_config(dict(resamples=1000)))
    assert time.perf_counter() - start < 15


def test_params_from_config_section() -> None:
    params = BootstrapParams.from_config({"resamples": 50, "seed": 1, "confidence": 0.9, "interval": "percentile"})
    assert params == BootstrapParams(resamples=50, seed=1, confidence=0.9, interval="percentile")
    # the defaults are the declaration's
    assert BootstrapParams.from_config({}) == BootstrapParams(
        resamples=1000, seed=13, confidence=0.95, interval="centered"
    )
    with pytest.raises(ConfigError, match=r"config: metrics\.bootstrap\.confidence: 1\.0: .*less than 1"):
        BootstrapParams.from_config({"confidence": 1.0}, "metrics.bootstrap")
    with pytest.raises(ConfigError, match=r"config: interval: bca is not allowed; allowed values: centered or perc"):
        BootstrapParams.from_config({"interval": "bca"})


def test_each_bucket_is_resampled_on_its_own(per_query: pd.DataFrame) -> None:
    """A bucket's interval does not depend on the other buckets' queries (stratified resampling)."""
    params = BootstrapParams.from_config(dict(resamples=300, seed=11))
    together, _ = bootstrap_summary(per_query, BUCKETS, N_BINS, 10, params)
    alone, _ = bootstrap_summary(per_query[per_query["length_bucket"] == "Q3"], BUCKETS, N_BINS, 10, params)
    columns = [f"{c}_ci_{side}" for c in STATS for side in ("low", "high")]
    pd.testing.assert_series_equal(
        together.set_index("bucket").loc["Q3", columns], alone.set_index("bucket").loc["Q3", columns]
    )
    assert alone.set_index("bucket").loc["Q1", "n_queries"] == 0
