"""Published result files with out-of-range values or models missing settings (PosIR Tables 2-3).

A model missing a setting used to be averaged over fewer settings with no mark
(bge-m3 42.84 instead of 43.22, beside models averaged over 10), and values outside
[0, 1] (34.08, -0.5) were accepted and shown as 380.61. Each case starts from the
real 2-model excerpt of PosIR's published file and breaks it the way a careless
edit would.
"""

from __future__ import annotations

import copy
import json

import pytest

from posir.published import PublishedError, summaries_from_eval_metrics
from posir.tables import build, layout, paper
from tests._realdata import EXCERPT, METRICS, require

BUCKETS = METRICS.bucket_names
HEADERS = {b.name: b.header for b in METRICS.buckets}


@pytest.fixture(scope="module")
def excerpt() -> dict:
    return json.loads(require(EXCERPT).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("key", "value"), [("nDCG@10", 34.08), ("PSI(Q2)", -0.5), ("nDCG@10(Q1)", 1.2)])
def test_values_outside_the_unit_interval_are_refused_naming_the_cell(excerpt, key, value):
    broken = copy.deepcopy(excerpt)
    broken["bge-m3"]["eng-eng"][key] = value
    with pytest.raises(
        PublishedError,
        match=rf"bge-m3/eng-eng/{key.replace('(', '[(]').replace(')', '[)]')}: "
        rf"{value} is outside \[0, 1\]",
    ):
        summaries_from_eval_metrics(broken, BUCKETS, origin="excerpt")


def _without_one_setting(excerpt: dict) -> dict:
    broken = copy.deepcopy(excerpt)
    del broken["bge-m3"]["deu-deu"]
    return broken


def test_a_model_missing_a_setting_is_marked_in_every_mean(excerpt):
    settings = build.settings_table(
        {"PosIR paper": summaries_from_eval_metrics(_without_one_setting(excerpt), BUCKETS)}, BUCKETS, METRICS.n_bins
    )
    ranking, correlation = build.ranking_table(settings, BUCKETS, {"bge-m3": 54.6})
    row = ranking.set_index("model").loc["bge-m3"]
    assert row["n_settings"] == 9 and row["missing_settings"] == "deu-deu"
    assert ranking.set_index("model").loc["Qwen3-Embedding-0.6B", "missing_settings"] == ""
    ranking_md = layout.render_markdown(
        paper.ranking_rendering(ranking, correlation, "MMTEB", layout.PaperLayout(BUCKETS, HEADERS, 10))
    )
    bge = next(line for line in ranking_md.splitlines() if line.startswith("| bge-m3 |"))
    assert "42.84*" in bge, bge
    assert "missing deu-deu" in ranking_md
    position = build.position_bias_table(settings, BUCKETS)
    position_md = layout.render_markdown(
        paper.position_bias_rendering(position, layout.PaperLayout(BUCKETS, HEADERS, 10))
    )
    bge = next(line for line in position_md.splitlines() if line.startswith("| bge-m3 |"))
    assert bge.count("*") == 1 + len(BUCKETS), bge


def test_a_table_told_to_refuse_incomplete_models_names_the_model_and_settings(excerpt):
    settings = build.settings_table(
        {"PosIR paper": summaries_from_eval_metrics(_without_one_setting(excerpt), BUCKETS)}, BUCKETS, METRICS.n_bins
    )
    with pytest.raises(
        build.IncompleteModelError,
        match=r"'bge-m3' has no result for 1 of the 10 monolingual "
        r"settings .*\(deu-deu\)",
    ):
        build.ranking_table(settings, BUCKETS, None, incomplete="refuse")
