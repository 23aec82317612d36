"""Builder invariants on the real SQuAD v1.1 dev file."""

from collections import Counter

import numpy as np
import pytest

from posir.benchmark import PARAGRAPHS, validate
from posir.builders.sampling import LengthAwareSampler
from posir.builders.squad import SquadParams, build_squad_long, partition_article
from posir.metrics.positions import length_buckets, position_bin, relative_position
from posir.text import qwen3_token_counter


def placement(built) -> dict[tuple[int, int], str]:
    """(article, paragraph) -> document, from the builder's paragraphs.tsv table."""
    _, rows = built.tables[PARAGRAPHS]
    return {(article, paragraph): doc_id for _, doc_id, _, article, paragraph in rows}


@pytest.fixture(scope="module")
def built(squad_dev):
    return build_squad_long(
        squad_dev, SquadParams.from_config({"seed": 13}), qwen3_token_counter(), length_buckets(), 20
    )


def test_every_paragraph_lands_in_exactly_one_document_in_file_order(squad_dev, built):
    n_paragraphs = sum(len(a["paragraphs"]) for a in squad_dev["data"])
    assert n_paragraphs == 2067
    placed = placement(built)
    assert len(placed) == 2067
    # consecutive, non-overlapping: within an article, document indices never go back
    for a_index, article in enumerate(squad_dev["data"]):
        docs = [placed[(a_index, p)] for p in range(len(article["paragraphs"]))]
        assert docs == sorted(docs)
        assert len(set(docs)) == len(dict.fromkeys(docs))


def test_documents_are_the_joined_paragraphs_and_respect_the_token_limit(squad_dev, built):
    count = qwen3_token_counter()
    by_id = {d.doc_id: d for d in built.documents}
    for doc_id, tokens in built.doc_token_lengths.items():
        assert 0 < tokens <= 2048
        assert count(by_id[doc_id].text) == tokens
    for (a_index, p_index), doc_id in placement(built).items():
        assert squad_dev["data"][a_index]["paragraphs"][p_index]["context"] in by_id[doc_id].text


def test_every_span_is_verified_and_evidence_is_not_duplicated(squad_dev, built):
    validate(built.documents, built.queries, built.positions, built.evidence)
    assert len(built.queries) == 10570 and not built.drops
    contexts = {qa["id"]: p["context"] for a in squad_dev["data"] for p in a["paragraphs"] for qa in p["qas"]}
    for position in built.positions:
        holders = [d.doc_id for d in built.documents if contexts[position.qid] in d.text]
        assert holders == [position.doc_id]


def test_position_fields_are_consistent(built):
    by_id = {d.doc_id: d for d in built.documents}
    for p in built.positions:
        assert p.doc_char_length == len(by_id[p.doc_id].text)
        assert p.doc_token_length == built.doc_token_lengths[p.doc_id]
        assert p.relative_position == pytest.approx(relative_position(p.span_start, p.span_end, p.doc_char_length))
        assert p.position_bin == position_bin(p.relative_position, 20)


def test_document_count_and_length_mix_are_as_measured(built):
    buckets = Counter()
    for tokens in built.doc_token_lengths.values():
        buckets["Q1" if tokens <= 512 else "Q2" if tokens <= 1024 else "Q3" if tokens <= 1536 else "Q4"] += 1
    assert 380 <= len(built.documents) <= 480
    assert buckets["Q1"] > buckets["Q2"] > buckets["Q3"] > 0 and buckets["Q4"] > 0
    # every position bin of every bucket holds queries: length and position are not confounded
    for bucket in ("Q1", "Q2", "Q3", "Q4"):
        bins = {p.position_bin for p in built.positions if p.length_bucket == bucket}
        assert bins == set(range(20))


def test_stage_counts_add_up(built):
    for stage in built.stages:
        assert stage.entered - stage.left == sum(stage.dropped.values())


def test_seeded_partition_is_reproducible_and_seed_sensitive(squad_dev):
    small = {"data": squad_dev["data"][:4]}
    count = qwen3_token_counter()
    a = build_squad_long(small, SquadParams.from_config({"seed": 5}), count, length_buckets(), 20)
    b = build_squad_long(small, SquadParams.from_config({"seed": 5}), count, length_buckets(), 20)
    c = build_squad_long(small, SquadParams.from_config({"seed": 6}), count, length_buckets(), 20)
    assert [d.text for d in a.documents] == [d.text for d in b.documents]
    assert [d.text for d in a.documents] != [d.text for d in c.documents]


def test_bad_answer_offsets_are_dropped_and_counted(squad_dev):
    article = {"title": "T", "paragraphs": [dict(p) for p in squad_dev["data"][0]["paragraphs"][:2]]}
    first = article["paragraphs"][0]
    good = first["qas"][0]["answers"][0]
    shifted = {"answer_start": good["answer_start"] + 3, "text": good["text"]}
    only_bad = {**first["qas"][0], "answers": [shifted]}
    bad_then_good = {**first["qas"][1], "answers": [shifted, good]}
    article["paragraphs"][0] = {"context": first["context"], "qas": [only_bad, bad_then_good, *first["qas"][2:]]}
    built = build_squad_long(
        {"data": [article]}, SquadParams.from_config({}), qwen3_token_counter(), length_buckets(), 20
    )
    by_stage = {s.stage: s for s in built.stages}
    assert by_stage["validate_answers"].dropped == {"answer_offset_mismatch": 2}
    assert by_stage["attach_questions"].dropped == {"no_valid_answer": 1}
    kept = {q.qid for q in built.queries}
    assert only_bad["id"] not in kept and bad_then_good["id"] in kept
    position = next(p for p in built.positions if p.qid == bad_then_good["id"])
    assert built.evidence[bad_then_good["id"]] == good["text"]
    assert position.span_start == good["answer_start"]  # first paragraph of its document: no shift


def test_squad_it_defects_are_detected_dropped_and_counted(mirror):
    import gzip
    import json

    with gzip.open(mirror / "squad-it" / "SQuAD_it-test.json.gz", "rt", encoding="utf-8") as handle:
        squad_it = json.load(handle)
    built = build_squad_long(
        squad_it,
        SquadParams.from_config({"question_id_pattern": "[0-9a-f]{24}"}),
        qwen3_token_counter(),
        length_buckets(),
        20,
    )
    by_stage = {s.stage: s for s in built.stages}
    assert by_stage["validate_answers"].entered == 21489
    assert by_stage["validate_answers"].dropped["answer_offset_mismatch"] == 98
    assert by_stage["attach_questions"].entered == 7609
    assert by_stage["attach_questions"].dropped["question_id_not_original"] == 714
    validate(built.documents, built.queries, built.positions, built.evidence)


def test_partition_never_exceeds_target_unless_a_single_paragraph_does():
    count = len  # characters as tokens keeps the arithmetic visible
    sampler = LengthAwareSampler(bucket_width=10, ratio=(1, 1))
    paragraphs = ["aaaa", "bbbb", "cccc", "d" * 25, "eeee"]
    groups = partition_article(paragraphs, sampler, np.random.default_rng(0), count, "+")
    assert [i for g in groups for i in g] == [0, 1, 2, 4]  # the 25-character paragraph is left out
    for g in groups:
        assert len(g) == 1 or count("+".join(paragraphs[i] for i in g)) <= 20
