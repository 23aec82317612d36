"""Cross-lingual and parallel XQuAD builders on the real files."""

from __future__ import annotations

import json

import pytest

from posir.benchmark import PARAGRAPHS, validate
from posir.builders.squad import SquadParams, build_squad_long
from posir.builders.xquad import (
    ParallelStructureError,
    check_parallel,
    cross_lingual_queries,
    parallel_documents,
    parallel_partition,
)
from posir.metrics.positions import length_buckets
from posir.text import qwen3_token_counter

LANGUAGES = {"ara": "ar", "deu": "de", "spa": "es", "hin": "hi", "ron": "ro", "rus": "ru", "tur": "tr", "zho": "zh"}


@pytest.fixture(scope="module")
def xquad(mirror):
    files = {"eng": "en", **LANGUAGES}
    return {
        iso3: json.loads((mirror / "xquad" / f"xquad.{two}.json").read_text(encoding="utf-8"))
        for iso3, two in files.items()
    }


@pytest.fixture(scope="module")
def squad_long(squad_dev):
    return build_squad_long(
        squad_dev, SquadParams.from_config({"seed": 13}), qwen3_token_counter(), length_buckets(), 20
    )


def _locations(squad_dev, built):
    """paragraph hash -> (document, offset), from the builder's paragraphs.tsv table."""
    _, rows = built.tables[PARAGRAPHS]
    return {key: (doc, offset) for key, doc, offset, _, _ in rows}


def test_every_xquad_question_lands_on_the_long_document_holding_its_paragraph(xquad, squad_dev, squad_long):
    locations = _locations(squad_dev, squad_long)
    by_id = {d.doc_id: d for d in squad_long.documents}
    for language in ("eng", "deu", "zho"):
        variant = cross_lingual_queries(
            xquad["eng"],
            xquad[language],
            squad_long.documents,
            locations,
            squad_long.doc_token_lengths,
            length_buckets(),
            20,
        )
        assert len(variant.queries) == 1190 and not variant.drops
        validate(squad_long.documents, variant.queries, variant.positions, variant.evidence)
        contexts = {qa["id"]: p["context"] for a in xquad["eng"]["data"] for p in a["paragraphs"] for qa in p["qas"]}
        for position in variant.positions:
            assert contexts[position.qid] in by_id[position.doc_id].text
        questions = {
            qa["id"]: qa["question"] for a in xquad[language]["data"] for p in a["paragraphs"] for qa in p["qas"]
        }
        assert all(q.text == questions[q.qid].strip() for q in variant.queries)


def test_cross_lingual_spans_come_from_xquad_english_not_squad(xquad, squad_dev, squad_long):
    squad_first = {qa["id"]: qa["answers"][0] for a in squad_dev["data"] for p in a["paragraphs"] for qa in p["qas"]}
    xquad_answer = {
        qa["id"]: qa["answers"][0] for a in xquad["eng"]["data"] for p in a["paragraphs"] for qa in p["qas"]
    }
    differing = {q for q, answer in xquad_answer.items() if answer != squad_first[q]}
    assert len(differing) == 190
    variant = cross_lingual_queries(
        xquad["eng"],
        xquad["deu"],
        squad_long.documents,
        _locations(squad_dev, squad_long),
        squad_long.doc_token_lengths,
        length_buckets(),
        20,
    )
    assert {q for q in differing} <= set(variant.evidence)
    assert all(variant.evidence[q] == xquad_answer[q]["text"] for q in differing)
    # the long documents reach every bucket: cross-lingual results cover Q1-Q4
    assert {p.length_bucket for p in variant.positions} == {"Q1", "Q2", "Q3", "Q4"}


def test_parallel_partition_is_identical_across_languages(xquad):
    count = qwen3_token_counter()
    params = SquadParams.from_config({"seed": 13})
    partition = parallel_partition(xquad["eng"], params, count)
    variants = {
        lang: parallel_documents(xquad["eng"], xquad[lang], lang, params, count, length_buckets(), 20)
        for lang in ("eng", "deu", "zho", "hin")
    }
    english = variants["eng"]
    for language, variant in variants.items():
        assert [d.doc_id for d in variant.documents] == [d.doc_id for d in english.documents]
        validate(variant.documents, variant.queries, variant.positions, variant.evidence)
        # each document is exactly this language's paragraphs of the shared groups
        docs = iter(variant.documents)
        for a, groups in enumerate(partition):
            for group in groups:
                paragraphs = [xquad[language]["data"][a]["paragraphs"][i]["context"] for i in group]
                assert next(docs).text == params.separator.join(paragraphs)
        # buckets and relative positions are the English counterpart's
        assert variant.doc_token_lengths == english.doc_token_lengths
        english_positions = {p.qid: p for p in english.positions}
        for p in variant.positions:
            assert p.relative_position == english_positions[p.qid].relative_position
            assert p.length_bucket == english_positions[p.qid].length_bucket
    # five paragraphs per article: short documents, almost all Q1-Q2, never Q4
    buckets = [p.length_bucket for p in english.positions]
    assert "Q4" not in buckets and sum(b in ("Q1", "Q2") for b in buckets) / len(buckets) > 0.95


def test_non_parallel_file_is_rejected_naming_the_place(xquad):
    broken = json.loads(json.dumps(xquad["deu"]))
    broken["data"][3]["paragraphs"][1]["qas"].pop()
    with pytest.raises(ParallelStructureError, match="article 3, paragraph 1"):
        check_parallel(xquad["eng"], broken, "XQuAD 'deu'")
