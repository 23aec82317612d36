"""Paired model comparison on hand-made tables: alignment, families, renderers (posir.metrics.significance)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from posir.metrics.bootstrap import BootstrapParams
from posir.metrics.significance import (
    AlignmentError,
    align_scores,
    family_resamples,
    holm,
    pairwise_tests,
    psi_differences,
)
from posir.tables.layout import render_latex, render_markdown
from posir.tables.pairs import psi_difference_rendering, significance_rendering


def _table(scores: list[float], buckets: list[str] | None = None, qids: list[str] | None = None) -> pd.DataFrame:
    n = len(scores)
    return pd.DataFrame(
        {
            "qid": qids or [f"q{i}" for i in range(n)],
            "ndcg@10": scores,
            "length_bucket": buckets or ["Q1"] * n,
            "position_bin": [i % 4 for i in range(n)],
        }
    )


def test_alignment_follows_qids_not_row_order() -> None:
    a = _table([1.0, 0.5, 0.0])
    b = _table([0.2, 0.3, 0.4]).iloc[::-1]
    aligned = align_scores({"a": a, "b": b})
    assert aligned["qid"].tolist() == ["q0", "q1", "q2"]
    assert aligned["b"].tolist() == [0.2, 0.3, 0.4]


def test_alignment_refuses_different_query_sets_and_names_them() -> None:
    a = _table([1.0, 0.5, 0.0])
    b = _table([1.0, 0.5, 0.0], qids=["q0", "q1", "x9"])
    with pytest.raises(AlignmentError, match=r"'a' and 'b'.*1 qid\(s\) only in 'a' \(e\.g\. \['q2'\]\).*\['x9'\]"):
        align_scores({"a": a, "b": b})
    with pytest.raises(AlignmentError, match="appear twice"):
        align_scores({"a": a, "b": _table([1.0, 0.5, 0.0], qids=["q0", "q0", "q2"])})
    with pytest.raises(AlignmentError, match="disagree on length_bucket"):
        align_scores({"a": a, "b": _table([1.0, 0.5, 0.0], buckets=["Q1", "Q2", "Q1"])})


def test_holm_by_hand_keeps_nan_out_of_the_family() -> None:
    # sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04; running maximum 0.03, 0.06, 0.06
    adjusted = holm([0.01, 0.04, np.nan, 0.03])
    assert adjusted[[0, 1, 3]] == pytest.approx([0.03, 0.06, 0.06])
    assert math.isnan(adjusted[2])


@pytest.fixture(scope="module")
def three_models() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 40
    buckets = ["Q1"] * 20 + ["Q2"] * 20
    base = rng.uniform(0, 1, n)
    tables = {
        "good": _table(list(np.clip(base + 0.3, 0, 1)), buckets),
        "mid": _table(list(np.clip(base + rng.normal(0, 0.05, n), 0, 1)), buckets),
        "bad": _table(list(np.clip(base - 0.3, 0, 1)), buckets),
    }
    return align_scores(tables)


def test_every_pair_in_every_bucket_with_holm_over_the_bucket(three_models: pd.DataFrame) -> None:
    tests = pairwise_tests(three_models, ["good", "mid", "bad"], ["Q1", "Q2"], n_resamples=2000, seed=1)
    assert len(tests) == 3 * 3
    assert tests[["model_a", "model_b"]].drop_duplicates().values.tolist() == [
        ["good", "mid"],
        ["good", "bad"],
        ["mid", "bad"],
    ]
    for _, family in tests.groupby("bucket"):
        assert family["randomisation_p_holm"].to_numpy() == pytest.approx(holm(family["randomisation_p"]))
        assert family["ttest_p_holm"].to_numpy() == pytest.approx(holm(family["ttest_p"]))
    q1 = tests[tests["bucket"] == "Q1"].set_index(["model_a", "model_b"])
    assert q1.loc[("good", "bad"), "n_queries"] == 20
    assert q1.loc[("good", "bad"), "mean_difference"] > 0.3 and q1.loc[("good", "bad"), "significant"]
    assert (tests["randomisation_p_holm"] >= tests["randomisation_p"]).all()


def test_identical_models_are_never_significant() -> None:
    aligned = align_scores({"a": _table([1.0, 0.5, 0.0, 0.25]), "b": _table([1.0, 0.5, 0.0, 0.25])})
    row = pairwise_tests(aligned, ["a", "b"], ["Q1"], n_resamples=100).iloc[0]
    assert row["randomisation_p"] == 1.0 and math.isnan(row["ttest_p"]) and not row["significant"]


def test_markdown_and_latex_mark_significant_differences(three_models: pd.DataFrame) -> None:
    tests = pairwise_tests(three_models, ["good", "mid", "bad"], ["Q1", "Q2", "Q3"], n_resamples=500, seed=1)
    rendering = significance_rendering(tests, ["Q1", "Q2", "Q3"], labels={"good": "Good model"})
    markdown = render_markdown(rendering)
    lines = markdown.splitlines()
    assert lines[0] == "| model A | model B | nDCG@10 | Q1 | Q2 | Q3 |"
    good_bad = next(line for line in lines if line.startswith("| Good model | bad |"))
    cells = [c.strip() for c in good_bad.strip("|").split("|")]
    expected = tests[(tests["model_a"] == "good") & (tests["model_b"] == "bad")].set_index("bucket")
    for cell, bucket in zip(cells[2:5], ["all", "Q1", "Q2"]):
        assert cell == f"{100 * expected.loc[bucket, 'mean_difference']:.2f}" + (
            "†" if expected.loc[bucket, "significant"] else ""
        )
    assert cells[5] == "–"  # Q3 holds no queries
    latex = render_latex(rendering)
    assert r"\toprule" in latex and r"$^{\dagger}$" in latex and "Holm" in latex


def test_psi_difference_table_reads_value_and_interval() -> None:
    rng = np.random.default_rng(0)
    n = 200
    bins = rng.integers(0, 4, n)
    a = np.where(bins == 3, 0.2, 0.8) + rng.normal(0, 0.05, n)
    aligned = align_scores(
        {
            "a": _table(list(np.clip(a, 0, 1))).assign(position_bin=bins),
            "b": _table(list(np.clip(a * 0 + 0.6, 0, 1))).assign(position_bin=bins),
        }
    )
    diff = psi_differences(aligned, ["a", "b"], ["Q1"], 4, 5, BootstrapParams.from_config(dict(resamples=200, seed=3)))
    text = render_markdown(psi_difference_rendering(diff, ["Q1"]))
    row = diff.set_index("bucket").loc["Q1"]
    assert row["psi_b"] == pytest.approx(0.0) and row["psi_difference"] > 0.6
    assert (
        f"{row['psi_difference']:.2f} [{row['psi_difference_ci_low']:.2f}, {row['psi_difference_ci_high']:.2f}]†"
        in text
    )


def test_a_family_gets_enough_resamples_for_holm_to_reach_alpha() -> None:
    """The smallest two-sided p-value the test can give, Holm-adjusted over the whole family, is below alpha."""
    from posir.metrics.significance import randomisation_p

    assert family_resamples(1999, 10, 0.05) == 1999
    resamples = family_resamples(1999, 78, 0.05)  # 13 models
    assert resamples == 6239
    a, b = np.linspace(0.5, 1.0, 40), np.zeros(40)  # no sign pattern but the observed one reaches its mean
    floor = randomisation_p(a, b, resamples, seed=1)
    assert floor == pytest.approx(2 / (resamples + 1))
    assert holm([floor] * 78).max() < 0.05 / 1.9  # with room to spare


def test_ties_change_nothing_but_the_time() -> None:
    from scipy.stats import permutation_test

    from posir.metrics.significance import randomisation_p

    a = np.array([0.2, 0.5, 1.0, 1.0, 0.0, 0.3, 1.0, 0.7])
    b = np.array([0.1, 0.5, 1.0, 0.6, 0.0, 0.0, 1.0, 0.2])
    exact = permutation_test(
        (a, b),
        lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
    ).pvalue  # 2^8 sign patterns: exact
    assert randomisation_p(a, b, 9999, 1) == pytest.approx(exact)
    assert randomisation_p(a, a.copy(), 9999, 1) == 1.0
    assert randomisation_p(a, np.where(np.arange(8) == 2, 0.0, a), 9999, 1) == 1.0  # one query differs
