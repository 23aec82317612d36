"""An LLM second stage end to end: BM25 reranked by the real SmolLM2 server's yes/no logprobs, Snakemake.

SmolLM2-135M is weak, so nothing here judges content: the tests check that the run is BM25's top documents
reordered above its tail, that every pair was asked once and accounted for, that a rerun is served from the
score cache with zero calls, and that the opt-in example config plans squad-long only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from posir.results.runs import ranked, read_trec_run
from tests._snakemake import Build, cores, merged_config, planned_jobs
from tests.conftest import REPO
from tests.workflow.conftest import shared_build

OVERLAYS = (REPO / "configs/rerank_llm.yaml", "reports_off", "llm_rerank")
CONFIG = merged_config(*OVERLAYS)
DEPTH = CONFIG["pipelines"]["bm25.smollm2"]["depth"]
QUERIES = CONFIG["benchmarks"]["squad-long"]["params"]["max_queries"]


@pytest.fixture(scope="session")
def build(tmp_path_factory, mirror, smollm2, shared_caches) -> Build:
    """tests/configs/llm_rerank.yaml over the example config: BM25 and BM25 -> SmolLM2 at depth 3 on the first 6
    queries of one SQuAD article (up to 18 calls), against this test run's SmolLM2 server."""
    local = {"llm": {"base_url": smollm2}, **shared_caches}
    return shared_build(tmp_path_factory, mirror, "llm-rerank", *OVERLAYS, local=local)


@pytest.fixture(scope="session")
def workdir(build: Build) -> Path:
    return build.workdir


def card_of(workdir: Path) -> dict:
    return json.loads((workdir / "results/runs/squad-long/bm25.smollm2/eng-eng.card.json").read_text())


def candidate_pairs(workdir: Path) -> int:
    """BM25's top-DEPTH documents per query: fewer than DEPTH where BM25 matched fewer documents."""
    first = ranked(read_trec_run(workdir / "results/runs/squad-long/bm25/eng-eng.trec"))
    assert len(first) == QUERIES
    return sum(min(DEPTH, len(ranking)) for ranking in first.values())


def test_the_llm_reorders_bm25s_top_documents_above_its_tail(workdir):
    first = ranked(read_trec_run(workdir / "results/runs/squad-long/bm25/eng-eng.trec"))
    reranked = ranked(read_trec_run(workdir / "results/runs/squad-long/bm25.smollm2/eng-eng.trec"))
    assert reranked.keys() == first.keys() and len(first) == QUERIES
    for qid, ranking in first.items():
        new = [d for d, _ in reranked[qid]]
        assert sorted(new[:DEPTH]) == sorted(d for d, _ in ranking[:DEPTH])
        assert new[DEPTH:] == [d for d, _ in ranking[DEPTH:]]
    # the run holds the decided order as rank scores; the second stage's own scores sit beside it
    raw = pd.read_csv(workdir / "results/runs/squad-long/bm25.smollm2/eng-eng.scores.tsv", sep="\t")
    scored = raw["score"].dropna()
    assert len(scored) > 0 and scored.between(0.0, 1.0).all()  # P(yes): SmolLM2 via xllamacpp returns logprobs


def test_every_pair_is_asked_once_and_accounted_for(workdir, smollm2):
    card = card_of(workdir)
    pairs = card["pairs"]["candidates"]
    assert pairs == candidate_pairs(workdir) > 0
    assert card["pairs"]["scored"] + card["pairs"]["unscored"] == pairs
    assert card["second_stage"]["identity"]["method"] == "logprobs"
    counts = card["scorer_counts"]
    assert counts["hits"] + counts["computed"] + counts["failed"] == pairs
    assert card["pairs"]["unscored"] == counts["failed"]
    usage = card["llm_usage"]["rerank:bm25.smollm2"]
    assert usage["http_requests"] >= counts["computed"]
    assert smollm2 not in json.dumps(card)  # counts only: no endpoint, prompt or answer in the card


def test_a_rerun_is_served_from_the_score_cache_with_zero_calls(build, tmp_path):
    again = build.copy_to(tmp_path / "again")
    workdir = again.workdir
    run = "results/runs/squad-long/bm25.smollm2/eng-eng.trec"
    before = (workdir / run).read_text()
    # the rerank alone: the run first, since --forcerun takes every word after it as a rule
    done = again.snakemake("--cores", cores(), run, "--forcerun", "rerank")
    assert done.returncode == 0, done.stderr[-3000:]
    assert [rule for rule, _ in planned_jobs(done.stderr)] == ["rerank"]
    card = card_of(workdir)
    assert card["scorer_counts"]["computed"] == 0
    assert card["scorer_counts"]["hits"] == candidate_pairs(workdir) - card["pairs"]["unscored"]
    assert all(stage["http_requests"] == 0 for stage in (card["llm_usage"] or {}).values())
    assert (workdir / run).read_text() == before


def test_the_example_config_plans_squad_long_only(tmp_path, mirror):
    dry = Build.prepare(tmp_path, mirror, [REPO / "configs/rerank_llm.yaml"]).snakemake("-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned_jobs(dry.stdout)
    assert {w["benchmark"] for _, w in jobs if "benchmark" in w} == {"squad-long"}
    assert ("rerank", {"benchmark": "squad-long", "model": "bm25.smollm2", "setting": "eng-eng"}) in jobs
    # the prompts are inputs: editing one reruns the LLM rerank (its cache keys on the prompt's hash)
    block = next(
        b
        for b in re.split(r"\n(?=(?:local)?rule \w+:)", dry.stdout)
        if b.startswith("rule rerank:") and "model=bm25.smollm2" in b
    )
    inputs = re.search(r"input: (.*)", block).group(1)
    assert "prompts/relevance_yes_no.md" in inputs and "prompts/grade_relevance.schema.json" in inputs
    assert not re.search(r"^rule (paper_tables|translate_benchmark)", dry.stdout, flags=re.M)
