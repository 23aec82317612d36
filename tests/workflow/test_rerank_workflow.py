"""Reranking pipelines and the chunked first stage end to end: real SQuAD articles, BM25 and MiniLM, Snakemake."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pytest

from posir import benchmark as fmt
from posir.results.runs import ranked, read_trec_run
from tests._snakemake import Build, cores, planned_jobs
from tests.workflow.conftest import shared_build

PIPELINES = ["bm25.minilm-maxp", "bm25.minilm-firstp", "minilm-l6.minilm-maxp", "bm25.minilm-sample"]
MODELS = ["bm25", "minilm-l6", "minilm-l6-chunks", *PIPELINES]
OVERLAYS = ("reports_off", "rerank")


@pytest.fixture(scope="session")
def build(tmp_path_factory, mirror, shared_caches) -> Build:
    """tests/configs/rerank.yaml: three SQuAD articles, BM25 and MiniLM as first stages, MiniLM chunked, four
    pipelines."""
    return shared_build(tmp_path_factory, mirror, "rerank", *OVERLAYS, local=shared_caches, after=("controlled",))


@pytest.fixture(scope="session")
def workdir(build: Build) -> Path:
    return build.workdir


def run_of(workdir: Path, model: str) -> dict[str, list[tuple[str, float]]]:
    return ranked(read_trec_run(workdir / f"results/runs/squad-long/{model}/eng-eng.trec"))


def card_of(workdir: Path, model: str) -> dict:
    return json.loads((workdir / f"results/runs/squad-long/{model}/eng-eng.card.json").read_text())


def test_a_reranked_run_is_the_first_stages_top_depth_reordered_above_its_tail(workdir):
    first, reranked = run_of(workdir, "bm25"), run_of(workdir, "bm25.minilm-maxp")
    assert reranked.keys() == first.keys()
    moved = 0
    for qid, ranking in first.items():
        head, tail = [d for d, _ in ranking[:8]], [d for d, _ in ranking[8:]]
        new = [d for d, _ in reranked[qid]]
        assert sorted(new[:8]) == sorted(head) and new[8:] == tail
        moved += new[:8] != head
    assert moved > len(first) / 4  # MiniLM reorders BM25's head for many queries


def test_rows_sit_beside_first_stages_in_the_main_table_and_the_grid(workdir):
    table = pd.read_csv(workdir / "results/tables/squad-long/main.csv")
    assert set(table["model"]) == set(MODELS)
    n_queries = sum(1 for _ in open(workdir / "results/benchmarks/squad-long/queries.jsonl"))
    full = table[table["model"] != "bm25.minilm-sample"]
    assert (full["n_queries"] == n_queries).all()
    assert table.set_index("model").loc["bm25.minilm-sample", "n_queries"] == 100
    assert (workdir / "results/figures/squad-long/grid.png").stat().st_size > 0
    assert (workdir / "results/figures/squad-long/bm25.minilm-maxp/eng-eng.png").stat().st_size > 0


def test_the_sample_keeps_every_filled_cell_and_says_so_in_its_card(workdir):
    card = card_of(workdir, "bm25.minilm-sample")
    assert card["queries"]["reranked"] == 100 and card["queries"]["sample"]["seed"] == 5
    positions = fmt.read_positions(workdir / "results/benchmarks/squad-long/positions.tsv")
    filled = {(p.length_bucket, p.position_bin) for p in positions}
    assert {tuple(cell.split(":")) for cell in card["queries"]["per_cell"]} == {(b, str(i)) for b, i in filled}
    assert all(cell["kept"] >= 1 for cell in card["queries"]["per_cell"].values())
    evaluated = pd.read_csv(
        workdir / "results/runs/squad-long/bm25.minilm-sample/eng-eng.queries.tsv", sep="\t", dtype=str
    )
    scored = pd.read_csv(
        workdir / "results/scores/squad-long/bm25.minilm-sample/eng-eng.tsv", sep="\t", dtype={"qid": str}
    )
    assert sorted(scored["qid"]) == sorted(evaluated["qid"]) and len(scored) == 100


def test_the_chunked_first_stage_sees_every_token_of_long_documents(workdir):
    truncated = pd.read_csv(workdir / "results/scores/squad-long/minilm-l6/eng-eng.tsv", sep="\t")
    chunked = pd.read_csv(workdir / "results/scores/squad-long/minilm-l6-chunks/eng-eng.tsv", sep="\t")
    assert (truncated["doc_input_tokens"] <= 256).all()
    long_documents = chunked["doc_token_length"] > 600
    assert long_documents.any() and (chunked.loc[long_documents, "doc_input_tokens"] > 600).all()


def test_windows_and_queries_are_embedded_once_for_every_use(build, tmp_path):
    """The pipelines' bi-encoder found every window and query that the chunked entry and MiniLM had embedded."""
    again = build.copy_to(tmp_path / "again")
    pipelines = ("bm25.minilm-maxp", "bm25.minilm-firstp", "minilm-l6.minilm-maxp")
    runs = [f"results/runs/squad-long/{model}/eng-eng.trec" for model in pipelines]
    # these reranks again, nothing after (the targets first: --forcerun takes every word after it as a rule)
    done = again.snakemake("--cores", cores(), *runs, "--forcerun", "rerank")
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(w["model"] for rule, w in planned_jobs(done.stderr) if rule == "rerank") == sorted(pipelines)
    assert {rule for rule, _ in planned_jobs(done.stderr)} == {"rerank"}
    for model in pipelines:
        counts = card_of(again.workdir, model)["scorer_counts"]
        assert counts["encoded"] == 0 and counts["from_cache"] > 0, (model, counts)


