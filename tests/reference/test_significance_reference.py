"""Paired tests against independent references (sign-flip enumeration, statsmodels, aggregate.summarize)
and on real per-query scores: two BM25 configurations on a SQuAD-dev long-document benchmark."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import permutation_test
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

from posir.metrics import aggregate
from posir.metrics.bootstrap import BootstrapParams
from posir.metrics.significance import (
    align_scores,
    paired_t,
    pairwise_tests,
    psi_differences,
    randomisation_p,
    sign_flip_null,
    sign_flip_p,
)
from tests._realdata import METRICS, bm25_per_query, build_squad_benchmark

BUCKETS = METRICS.bucket_names


def _fisher_exact(a: np.ndarray, b: np.ndarray) -> float:
    """Fisher's randomisation test by enumeration: share of the 2^n sign flips with |mean| >= |observed|."""
    d = a - b
    observed = abs(d.mean())
    flips = np.array(list(itertools.product([1.0, -1.0], repeat=len(d))))
    return float(np.mean(np.abs((flips * d).mean(axis=1)) >= observed - 1e-12))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_randomisation_p_is_fishers_exact_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0, 1, 10), rng.uniform(0, 1, 10)
    b[:3] = a[:3]  # zero differences, as tied queries in IR
    assert randomisation_p(a, b, n_resamples=2**10, seed=0) == pytest.approx(_fisher_exact(a, b), abs=1e-12)


# (queries, resamples): one batch, several with a shorter last one, an odd number of 32-bit draws per batch (a
# half of a 64-bit draw carried into the next), the CHUNK_ENTRIES batching of ten thousand queries
SIGN_FLIP_SHAPES = [(14, 99), (15, 1001), (333, 6239), (2001, 9999), (5003, 999), (10_001, 401)]


@pytest.mark.parametrize(("n", "resamples"), SIGN_FLIP_SHAPES)
def test_sign_flips_are_scipys_permutation_test_value_for_value(n: int, resamples: int) -> None:
    rng = np.random.default_rng(n)
    levels = np.array([0.0, 1.0, 0.5, 0.6309297535714575, 0.43067655807339306, 0.38685280723454163])
    a, b = rng.choice(levels, n), rng.choice(levels, n)  # nDCG@10 values of one positive: ties in the null
    for seed in (0, 13):
        reference = permutation_test(
            (a, b),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=resamples,
            alternative="two-sided",
            rng=np.random.default_rng(seed),
            batch=max(1, 4_000_000 // (2 * n)),
        )
        assert np.array_equal(sign_flip_null(a, b, resamples, seed), reference.null_distribution)
        assert sign_flip_p(a, b, resamples, seed) == reference.pvalue


def test_sign_flips_leave_the_exact_test_to_scipy() -> None:
    a, b = np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.5, 0.5])
    with pytest.raises(ValueError, match="exact test"):
        sign_flip_null(a, b, 8, 0)
    assert (
        sign_flip_p(a, b, 8, 0)
        == permutation_test(
            (a, b),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            vectorized=True,
            n_resamples=8,
        ).pvalue
    )


def test_paired_t_matches_statsmodels() -> None:
    rng = np.random.default_rng(8)
    a, b = rng.uniform(0, 1, 25), rng.uniform(0, 1, 25)
    t, p = paired_t(a, b)
    reference_t, reference_p, _ = DescrStatsW(a - b).ttest_mean(0.0)
    assert t == pytest.approx(reference_t, rel=1e-10) and p == pytest.approx(reference_p, rel=1e-10)


@pytest.fixture(scope="module")
def two_bm25() -> pd.DataFrame:
    """Real per-query nDCG@10 of BM25 (k1 1.5, b 0.75) and of a near-binary-length variant (k1 0.5, b 0.1)."""
    out = Path(tempfile.mkdtemp(prefix="posir-significance-"))
    build_squad_benchmark(out / "bench", max_articles=6)  # the workflow's build step (seed 13)
    tables = {
        "bm25": bm25_per_query(out / "bench", out, "bm25", k1=1.5, b=0.75),
        "bm25-flat": bm25_per_query(out / "bench", out, "bm25-flat", k1=0.5, b=0.1),
    }
    return align_scores(tables)


def test_real_runs_holm_matches_statsmodels_per_bucket(two_bm25: pd.DataFrame) -> None:
    third = two_bm25.assign(shuffled=np.random.default_rng(0).permutation(two_bm25["bm25"].to_numpy()))
    tests = pairwise_tests(third, ["bm25", "bm25-flat", "shuffled"], BUCKETS, n_resamples=199, seed=4)
    for bucket, family in tests.groupby("bucket"):
        finite = family["randomisation_p"].notna()
        assert finite.all(), bucket
        expected = multipletests(family["randomisation_p"], method="holm")[1]
        assert family["randomisation_p_holm"].to_numpy() == pytest.approx(expected)
    overall = tests[(tests["bucket"] == "all")].set_index(["model_a", "model_b"])
    assert overall.loc[("bm25", "bm25-flat"), "n_queries"] == len(two_bm25)
    assert overall.loc[("bm25", "bm25-flat"), "mean_difference"] == pytest.approx(
        two_bm25["bm25"].mean() - two_bm25["bm25-flat"].mean()
    )


def test_real_runs_psi_difference_is_paired(two_bm25: pd.DataFrame) -> None:
    params = BootstrapParams.from_config(dict(resamples=300, seed=2))
    minimum = 5
    same = psi_differences(
        two_bm25.assign(copy=two_bm25["bm25"]), ["bm25", "copy"], BUCKETS, METRICS.n_bins, minimum, params
    )
    # a model against itself: every resample draws the same queries for both, so every difference is 0
    assert (same["psi_difference"].dropna() == 0).all()
    defined = same["psi_difference"].notna()
    assert (same.loc[defined, "psi_difference_ci_low"] == 0).all()
    assert (same.loc[defined, "psi_difference_ci_high"] == 0).all()

    diff = psi_differences(two_bm25, ["bm25", "bm25-flat"], BUCKETS, METRICS.n_bins, minimum, params)
    for model, column in (("bm25", "psi_a"), ("bm25-flat", "psi_b")):
        per_query = two_bm25[["qid", "length_bucket", "position_bin"]].assign(**{"ndcg@10": two_bm25[model]})
        summary = aggregate.summarize(per_query, aggregate.bin_table(per_query, BUCKETS, METRICS.n_bins), minimum)
        expected = summary.set_index("bucket")["psi"]
        got = diff.set_index("bucket")[column]
        assert np.allclose(got, expected.loc[got.index], equal_nan=True), model
    point = diff["psi_difference"]
    finite = point.notna()
    assert (diff.loc[finite, "psi_difference_ci_low"] <= point[finite] + 1e-12).all()
    assert (point[finite] <= diff.loc[finite, "psi_difference_ci_high"] + 1e-12).all()
    assert diff.loc[finite, "psi_difference_ci_low"].lt(diff.loc[finite, "psi_difference_ci_high"]).all()
