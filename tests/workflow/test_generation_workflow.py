"""LLM benchmark generation end to end: real SQuAD text as a raw corpus, the real SmolLM2 server, Snakemake.

SmolLM2-135M is weak, so nothing here judges content: the tests check
structure, invariants and accounting (every stage's counts add up and chain,
every kept span sits in its document, every drop has a reason, LLM usage is in
the card, a rerun is served from the cache with zero calls) and that the
evaluation matrix runs on the generated benchmark unchanged.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from posir import benchmark as fmt
from posir.text import locate_reference, normalize_with_offsets
from tests._snakemake import Build
from tests.conftest import REPO
from tests.workflow.conftest import shared_build

NAME = "gen-squad"
STAGE_CHAIN = [
    "read_corpus",
    "sample_documents",
    "generate_queries",
    "parse_questions",
    "locate_spans",
    "span_contrast",
    "grade_relevance",
    "false_negative_queries",
]


def raw_corpus(squad: dict) -> tuple[bytes, dict[str, int]]:
    """About ten real documents of one to three SQuAD paragraphs, one over 2048 tokens, and bad records (the
    file's bytes, and the line of each bad record by reason)."""
    article = squad["data"][1]
    paragraphs = [p["context"] for p in article["paragraphs"]]
    groups = [[0], [1], [2], [3], [4], [5], [6, 7], [8, 9], [10, 11, 12], [13, 14]]
    lines = [
        json.dumps(
            {
                "id": f"doc-{i:02d}",
                "title": article["title"],
                "domain": "wikipedia",
                "text": "\n\n".join(paragraphs[j] for j in group),
            }
        )
        for i, group in enumerate(groups)
    ]
    lines.append(json.dumps({"id": "doc-long", "text": "\n\n".join(paragraphs * 3), "domain": "wikipedia"}))
    bad = {
        "duplicate_id": len(lines) + 1,
        "missing_text": len(lines) + 2,
        "invalid_json": len(lines) + 3,
        "invalid_utf8": len(lines) + 4,
    }
    lines.append(json.dumps({"id": "doc-00", "text": "a second document with a taken id"}))
    lines.append(json.dumps({"id": "doc-notext", "title": "no text"}))
    lines.append('{"id": "doc-broken", "text": ')
    data = "\n".join(lines).encode("utf-8") + b'\n{"id": "doc-latin1", "text": "caf\xe9"}\n'
    return data, bad


OVERLAYS = ("reports_off", "generation")


@pytest.fixture(scope="session")
def build(tmp_path_factory, mirror, squad_dev, smollm2, shared_caches) -> Build:
    """tests/configs/generation.yaml over the raw corpus above, graded by this test run's SmolLM2 server."""
    data, _ = raw_corpus(squad_dev)
    local = {"llm": {"base_url": smollm2}, **shared_caches}
    return shared_build(
        tmp_path_factory,
        mirror,
        "generation",
        *OVERLAYS,
        local=local,
        before_run=lambda workdir: (workdir / "raw.jsonl").write_bytes(data),
    )


@pytest.fixture(scope="session")
def run(build: Build, squad_dev) -> dict:
    grading = build.config()["benchmarks"][NAME]["generation"]["grading"]
    return {"workdir": build.workdir, "bad": raw_corpus(squad_dev)[1], "grading": grading}


def card_of(workdir: Path) -> dict:
    return json.loads((workdir / f"results/benchmarks/{NAME}/card.json").read_text())


def stages_of(card: dict) -> dict[str, dict]:
    return {s["stage"]: s for s in card["stages"]}


def test_every_stage_adds_up_and_feeds_the_next(run):
    card = card_of(run["workdir"])
    stages = stages_of(card)
    assert set(STAGE_CHAIN) <= set(stages)
    for stage in stages.values():
        assert stage["entered"] - stage["left"] == sum(stage["dropped"].values()), stage
    assert stages["read_corpus"]["left"] == stages["sample_documents"]["entered"]
    for before, after in zip(STAGE_CHAIN[3:], STAGE_CHAIN[4:]):
        assert stages[before]["left"] == stages[after]["entered"], (before, after)
    assert stages["false_negative_documents"]["entered"] == stages["sample_documents"]["left"]
    assert card["counts"]["documents"] == stages["false_negative_documents"]["left"]
    assert card["counts"]["queries"] == stages["false_negative_queries"]["left"]
    sample = json.loads((run["workdir"] / f"results/generation/{NAME}/sample/counts.json").read_text())
    assert stages["generate_queries"]["entered"] == sample["positives"] == stages["sample_documents"]["left"]


def test_bad_raw_records_are_reported_by_line(run):
    drops = list(csv.DictReader(open(run["workdir"] / f"results/generation/{NAME}/corpus/drops.tsv"), delimiter="\t"))
    found = {d["reason"]: d["detail"] for d in drops}
    for reason, line in run["bad"].items():
        assert found[reason].startswith(f"line {line}:"), (reason, found.get(reason))
    stages = stages_of(card_of(run["workdir"]))
    assert stages["read_corpus"]["dropped"] == {reason: 1 for reason in run["bad"]}
    assert stages["sample_documents"]["dropped"].get("over_max_tokens") == 1  # doc-long


def test_every_kept_span_is_verified_in_its_document(run):
    grading = run["grading"]
    directory = run["workdir"] / "results/benchmarks" / NAME
    documents = {d.doc_id: d for d in fmt.read_corpus(directory / fmt.CORPUS)}
    positions = fmt.read_positions(directory / fmt.POSITIONS)
    queries = fmt.read_queries(directory / fmt.QUERIES)
    fmt.validate(list(documents.values()), queries, positions)
    located = {
        r["qid"]: r
        for r in map(json.loads, open(run["workdir"] / f"results/generation/{NAME}/false_negatives/kept.jsonl"))
    }
    assert set(located) == {p.qid for p in positions}
    for p in positions:
        text = documents[p.doc_id].text
        reference = located[p.qid]["reference"]
        match = locate_reference(text, reference)
        assert (match.span.start, match.span.end) == (p.span_start, p.span_end)
        if located[p.qid]["match"] == "exact":
            assert text[p.span_start : p.span_end] == reference.strip()
        else:
            assert normalize_with_offsets(text[p.span_start : p.span_end])[0] == normalize_with_offsets(reference)[0]
        assert located[p.qid]["region"] in ("first", "middle", "final")
        assert isinstance(located[p.qid]["honours_constraint"], bool)
        grades = located[p.qid]
        assert grades["grade_full"] >= grading["min_full_grade"]
        assert grades["grade_removed"] <= grades["grade_full"] - grading["min_grade_drop"]


def test_drop_report_covers_every_drop_with_a_reason(run):
    workdir = run["workdir"]
    card = card_of(workdir)
    drops = list(csv.DictReader(open(workdir / f"results/benchmarks/{NAME}/drops.tsv"), delimiter="\t"))
    assert all(d["reason"] for d in drops)
    per_stage: dict[str, int] = {}
    for d in drops:
        per_stage[d["stage"]] = per_stage.get(d["stage"], 0) + 1
    for stage in card["stages"]:
        assert per_stage.get(stage["stage"], 0) == stage["entered"] - stage["left"], stage


def test_llm_usage_per_stage_is_in_the_card(run):
    card = card_of(run["workdir"])
    usage = card["llm_usage"]
    assert {"generate_queries", "locate_spans", "grade_relevance"} <= set(usage)
    stages = stages_of(card)
    assert usage["generate_queries"]["items"] == stages["generate_queries"]["entered"]
    assert usage["locate_spans"]["items"] == stages["locate_spans"]["entered"]
    assert usage["grade_relevance"]["items"] == 2 * stages["grade_relevance"]["entered"]
    for stage in usage.values():
        assert stage["items"] == stage["ok"] + stage["failed"]
        assert stage["http_requests"] >= stage["items"] - stage["cache_hits"]
    assert usage["generate_queries"]["prompt_tokens"] > 0 and usage["generate_queries"]["completion_tokens"] > 0
    assert card["llm"]["model"] == "smollm2"
    print("stages", {s["stage"]: (s["entered"], s["left"], s["dropped"]) for s in card["stages"]})


def test_the_evaluation_matrix_runs_on_the_generated_benchmark(run):
    workdir = run["workdir"]
    n_queries = card_of(workdir)["counts"]["queries"]
    if n_queries:
        table = (workdir / f"results/tables/{NAME}/main.csv").read_text().splitlines()
        assert table[1].startswith("bm25,eng-eng,")
    assert (workdir / f"results/figures/{NAME}/positions.png").stat().st_size > 0


def test_rerun_is_served_from_the_cache_with_zero_calls(build, tmp_path):
    """Only schema-valid answers are cached (docs/llm.md): a rerun (of a copy) asks again exactly the calls that
    failed."""
    again = build.copy_to(tmp_path / "again")
    workdir = again.workdir
    first = card_of(workdir)["llm_usage"]
    before = {
        name: (workdir / f"results/benchmarks/{NAME}" / name).read_text()
        for name in (fmt.QUERIES, fmt.POSITIONS, fmt.CORPUS)
    }
    shutil.rmtree(workdir / "results/generation")
    shutil.rmtree(workdir / f"results/benchmarks/{NAME}")
    again.run(f"results/benchmarks/{NAME}/card.json", timeout=1200)
    again = card_of(workdir)["llm_usage"]
    assert set(again) == set(first)
    for stage, usage in again.items():
        uncached = first[stage]["failed"] - first[stage]["failures"]["rejected"]
        assert usage["items"] == first[stage]["items"], stage
        assert usage["cache_hits"] == first[stage]["items"] - uncached, stage
        assert usage["http_requests"] == uncached, stage  # zero when the first run had no failures
    for name, text in before.items():
        assert (workdir / f"results/benchmarks/{NAME}" / name).read_text() == text, name


def test_the_example_config_plans_only_the_generated_benchmark(tmp_path, mirror):
    """configs/generation_local.yaml merged over config.yaml: the generation stages and their evaluation, no
    paper table or translation of the default matrix (which would need the evaluations it replaces)."""
    rules = {rule for rule, _ in Build.prepare(tmp_path, mirror, [REPO / "configs/generation_local.yaml"]).planned()}
    assert {"generate_queries", "locate_spans", "assemble_generated_benchmark", "main_table"} <= rules
    assert not rules & {"translate_benchmark", "paper_tables", "published_table", "translation_comparison"}
