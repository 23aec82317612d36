"""What a reader of a controlled family's tables and figure is told about small cells: a statistic of fewer than
MIN_INTERVAL_QUERIES queries shows no interval and says why (a bootstrap of one query printed 0.68 [0.68, 0.68]),
and each figure panel names its number of queries."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posir.figures import controlled_curves
from posir.metrics.controlled import controlled_statistics
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import MIN_INTERVAL_QUERIES
from posir.tables.controlled import FEW_QUERIES_MARK, controlled_markdown, natural_vs_controlled_markdown

PARAMS = BootstrapParams(resamples=200, seed=13, confidence=0.95, interval="percentile")
GROUPS, TARGETS = ("model", "setting", "length"), [0.0, 0.5, 1.0]  # as posir.steps.controlled groups them


def positions_of(lengths: dict[str, int]) -> pd.DataFrame:
    """Per length bucket, that many queries at three positions, found worse the later the evidence sits."""
    rng = np.random.default_rng(5)
    rows = []
    for length, queries in lengths.items():
        for i in range(queries):
            base = rng.uniform(0.5, 1.0)
            for j in range(3):
                rows.append(
                    {"model": "m", "setting": "eng-eng", "length": length, "qid": f"{length}-{i}", "position_index": j}
                    | {"ndcg@10": max(base - 0.2 * j, 0.0)}
                )
    return pd.DataFrame(rows)


def test_a_cell_of_one_query_shows_no_interval_and_says_why():
    tests, _ = controlled_statistics(positions_of({"Q1": 1, "Q2": 12}), PARAMS, GROUPS, ("model",), targets=TARGETS)
    text = controlled_markdown(tests, "family")
    q1 = next(line for line in text.splitlines() if "| Q1 " in line)
    q2 = next(line for line in text.splitlines() if "| Q2 " in line)
    assert FEW_QUERIES_MARK in q1 and "[" not in q1
    assert FEW_QUERIES_MARK not in q2 and "[" in q2
    assert f"fewer than {MIN_INTERVAL_QUERIES} queries: no interval" in text


def test_natural_against_controlled_hides_the_interval_of_a_small_bucket_too():
    table = pd.DataFrame(
        {
            "model": ["m", "m"],
            "setting": ["eng-eng"] * 2,
            "bucket": ["Q1", "Q2"],
            "natural_psi": [0.5, 0.4],
            "controlled_psi": [0.68, 0.3],
            "controlled_psi_ci_low": [0.68, 0.2],
            "controlled_psi_ci_high": [0.68, 0.4],
            "difference": [0.18, -0.1],
            "controlled_queries": [1, 40],
            "page_p_primacy": [0.5, 0.01],
        }
    )
    text = natural_vs_controlled_markdown(table, "family")
    assert "0.68 [0.68, 0.68]" not in text and f"0.68 {FEW_QUERIES_MARK}" in text
    assert "0.30 [0.20, 0.40]" in text


def test_every_figure_panel_names_its_queries(tmp_path):
    _, positions = controlled_statistics(positions_of({"Q1": 3, "Q2": 12}), PARAMS, GROUPS, ("model",), targets=TARGETS)
    titles = controlled_curves(positions, "family", tmp_path / "curves.png")
    assert titles == ["bucket Q1: n = 3", "bucket Q2: n = 12"]
    assert (tmp_path / "curves.png").stat().st_size > 0
