"""The LLM backend, the refusal confirmation and the judge against the real local server (SmolLM2-135M).

The model is weak: these tests check structure and accounting (every unit
translated or dropped with a reason, usage counted, the cache answering a
rerun), never translation quality. The source is a real, trimmed benchmark:
the two shortest documents of XQuAD's parallel English variant and a few of
their questions.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from posir import benchmark as fmt
from posir.builders.xquad import ParallelBenchmark
from posir.config import MetricParams
from posir.llm import LLMClient, LLMConfig, load_prompt
from posir.plan.jobs import BuildJob, JudgeJob, JudgeTableJob, TranslateJob
from posir.steps.benchmarks import build_parallel_variant
from posir.steps.translation import judge_translation, translate_benchmark, write_judge_tables
from posir.translate.backends import LLMTranslator
from posir.translate.pipeline import DOCUMENT_STAGES, QUERY_STAGES
from posir.translate.spec import TranslationEntry

METRICS = MetricParams.from_config({})
ENTRY = TranslationEntry.from_config(
    "tiny-llm",
    {
        "builder": "translation",
        "from": "tiny",
        "translations": {"spa": {"backend": "llm"}},
        "filters": {"refusal": {"llm_confirm": True}},
        "judge": {"sample": 2, "max_chars": 1200},
    },
)


@pytest.fixture(scope="module")
def tiny_source(mirror, tmp_path_factory) -> Path:
    """Two shortest XQuAD parallel English documents with up to 2 questions each, in our format."""
    root = tmp_path_factory.mktemp("tiny")
    english = mirror / "xquad" / "xquad.en.json"
    entry = ParallelBenchmark.from_config(
        "xquad-parallel",
        {"builder": "xquad_parallel", "languages": ["eng"], "sources": {"eng": "xquad_eng"}, "params": {"seed": 13}},
    )
    build_parallel_variant(
        BuildJob(
            entry=entry,
            metrics=METRICS.positions(),
            wildcards={"language": "eng"},
            input={"english": str(english), "language": str(english)},
            output={"card": str(root / "full" / fmt.CARD)},
        )
    )
    docs = sorted(fmt.read_corpus(root / "full" / fmt.CORPUS), key=lambda d: len(d.text))[:2]
    keep = {d.doc_id for d in docs}
    positions = [p for p in fmt.read_positions(root / "full" / fmt.POSITIONS) if p.doc_id in keep]
    positions = [p for doc_id in keep for p in [q for q in positions if q.doc_id == doc_id][:2]]
    qids = {p.qid for p in positions}
    queries = [q for q in fmt.read_queries(root / "full" / fmt.QUERIES) if q.qid in qids]
    tokens = {r["doc_id"]: int(r["token_length"]) for r in fmt.read_table(root / "full" / fmt.DOCUMENTS)}
    out = root / "tiny-eng"
    built = fmt.BuiltBenchmark(docs, queries, positions, [], [], {d: tokens[d] for d in keep})
    fmt.finish(built, fmt.Provenance("tiny", "xquad_parallel", "eng", {}, {}), METRICS.buckets, METRICS.n_bins, out)
    return out


@pytest.fixture(scope="module")
def llm_run(tiny_source, tmp_path_factory, smollm2) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("llm")
    llm = LLMConfig.from_section(
        {
            "base_url": smollm2,
            "model": "smollm2",
            "api_key_env": None,
            "max_tokens": 256,
            "concurrency": 1,
            "max_retries": 1,
            "cache_path": str(root / "llm-cache.sqlite"),
        }
    )
    contract = {
        name: str(tiny_source / file) for name, file in fmt.CONTRACT.items() if name not in ("drops", "card")
    }  # the source variant's files, as the translate rule reads them
    out = root / "tiny-llm-spa"
    card = translate_benchmark(
        TranslateJob(
            entry=ENTRY,
            separator="\n\n",
            llm=llm,
            metrics=METRICS.positions(),
            input=contract,
            output={"card": str(out / fmt.CARD)},
            wildcards={"language": "spa"},
        ),
        progress=False,
    )
    # The answered queries again, through a new client on the same cache: no HTTP request may be made.
    # (Failed answers are not cached and would be asked again; the weak model's take minutes.)
    answered = [
        q.text
        for q in fmt.read_queries(tiny_source / fmt.QUERIES)
        if q.qid
        not in {
            d["record"] for d in fmt.read_table(root / "tiny-llm-spa" / fmt.DROPS) if d["stage"] == "translate_queries"
        }
    ]
    client = LLMClient(llm, progress=False)
    again = LLMTranslator(client, load_prompt("translate"), "eng", "spa")
    again_results = again.translate(answered, "queries")
    again_usage = again.usage()
    again.close()
    judged = None
    if card["counts"]["documents"]:
        judged = judge_translation(
            JudgeJob(
                entry=ENTRY,
                llm=llm,
                wildcards={"language": "spa"},
                input={
                    "source": str(tiny_source / fmt.CORPUS),
                    "corpus": str(out / fmt.CORPUS),
                    "documents": str(out / fmt.DOCUMENTS),
                },
                output={"judged": str(root / "judge.tsv")},
            )
        )
    return {
        "card": card,
        "again": (answered, again_results, again_usage),
        "out": root / "tiny-llm-spa",
        "judged": judged,
        "root": root,
        "source": tiny_source,
    }


def test_every_unit_is_translated_or_dropped_with_a_reason(llm_run) -> None:
    card, out = llm_run["card"], llm_run["out"]
    usage = card["translation"]["usage"]
    n_paragraphs = card["translation"]["units"]["paragraphs"]
    n_queries = card["translation"]["units"]["queries"]
    assert usage["translate_documents"]["items"] == n_paragraphs > 0
    assert usage["translate_queries"]["items"] == n_queries > 0
    for stage in ("translate_documents", "translate_queries"):
        assert usage[stage]["ok"] + usage[stage]["failed"] == usage[stage]["items"]
        assert usage[stage]["http_requests"] >= usage[stage]["items"] and usage[stage]["prompt_tokens"] > 0
    drops = fmt.read_table(out / fmt.DROPS)
    assert all(d["reason"] for d in drops)
    failed_reasons = {d["reason"] for d in drops if d["stage"].startswith("translate_")}
    assert all(r.startswith("translation_failed:llm_") or r == "empty_translation" for r in failed_reasons)
    counts = Counter(d["stage"] for d in drops)
    source_docs = len(fmt.read_corpus(llm_run["source"] / fmt.CORPUS))
    source_queries = len(fmt.read_queries(llm_run["source"] / fmt.QUERIES))
    assert source_docs == card["counts"]["documents"] + sum(counts[s] for s in DOCUMENT_STAGES)
    assert source_queries == card["counts"]["queries"] + sum(counts[s] for s in QUERY_STAGES)
    assert card["translation"]["backend"]["model"] == "smollm2"


def test_refusal_confirmation_is_counted(llm_run) -> None:
    confirmation = llm_run["card"]["translation"]["refusal_llm_confirmation"]
    assert confirmation["enabled"] is True
    flagged = sum(1 for d in fmt.read_table(llm_run["out"] / fmt.DROPS) if d["stage"].startswith("refusal_"))
    assert confirmation.get("candidates", 0) == flagged + confirmation.get("cleared", 0)


def test_a_rerun_is_answered_by_the_cache(llm_run) -> None:
    answered, results, usage = llm_run["again"]
    assert answered, "the model answered no query: nothing was cached"
    stage = usage["translate_queries"]
    assert stage["cache_hits"] == stage["items"] == len(set(answered)) and stage["http_requests"] == 0
    assert all(r.ok for r in results)


def test_judge_rates_a_sample_and_summarises(llm_run, tmp_path) -> None:
    judged = llm_run["judged"]
    if judged is None:
        pytest.skip("the weak model's translations were all dropped: nothing to judge")
    assert len(judged) == min(2, llm_run["card"]["counts"]["documents"])
    for _, row in judged.iterrows():
        if row["ok"]:
            assert all(1 <= row[d] <= 5 for d in ("fluency", "accuracy", "completeness", "style"))
        else:
            assert row["error_kind"]
    usage = json.loads((llm_run["root"] / "judge.usage.json").read_text())
    assert usage["judge_translation"]["items"] == len(judged)
    table = write_judge_tables(
        JudgeTableJob(
            judged_keys=[("tiny-llm", "spa", "llm")],
            input={"judged": [str(llm_run["root"] / "judge.tsv")]},
            output={"csv": str(tmp_path / "t.csv"), "markdown": str(tmp_path / "t.md")},
        )
    )
    row = table.iloc[0]
    assert row["sampled"] == len(judged) and row["judged"] + row["failed"] == row["sampled"]
    assert (tmp_path / "t.md").read_text().startswith("| benchmark")
