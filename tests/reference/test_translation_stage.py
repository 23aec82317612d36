"""The translation stage on XQuAD's parallel English documents: real apertium and real human Spanish.

Faults are injected by wrapping the real apertium translator and replacing a
few units' outputs (a meta prefix, refusals, a runaway repetition, a failed
call); everything else is real. Checks: what each filter removes or fixes,
cascading deletion, drop accounting, qrels and positions aligned with the
source, and that human translations supplied as files reproduce the XQuAD
parallel builder exactly.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from posir import benchmark as fmt
from posir.builders.xquad import ParallelBenchmark
from posir.config import MetricParams
from posir.plan.jobs import BuildJob, TranslateJob
from posir.steps.benchmarks import build_parallel_variant
from posir.steps.translation import translate_benchmark
from posir.translate.apertium import Apertium
from posir.translate.backends import ApertiumTranslator, Translation
from posir.translate.cache import TranslationCache
from posir.translate.pipeline import DOCUMENT_STAGES, QUERY_STAGES
from posir.translate.spec import TranslationEntry

METRICS = MetricParams.from_config({})
PARALLEL = ParallelBenchmark.from_config(
    "xquad-parallel",
    {
        "builder": "xquad_parallel",
        "languages": ["eng", "spa"],
        "sources": {"eng": "xquad_eng", "spa": "xquad_spa"},
        "params": {"seed": 13},
    },
)
APERTIUM = TranslationEntry.from_config(
    "xquad-parallel-apertium",
    {
        "builder": "translation",
        "from": "xquad-parallel",
        "translations": {"spa": {"backend": "apertium", "pair": "eng-spa"}},
    },
)
HUMAN = TranslationEntry.from_config(
    "xquad-parallel-human",
    {
        "builder": "translation",
        "from": "xquad-parallel",
        "translations": {"spa": {"backend": "parallel", "source_file": "xquad_eng", "target_file": "xquad_spa"}},
    },
)


def translate_job(entry: TranslationEntry, source: Path, out: Path, **inputs: Path) -> TranslateJob:
    """The translate rule's job: the source variant's contract files (and a backend's files) in, a variant out."""
    contract = {name: str(source / file) for name, file in fmt.CONTRACT.items() if name not in ("drops", "card")}
    return TranslateJob(
        entry=entry,
        separator="\n\n",
        metrics=METRICS.positions(),
        input={**contract, **{role: str(path) for role, path in inputs.items()}},
        output={"card": str(out / fmt.CARD)},
        wildcards={"language": "spa"},
    )


@pytest.fixture(scope="module")
def built(mirror, tmp_path_factory) -> dict[str, Path]:
    """XQuAD parallel English (the source) and Spanish (the human reference) in our format."""
    root = tmp_path_factory.mktemp("xquad")
    english, spanish = mirror / "xquad" / "xquad.en.json", mirror / "xquad" / "xquad.es.json"
    for language, path in (("eng", english), ("spa", spanish)):
        build_parallel_variant(
            BuildJob(
                entry=PARALLEL,
                metrics=METRICS.positions(),
                wildcards={"language": language},
                input={"english": str(english), "language": str(path)},
                output={"card": str(root / f"xquad-parallel-{language}" / fmt.CARD)},
            )
        )
    return {
        "eng": root / "xquad-parallel-eng",
        "spa": root / "xquad-parallel-spa",
        "root": root,
        "english": english,
        "spanish": spanish,
    }


class Faulty:
    """The real apertium translator with chosen units' outputs replaced (fault injection)."""

    def __init__(self, real: ApertiumTranslator, faults: dict[str, Any]) -> None:
        self.real, self.faults, self.backend = real, faults, "apertium"

    def translate(self, texts, unit, ids=None):
        out = self.real.translate(texts, unit, ids)
        for i, record in enumerate(ids or []):
            fault = self.faults.get(record)
            if isinstance(fault, Translation):
                out[i] = fault
            elif callable(fault):
                out[i] = Translation(True, fault(out[i].text))
        return out

    def describe(self):
        return {**self.real.describe(), "faults_injected": sorted(self.faults)}

    def usage(self):
        return self.real.usage()

    def close(self):
        self.real.close()


def read_drops(directory: Path) -> list[dict[str, str]]:
    with open(directory / fmt.DROPS, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture(scope="module")
def faulty_run(built, tmp_path_factory) -> dict[str, Any]:
    source = built["eng"]
    docs = fmt.read_corpus(source / fmt.CORPUS)
    positions = fmt.read_positions(source / fmt.POSITIONS)
    by_doc: dict[str, list[fmt.Position]] = {}
    for p in positions:
        by_doc.setdefault(p.doc_id, []).append(p)
    multi = [d.doc_id for d in docs if d.text.count("\n\n") >= 1 and len(by_doc.get(d.doc_id, [])) >= 3]
    prefixed, refused, runaway, failed = multi[:4]
    queries = [
        q
        for q in fmt.read_queries(source / fmt.QUERIES)
        if by_doc_of(positions, q.qid) not in {prefixed, refused, runaway, failed}
    ]
    fixed_query, refused_query = queries[0].qid, queries[1].qid
    faults: dict[str, Any] = {
        f"{prefixed}#p0": lambda t: "Here is the Spanish translation of the text:\n\n" + t,
        f"{refused}#p1": lambda t: "I'm sorry, but I cannot translate this paragraph.",
        f"{runaway}#p0": lambda t: " ".join([t] * 15),
        f"{failed}#p1": Translation(False, error_kind="engine_error", error="injected"),
        fixed_query: lambda t: "Translation: " + t,
        refused_query: lambda t: "Lo siento, no puedo ayudar con eso.",
    }
    cache = TranslationCache(tmp_path_factory.mktemp("cache") / "cache.sqlite")
    translator = Faulty(ApertiumTranslator(Apertium("eng-spa"), cache, chunk_texts=200, progress=False), faults)
    out = tmp_path_factory.mktemp("faulty") / "xquad-parallel-apertium-spa"
    card = translate_benchmark(translate_job(APERTIUM, source, out), translator=translator, progress=False)
    return {
        "card": card,
        "out": out,
        "source": source,
        "docs": {"prefixed": prefixed, "refused": refused, "runaway": runaway, "failed": failed},
        "fixed_query": fixed_query,
        "refused_query": refused_query,
        "by_doc": by_doc,
    }


def by_doc_of(positions: list[fmt.Position], qid: str) -> str:
    return next(p.doc_id for p in positions if p.qid == qid)


def test_each_fault_is_removed_at_its_stage_with_a_reason(faulty_run) -> None:
    drops = {(d["stage"], d["record"]): d for d in read_drops(faulty_run["out"])}
    docs = faulty_run["docs"]
    assert drops[("refusal_detection_documents", docs["refused"])]["reason"] == "refusal_pattern"
    assert "I'm sorry" in drops[("refusal_detection_documents", docs["refused"])]["detail"]
    assert drops[("length_outliers", docs["runaway"])]["reason"] == "length_above_upper_bound"
    assert drops[("translate_documents", docs["failed"])]["reason"] == "translation_failed:engine_error"
    assert drops[("refusal_detection_queries", faulty_run["refused_query"])]["reason"] == "refusal_pattern"
    cascaded = {d["record"] for d in read_drops(faulty_run["out"]) if d["stage"] == "cascade_deletion"}
    expected = {p.qid for doc in ("refused", "runaway", "failed") for p in faulty_run["by_doc"][docs[doc]]}
    assert cascaded == expected
    assert len(drops) == len(read_drops(faulty_run["out"]))  # a record is dropped once


def test_prefixes_are_cut_and_recorded_not_dropped(faulty_run) -> None:
    corpus = {d.doc_id: d.text for d in fmt.read_corpus(faulty_run["out"] / fmt.CORPUS)}
    prefixed = faulty_run["docs"]["prefixed"]
    assert prefixed in corpus and not corpus[prefixed].startswith("Here is")
    queries = {q.qid: q.text for q in fmt.read_queries(faulty_run["out"] / fmt.QUERIES)}
    assert not queries[faulty_run["fixed_query"]].startswith("Translation")
    with open(faulty_run["out"] / "fixes.tsv", encoding="utf-8") as handle:
        fixes = {row["record"]: row for row in csv.DictReader(handle, delimiter="\t")}
    assert set(fixes) == {f"{prefixed}#p0", faulty_run["fixed_query"]}
    assert faulty_run["card"]["translation"]["fixes"]["prefix_removal"] == {"paragraphs": 1, "queries": 1}


def test_drop_accounting_adds_up(faulty_run) -> None:
    card, out = faulty_run["card"], faulty_run["out"]
    source_docs = len(fmt.read_corpus(faulty_run["source"] / fmt.CORPUS))
    source_queries = len(fmt.read_queries(faulty_run["source"] / fmt.QUERIES))
    kept_docs, kept_queries = len(fmt.read_corpus(out / fmt.CORPUS)), len(fmt.read_queries(out / fmt.QUERIES))
    drops = Counter(d["stage"] for d in read_drops(out))
    assert source_docs == kept_docs + sum(drops[s] for s in DOCUMENT_STAGES) == 75
    assert source_queries == kept_queries + sum(drops[s] for s in QUERY_STAGES) == 1190
    accounting = card["translation"]["accounting"]
    assert accounting["documents"] == {
        "source": 75,
        "kept": kept_docs,
        "dropped": {s: drops[s] for s in DOCUMENT_STAGES},
    }
    assert accounting["queries"]["kept"] == kept_queries == card["counts"]["queries"]
    assert card["counts"]["documents"] == kept_docs == sum(card["counts"]["documents_per_bucket"].values())
    stages = {s["stage"]: s for s in card["stages"]}
    for stage in (*DOCUMENT_STAGES, *QUERY_STAGES):  # each stage: what entered = what left + its drops
        assert stages[stage]["entered"] - stages[stage]["left"] == drops[stage]
    assert stages["length_outliers"]["left"] == kept_docs and stages["cascade_deletion"]["left"] == kept_queries
    examples = card["translation"]["drop_examples"]
    assert examples["refusal_detection_documents"]["refusal_pattern"]["count"] == 1
    assert examples["cascade_deletion"]["positive_document_removed"]["examples"]


def test_qrels_and_positions_stay_aligned_with_the_source(faulty_run) -> None:
    out, source = faulty_run["out"], faulty_run["source"]
    qrels, source_qrels = fmt.read_qrels(out / fmt.QRELS), fmt.read_qrels(source / fmt.QRELS)
    assert qrels and all(source_qrels[q] == rels for q, rels in qrels.items())
    corpus = {d.doc_id: d for d in fmt.read_corpus(out / fmt.CORPUS)}
    original = {p.qid: p for p in fmt.read_positions(source / fmt.POSITIONS)}
    documents = {r["doc_id"]: r for r in fmt.read_table(out / fmt.DOCUMENTS)}
    source_documents = {r["doc_id"]: r for r in fmt.read_table(source / fmt.DOCUMENTS)}
    for p in fmt.read_positions(out / fmt.POSITIONS):
        src = original[p.qid]
        assert (p.doc_id, p.relative_position, p.position_bin, p.length_bucket, p.doc_token_length) == (
            src.doc_id,
            pytest.approx(src.relative_position, abs=1e-6),
            src.position_bin,
            src.length_bucket,
            src.doc_token_length,
        )
        assert p.doc_char_length == len(corpus[p.doc_id].text) and 0 <= p.span_start < p.span_end <= p.doc_char_length
        assert p.own_relative_position is not None and abs(p.own_relative_position - src.relative_position) < 0.25
    assert all(documents[d]["length_bucket"] == source_documents[d]["length_bucket"] for d in documents)
    card = json.loads((out / fmt.CARD).read_text())
    assert card["builder"] == "translation" and any("PosIR 5.1" in n for n in card["notes"])


def test_human_translation_files_reproduce_the_parallel_builder(built, tmp_path) -> None:
    out = tmp_path / "xquad-parallel-human-spa"
    card = translate_benchmark(
        translate_job(HUMAN, built["eng"], out, parallel_source=built["english"], parallel_target=built["spanish"]),
        progress=False,
    )
    assert fmt.read_corpus(out / fmt.CORPUS) == fmt.read_corpus(built["spa"] / fmt.CORPUS)
    assert fmt.read_queries(out / fmt.QUERIES) == fmt.read_queries(built["spa"] / fmt.QUERIES)
    # Clean human translations: no filter removes anything, the IQR bounds included.
    assert read_drops(out) == []
    assert card["translation"]["length_outliers"]["removed"] == 0
    assert card["translation"]["backend"]["backend"] == "parallel"
    # The estimated spans sit close to XQuAD's own Spanish answer spans.
    truth = {p.qid: p for p in fmt.read_positions(built["spa"] / fmt.POSITIONS)}
    errors = [
        abs(p.own_relative_position - truth[p.qid].own_relative_position)
        for p in fmt.read_positions(out / fmt.POSITIONS)
    ]
    assert sum(errors) / len(errors) < 0.01 and max(errors) < 0.05
