"""Spearman's rank correlation with a reference benchmark (PosIR section 5.1, Table 2's last rows)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posir.metrics.correlation import correlation_table, spearman


def test_hand_example_matches_formula_and_scipy() -> None:
    reference = [10, 20, 30, 40, 50, 60]
    scores = [3, 1, 4, 6, 5, 2]
    # ranks 1..6 against 3,1,4,6,5,2: d = -2,1,-1,-2,0,4, sum d^2 = 26, rho = 1 - 6*26 / (6*35) = 9/35
    result = spearman(reference, scores)
    assert result.rho == pytest.approx(9 / 35, abs=1e-12)
    assert result.n == 6
    t = (9 / 35) * math.sqrt(4 / (1 - (9 / 35) ** 2))
    assert result.p_value == pytest.approx(2 * stats.t.sf(t, df=4), abs=1e-12)
    reference_result = stats.spearmanr(reference, scores)
    assert (result.rho, result.p_value) == pytest.approx(
        (reference_result.statistic, reference_result.pvalue), abs=1e-12
    )


def test_ties_use_average_ranks_like_scipy() -> None:
    reference = [54.6, 64.65, 57.16, 62.96, 69.6]
    scores = [43.22, 53.63, 43.22, 58.81, 62.26]
    expected = stats.spearmanr(reference, scores)
    result = spearman(reference, scores)
    assert result.rho == pytest.approx(expected.statistic) and result.p_value == pytest.approx(expected.pvalue)
    ranks = stats.rankdata(scores)
    assert result.rho == pytest.approx(np.corrcoef(stats.rankdata(reference), ranks)[0, 1])


def test_models_without_a_reference_score_are_left_out() -> None:
    result = spearman([1.0, 2.0, math.nan, 4.0, 5.0], [2.0, 1.0, 9.0, 4.0, 3.0])
    assert result.n == 4
    assert result.rho == pytest.approx(stats.spearmanr([1, 2, 4, 5], [2, 1, 4, 3]).statistic)


def test_undefined_cases_give_nan() -> None:
    assert math.isnan(spearman([1.0, 2.0], [2.0, 1.0]).rho)
    assert math.isnan(spearman([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]).rho)
    with pytest.raises(ValueError):
        spearman([1.0, 2.0, 3.0], [1.0, 2.0])


def test_paper_table_2_spearman_rows_from_its_printed_columns() -> None:
    """PosIR Table 2 over its 10 models: rho reproduces; p-values as scipy gives them."""
    mmteb = [57.16, 54.60, 64.65, 62.96, 69.60, 66.48, 56.72, 68.69, 70.88, 75.66]
    columns = {
        "PosIR": [47.37, 43.22, 53.63, 58.81, 62.26, 65.01, 45.02, 64.09, 64.08, 51.87],
        "Q1": [61.28, 57.16, 62.93, 67.82, 71.63, 74.71, 70.48, 75.76, 72.68, 74.01],
        "Q2": [48.79, 43.48, 54.41, 58.40, 62.91, 65.03, 47.12, 64.16, 64.33, 54.64],
        "Q3": [39.21, 35.13, 48.11, 53.90, 56.74, 59.82, 26.33, 57.47, 59.00, 35.11],
        "Q4": [32.01, 29.72, 43.32, 51.20, 50.96, 54.68, 16.27, 52.28, 53.87, 27.65],
    }
    frame = pd.DataFrame({"reference": mmteb, **columns})
    table = correlation_table(frame, "reference", {c: c for c in columns})
    assert [f"{v:.2f}" for v in table["rho"]] == ["0.62", "0.73", "0.71", "0.44", "0.39"]
    # paper: (0.05) (0.01) (0.02) (0.20) (0.20); Q1 and Q4 are 0.016 and 0.260 by the t test,
    # 0.020 and 0.263 by an exact permutation test
    assert [f"{v:.2f}" for v in table["p_value"]] == ["0.05", "0.02", "0.02", "0.20", "0.26"]
    assert table["n_models"].tolist() == [10] * 5
