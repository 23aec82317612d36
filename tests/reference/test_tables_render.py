"""Paper-table rendering: rounding as printed, Average rows, Markdown and LaTeX (booktabs), PSI flags."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from posir.metrics import aggregate
from posir.published import read_published
from posir.results import schemas as results
from posir.tables import build, layout, paper, render
from tests._realdata import EXCERPT, METRICS, require, squad_bm25_per_query

BUCKETS = METRICS.bucket_names
HEADERS = {b.name: b.header for b in METRICS.buckets}


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (53.525, 2, "53.53"),
        (0.175, 2, "0.18"),
        (math.nextafter(0.175, 1), 2, "0.18"),
        (math.nextafter(0.175, 0), 2, "0.18"),
        (43.21713, 2, "43.22"),
        (0.155, 2, "0.16"),
        (0.1749, 2, "0.17"),
        (1.0, 2, "1.00"),
        (0.0537, 2, "0.05"),
    ],
)
def test_display_rounds_halves_up(value: float, digits: int, text: str) -> None:
    assert str(layout.display_decimal(value, digits)) == text


def test_display_of_missing_values() -> None:
    assert layout.display_decimal(float("nan")) is None
    assert layout.number_cell(pd.NA).text is None


@pytest.fixture(scope="module")
def excerpt_settings() -> pd.DataFrame:
    return build.settings_table({"PosIR paper": read_published(require(EXCERPT), BUCKETS)}, BUCKETS, METRICS.n_bins)


def test_average_of_printed_values_differs_from_exact_mean(excerpt_settings: pd.DataFrame) -> None:
    """43.22 and 53.63 as printed average to 48.425 -> 48.43; the unrounded mean is 48.424 -> 48.42."""
    displayed = build.position_bias_table(excerpt_settings, BUCKETS, average_of="displayed")
    exact = build.position_bias_table(excerpt_settings, BUCKETS, average_of="exact")
    pick = (displayed["kind"] == results.MONOLINGUAL) & (displayed["row"] == "average")
    assert str(layout.display_decimal(displayed.loc[pick, "ndcg@10_pct"].iloc[0])) == "48.43"
    assert str(layout.display_decimal(exact.loc[pick, "ndcg@10_pct"].iloc[0])) == "48.42"
    with pytest.raises(ValueError):
        build.position_bias_table(excerpt_settings, BUCKETS, average_of="median")


def test_ranking_markdown_has_spearman_rows_last(excerpt_settings: pd.DataFrame) -> None:
    ranking, correlation = build.ranking_table(
        excerpt_settings, BUCKETS, {"bge-m3": 54.6}, models=["Qwen3-Embedding-0.6B", "bge-m3"]
    )
    text = layout.render_markdown(
        paper.ranking_rendering(
            ranking, correlation, "MMTEB", layout.PaperLayout(BUCKETS, HEADERS, 20, labels={"bge-m3": "BGE-M3"})
        )
    )
    lines = text.splitlines()
    assert lines[0] == "| Model | MMTEB | nDCG@10 | Q1 (512) | Q2 (1024) | Q3 (1536) | Q4 (>1536) |"
    assert lines[1] == "|:---|---:|---:|---:|---:|---:|---:|"
    assert lines[2] == "| Qwen3-Embedding-0.6B | – | 53.63 | 62.93 | 54.41 | 48.11 | 43.32 |"
    assert lines[3] == "| BGE-M3 | 54.60 | 43.22 | 57.16 | 43.48 | 35.13 | 29.72 |"
    assert lines[4].startswith("| Spearman ρ |") and lines[5].startswith("| (p-value) |")


def test_latex_is_booktabs_and_escaped(excerpt_settings: pd.DataFrame) -> None:
    position = build.position_bias_table(excerpt_settings, BUCKETS)
    page = layout.PaperLayout(BUCKETS, HEADERS, 10, labels={"bge-m3": "bge_m3 & co"})
    rendering = paper.position_bias_rendering(position, page, caption="PSI 100% by length", label="tab:psi")
    text = layout.render_latex(rendering)
    for command in (
        r"\toprule",
        r"\midrule",
        r"\bottomrule",
        r"\begin{tabular}{lrrrrr}",
        r"\label{tab:psi}",
        r"\caption{PSI 100\% by length}",
        r"\multicolumn{6}{l}{\textit{Multilingual Retrieval}}",
        r"\multicolumn{6}{l}{\textit{Cross-lingual Retrieval}}",
        r"bge\_m3 \& co & 43.22",
    ):
        assert command in text, command
    rows = [line for line in text.splitlines() if line.endswith(r"\\") and not line.startswith(r"\multicolumn")]
    assert rows and all(len(re.findall(r"(?<!\\)&", row)) == 5 for row in rows)
    assert "1 $-$ min/max" in text


def test_psi_flags_mark_sparse_bins(excerpt_settings: pd.DataFrame) -> None:
    per_query = squad_bm25_per_query(12)  # 277 Q1 queries over 20 bins: some bins below 20 queries
    summary = aggregate.summarize(per_query, aggregate.bin_table(per_query, BUCKETS, METRICS.n_bins), 20)
    flags = build.psi_flags({("bm25", "eng-eng"): summary}, BUCKETS, METRICS.n_bins).iloc[0]
    used = summary.set_index("bucket")["psi_bins_used"]
    for b in BUCKETS:
        assert bool(flags[f"psi_low_bins_{b}"]) == (used[b] < METRICS.n_bins)
    assert bool(flags["psi_low_bins_Q1"])
    settings = build.settings_table({"own": {("bm25", "eng-eng"): summary}}, BUCKETS, METRICS.n_bins)
    text = layout.render_markdown(paper.settings_rendering(settings, layout.PaperLayout(BUCKETS, HEADERS, 20)))
    q1_psi = str(layout.display_decimal(summary.set_index("bucket").loc["Q1", "psi"]))
    assert f"| {q1_psi}† |" in text
    assert "† PSI left out position bins holding fewer than 20 queries." in text
    # published rows carry no flags and no counts
    text = layout.render_markdown(paper.settings_rendering(excerpt_settings, layout.PaperLayout(BUCKETS, HEADERS, 20)))
    assert "†" not in text and "| PosIR paper | bge-m3 | ara-ara | – |" in text


def test_main_table_markdown_shows_what_a_reader_compares(excerpt_settings: pd.DataFrame) -> None:
    """main.md: queries, nDCG@10 and PSI overall and per bucket (23 columns before); main.csv keeps the rest."""
    frames = read_published(require(EXCERPT), BUCKETS)
    table = build.main_table(frames, BUCKETS)
    header = render.main_markdown(table, BUCKETS).splitlines()[0]
    shown = [cell.strip() for cell in header.strip().strip("|").split("|")]
    per_bucket = [f"nDCG@10 {b}" for b in BUCKETS], [f"PSI {b}" for b in BUCKETS]
    assert shown == ["model", "setting", "queries", "nDCG@10", *per_bucket[0], "PSI", *per_bucket[1]]
    assert len(table.columns) > len(shown) and "ndcg@10_query_mean_Q1" in table.columns


def test_main_table_markdown_shows_missing_counts_as_dash(excerpt_settings: pd.DataFrame) -> None:
    frames = read_published(require(EXCERPT), BUCKETS)
    text = render.main_markdown(build.main_table(frames, BUCKETS), BUCKETS)
    assert "<NA>" not in text and "nan" not in text
