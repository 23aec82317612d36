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
import yaml

from posir.runs import ranked, read_trec_run
from tests._configs import without_reports
from tests._snakemake import planned_jobs, snakemake, workflow_run
from tests.conftest import REPO

pytestmark = pytest.mark.workflow
DEPTH = 3
LLM_SERVER = (4096, 2)  # (context length, threads) of the smollm2 fixture: the prompts hold long documents


def llm_config(base_url: str) -> dict:
    """One SQuAD article, 12 queries: BM25 and BM25 -> SmolLM2 at depth 3 (up to 36 calls)."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    example = yaml.safe_load((REPO / "configs/rerank_llm.yaml").read_text())
    config["benchmarks"] = {"squad-long": config["benchmarks"]["squad-long"]}
    config["benchmarks"]["squad-long"]["params"].update(max_articles=1, max_queries=12)
    config["llm"] = {**example["llm"], "base_url": base_url, "timeout": 300, "max_retries": 1}
    config["scorers"] = example["scorers"]
    config["pipelines"] = {"bm25.smollm2": {"first_stage": "bm25", "second_stage": "smollm2-yes-no", "depth": DEPTH}}
    config["evaluation"] = [{"benchmark": "squad-long", "models": ["bm25", "bm25.smollm2"], "settings": ["eng-eng"]}]
    return without_reports(config)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror, smollm2) -> Path:
    return workflow_run(tmp_path_factory.mktemp("rerank-llm"), llm_config(smollm2), mirror)


def card_of(workdir: Path) -> dict:
    return json.loads((workdir / "results/runs/squad-long/bm25.smollm2/eng-eng.card.json").read_text())


def candidate_pairs(workdir: Path) -> int:
    """BM25's top-DEPTH documents per query: fewer than DEPTH where BM25 matched fewer documents."""
    first = ranked(read_trec_run(workdir / "results/runs/squad-long/bm25/eng-eng.trec"))
    assert len(first) == 12
    return sum(min(DEPTH, len(ranking)) for ranking in first.values())


def test_the_llm_reorders_bm25s_top_documents_above_its_tail(workdir):
    first = ranked(read_trec_run(workdir / "results/runs/squad-long/bm25/eng-eng.trec"))
    reranked = ranked(read_trec_run(workdir / "results/runs/squad-long/bm25.smollm2/eng-eng.trec"))
    assert reranked.keys() == first.keys() and len(first) == 12
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


def test_a_rerun_is_served_from_the_score_cache_with_zero_calls(workdir, mirror):
    before = (workdir / "results/runs/squad-long/bm25.smollm2/eng-eng.trec").read_text()
    done = snakemake(workdir, "--cores", "2", "--forcerun", "rerank", mirror=mirror)
    assert done.returncode == 0, done.stderr[-3000:]
    card = card_of(workdir)
    assert card["scorer_counts"]["computed"] == 0
    assert card["scorer_counts"]["hits"] == candidate_pairs(workdir) - card["pairs"]["unscored"]
    assert all(stage["http_requests"] == 0 for stage in (card["llm_usage"] or {}).values())
    assert (workdir / "results/runs/squad-long/bm25.smollm2/eng-eng.trec").read_text() == before


def test_the_example_config_plans_squad_long_only(tmp_path, mirror):
    (tmp_path / "config.yaml").write_text((REPO / "config.yaml").read_text())
    dry = snakemake(tmp_path, "-n", "--configfile", str(REPO / "configs/rerank_llm.yaml"), mirror=mirror)
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
