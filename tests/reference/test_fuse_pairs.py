"""The fused form of a pair through the real local SmolLM2: one LLM question per group, graded like a generated
query (PosIR section 3.3), kept beside the joined form. SmolLM2-135M writes weak questions, so these tests assert
the structure (every group answered or dropped with its reason, counts that add up, usage, the fused queries'
evidence), never what the model wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from posir import benchmark as fmt
from posir.builders.pairs import FUSED_SUFFIX, STAGE_FUSE, STAGE_FUSED_GRADE, EvidencePairsBenchmark
from posir.builders.squad import SquadParams, build_squad_long
from posir.evidence import EVIDENCE, FUSED, GROUPS, JOINED, read_evidence
from posir.jobs.pairs import PairsJob
from posir.llm.config import LLMConfig
from posir.metrics.params import MetricParams
from posir.steps.pairs import build_evidence_pairs, fuse_evidence_pairs
from posir.text import qwen3_token_counter

METRICS = MetricParams.from_config({})
PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
GROUPS_ASKED = 3


@pytest.fixture(scope="module")
def fused_run(squad_dev, tmp_path_factory, smollm2) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("fuse")
    # a short article: its documents fit the small model's context
    built = build_squad_long(
        squad_dev, SquadParams.from_config({"seed": 13, "max_articles": 2}), qwen3_token_counter(),
        METRICS.buckets, METRICS.n_bins,
    )  # fmt: skip
    source = root / "squad-long"
    fmt.finish(built, fmt.Provenance("squad-long", "squad_long_documents", "eng", {}, {}), METRICS.buckets, 20, source)
    entry = EvidencePairsBenchmark.from_config(
        "squad-long-pairs",
        {"builder": "evidence_pairs", "from": "squad-long",
         "params": {"max_groups": GROUPS_ASKED, "fuse": {"max_tokens": 64}}},
    )  # fmt: skip
    contract = {name: str(source / fmt.CONTRACT[name]) for name in ("corpus", "queries", "positions", "documents")}
    stage = root / "fuse"
    outputs = {"fused": str(stage / "fused.jsonl"), "drops": str(stage / fmt.DROPS), "counts": str(stage / fmt.COUNTS)}
    llm = LLMConfig.from_section(
        {"base_url": smollm2, "model": "smollm2", "api_key_env": None, "max_tokens": 64, "concurrency": 1,
         "max_retries": 1, "cache_path": str(root / "llm-cache.sqlite")}
    )  # fmt: skip
    prompts = [str(PROMPTS / f"{n}{s}") for n in ("fuse_questions", "grade_relevance") for s in (".md", ".schema.json")]
    stages = fuse_evidence_pairs(
        PairsJob(entry=entry, separator="\n\n", input={**contract, "prompt": prompts}, output=outputs, llm_endpoint=llm)
    )
    out = root / "squad-long-pairs"
    card = build_evidence_pairs(
        PairsJob(
            entry=entry,
            separator="\n\n",
            metrics=METRICS.positions(),
            input={**contract, **outputs},
            output={"card": str(out / fmt.CARD)},
        )
    )
    return {"stages": stages, "card": card, "out": out, "stage": stage}


def test_every_group_is_fused_or_dropped_with_its_reason_and_the_counts_add_up(fused_run) -> None:
    fuse, grade = fused_run["stages"]
    assert fuse.stage == STAGE_FUSE and fuse.entered == GROUPS_ASKED
    assert grade.stage == STAGE_FUSED_GRADE and grade.entered == fuse.left
    kept = fmt.read_jsonl(fused_run["stage"] / "fused.jsonl")
    assert len(kept) == grade.left
    for record in kept:
        assert record["question"].strip() and record["group"].count("+") == 1
        assert record["full_grade"] >= 3 and record["removed_grade"] <= record["full_grade"] - 1
    drops = fmt.read_drops(fused_run["stage"] / fmt.DROPS)
    assert all(d.reason and d.stage in (STAGE_FUSE, STAGE_FUSED_GRADE) for d in drops)
    counts = json.loads((fused_run["stage"] / fmt.COUNTS).read_text())
    assert counts["llm_usage"][STAGE_FUSE]["items"] == GROUPS_ASKED
    assert counts["llm_usage"].get(STAGE_FUSED_GRADE, {}).get("items", 0) == 2 * fuse.left  # full and removed


def test_a_fused_question_stands_beside_the_joined_one_with_the_same_pieces(fused_run) -> None:
    card, out = fused_run["card"], fused_run["out"]
    kept = fmt.read_jsonl(fused_run["stage"] / "fused.jsonl")
    assert card["pairs"]["groups"] == GROUPS_ASKED and card["pairs"]["fused"] == len(kept)
    assert [s["stage"] for s in card["stages"]][:3] == ["group_questions", STAGE_FUSE, STAGE_FUSED_GRADE]
    groups = fmt.read_table(out / GROUPS)
    assert sum(r["form"] == JOINED for r in groups) == GROUPS_ASKED
    assert sorted(r["qid"] for r in groups if r["form"] == FUSED) == sorted(r["group"] + FUSED_SUFFIX for r in kept)
    pieces: dict[str, list[tuple[int, int]]] = {}
    for piece in read_evidence(out / EVIDENCE):
        pieces.setdefault(piece.qid, []).append((piece.span_start, piece.span_end))
    for record in kept:
        assert pieces[record["group"] + FUSED_SUFFIX] == pieces[record["group"]]
    queries = {q.qid: q.text for q in fmt.read_queries(out / fmt.QUERIES)}
    assert all(queries[r["group"] + FUSED_SUFFIX] == r["question"] for r in kept)
