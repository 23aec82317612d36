"""A model evaluated in a language it was not trained for is flagged in every table.

USE multilingual v3 lists 16 languages; on Hindi it can collapse to near-random
nDCG@10, which a reader would take for a finding about position. Model entries
declare ``languages``; rows whose setting leaves them are marked (``‡``) with a note.
"""

from __future__ import annotations

import pandas as pd
import yaml

from posir.config import Evaluation, MetricParams, Setting, WorkflowConfig, load_config
from posir.results.io import read_result_tsv
from posir.steps.evaluation import bin_scores, summarize_run
from posir.tables import build, render
from tests.conftest import REPO


def shipped_config(**benchmarks: dict) -> WorkflowConfig:
    raw = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    raw["benchmarks"].update(benchmarks)
    return load_config(raw)


def test_shipped_models_declare_their_languages():
    # PosIR's Chinese is cmn (Mandarin); the model cards say Chinese (zho), which covers it
    cmn = {"builder": "posir_import", "language": "cmn", "posir_import": {"path": "/posir", "subset": "cmn-Hans/game"}}
    config = shipped_config(**{"posir.game.cmn": cmn})
    outside = config.languages_outside_model
    use = Evaluation("xquad-long", "use-m3", Setting("hin", "eng"))
    assert outside(use) == ["hin"]
    assert outside(Evaluation("xquad-long", "use-m3", Setting("deu", "eng"))) == []
    assert outside(Evaluation("xquad-long", "minilm-l6", Setting("zho", "eng"))) == ["zho"]
    assert outside(Evaluation("xquad-long", "me5-small", Setting("vie", "eng"))) == []
    # a one-vs-many corpus holds every language of the benchmark
    mul = outside(Evaluation("xquad-parallel", "use-m3", Setting("deu", "mul")))
    assert mul == ["hin", "ron", "vie"]
    assert outside(Evaluation("posir.game.cmn", "use-m3", Setting("cmn", "cmn"))) == []
    assert outside(Evaluation("posir.game.cmn", "minilm-l6", Setting("cmn", "cmn"))) == ["cmn"]
    # BM25 declares nothing and is never flagged
    assert outside(Evaluation("xquad-long", "bm25", Setting("hin", "eng"))) == []


def _summary(tmp_path, name: str, outside: list[str]) -> pd.DataFrame:
    per_query = pd.DataFrame(
        {"qid": ["a", "b"], "ndcg@10": [1.0, 0.5], "length_bucket": ["Q1", "Q1"], "position_bin": [0, 1]}
    )
    metrics = MetricParams().tables()
    bins = bin_scores(per_query, metrics, tmp_path / f"{name}.bins.tsv")
    summarize_run(per_query, bins, metrics, tmp_path / f"{name}.summary.tsv", outside)
    return read_result_tsv(tmp_path / f"{name}.summary.tsv")


def test_flagged_rows_are_marked_in_the_main_and_languages_tables(tmp_path):
    buckets = ["Q1", "Q2", "Q3", "Q4"]
    summaries = {
        ("use-m3", "hin-eng"): _summary(tmp_path, "hin", ["hin"]),
        ("use-m3", "deu-eng"): _summary(tmp_path, "deu", []),
    }
    main = build.main_table(summaries, buckets)
    assert main.set_index("setting").loc["hin-eng", "languages_outside_model"] == "hin"
    markdown = render.main_markdown(main, buckets)
    assert "| hin-eng‡ " in markdown and "| deu-eng " in markdown
    assert "not among the model's declared languages" in markdown
    languages = render.languages_markdown(build.languages_table(summaries, buckets), buckets)
    hin_cells = [line for line in languages.splitlines() if line.startswith("| use-m3")]
    assert hin_cells and all("‡" in line for line in hin_cells)


def test_unflagged_tables_carry_no_note(tmp_path):
    summaries = {("bm25", "hin-eng"): _summary(tmp_path, "bm25", [])}
    markdown = render.main_markdown(build.main_table(summaries, ["Q1", "Q2", "Q3", "Q4"]), ["Q1", "Q2", "Q3", "Q4"])
    assert "‡" not in markdown