def test_a_pipeline_added_to_the_config_schedules_only_its_own_jobs(build):
    evaluation = copy.deepcopy(build.config()["evaluation"])
    evaluation[0]["models"].append("bm25.minilm-sump")
    added = {
        "pipelines": {"bm25.minilm-sump": {"first_stage": "bm25", "second_stage": "minilm-sump", "depth": 8}},
        "scorers": {"minilm-sump": {"backend": "bi-encoder", "model": "minilm-l6", "aggregation": "sump"}},
        "evaluation": evaluation,
    }
    jobs = build.planned(more=added)
    per_model = [(rule, w) for rule, w in jobs if "model" in w]
    assert sorted(rule for rule, _ in per_model) == ["rerank", "score_run"]
    assert all(w["model"] == "bm25.minilm-sump" for _, w in per_model)
    assert {rule for rule, w in jobs if "model" not in w} == {
        "main_table",
        "plot_position_grid",
        "setting_tables",
        "exposure",  # who gets seen reads every run of the benchmark
        "analyse_runs_squad_long_1",  # so do the summaries, trend tests and figures of its part of the runs
        "all",
    }


@pytest.mark.parametrize("chunked_evaluated", [True, False])
def test_a_bi_encoder_rerank_waits_for_the_chunked_entry_that_encodes_its_windows(tmp_path, mirror, chunked_evaluated):
    """Same windows, one encode: the rerank job depends on the chunked entry's corpus embeddings when both are
    evaluated, so it reads the windows from the cache instead of encoding them beside it; never adds that job."""
    empty = Build.prepare(tmp_path, mirror, OVERLAYS)
    more = None
    if not chunked_evaluated:
        more = {"evaluation": copy.deepcopy(empty.config()["evaluation"])}
        more["evaluation"][0]["models"].remove("minilm-l6-chunks")
    jobs = empty.planned("results/runs/squad-long/bm25.minilm-maxp/eng-eng.trec", more=more)
    encodes = {(w["model"], w["kind"]) for rule, w in jobs if rule == "encode_texts"}
    assert (("minilm-l6-chunks", "corpus") in encodes) == chunked_evaluated
    assert {model for model, _ in encodes} <= {"minilm-l6-chunks"}
