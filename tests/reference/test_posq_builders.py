"""Zeng et al.'s two benchmarks built from real data, checked by invariants: SQuAD-PosQ from SQuAD v1.1 dev and from a
v2.0-format file written from it (unanswerable questions dropped and counted), and FineWeb-PosQ's row format (JSON
lines and Parquet) written from real SQuAD paragraphs (posir.builders.paragraphs, posir.builders.posq_import)."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from posir import benchmark as fmt
from posir.builders.paragraphs import SAME_TEXT, UNANSWERABLE, ParagraphParams, build_paragraphs
from posir.builders.posq_import import CORPUS_ONLY, import_rows
from posir.builders.squad_format import check_squad_format
from posir.metrics.groupings import Labels, Thirds, split_label
from posir.metrics.params import PositionParams
from tests.fixtures.posq_rows import posq_rows, write_jsonl, write_parquet

METRICS = PositionParams()
DEFAULTS = ParagraphParams()
GROUPS = Labels().groups


def squad_paragraphs(files, params: ParagraphParams = DEFAULTS) -> fmt.BuiltBenchmark:
    return build_paragraphs(files, params, len, METRICS.buckets, METRICS.n_bins)


@pytest.fixture(scope="module")
def dev_benchmark(squad_dev, mirror) -> fmt.BuiltBenchmark:
    return squad_paragraphs([(mirror / "squad" / "dev-v1.1.json", squad_dev)])


def test_squad_v1_dev_keeps_every_question_and_every_paragraph(dev_benchmark, squad_dev):
    paragraphs = [p for article in squad_dev["data"] for p in article["paragraphs"]]
    questions = [qa for p in paragraphs for qa in p["qas"]]
    assert len(dev_benchmark.documents) == len({p["context"] for p in paragraphs}) == 2067
    assert len(dev_benchmark.queries) == len(questions) == 10570
    assert {d.text for d in dev_benchmark.documents} == {p["context"] for p in paragraphs}
    fmt.validate(dev_benchmark.documents, dev_benchmark.queries, dev_benchmark.positions, dev_benchmark.evidence)
    texts = {d.doc_id: d.text for d in dev_benchmark.documents}
    first_answer = {qa["id"]: (p["context"], qa["answers"][0]) for p in paragraphs for qa in p["qas"]}
    for position in dev_benchmark.positions:
        context, answer = first_answer[position.qid]
        assert texts[position.doc_id] == context  # the positive is the question's own paragraph
        assert position.span_start == answer["answer_start"]
        assert texts[position.doc_id][position.span_start : position.span_end] == answer["text"]
    assert dev_benchmark.drops == []
    # 37 question texts are asked more than once, 2 of them of different paragraphs: counted, each keeps its own
    assert dev_benchmark.card["question_texts"]["asked_of_different_paragraphs"] == 2


def v2_file(squad_dev) -> tuple[dict, set[str], str]:
    """SQuAD v1.1 dev in v2.0's format: every fifth question unanswerable (``is_impossible``, no answers) and every
    question of the first paragraph too, so that paragraph has answerable ones no more."""
    data = copy.deepcopy(squad_dev)
    unanswerable: set[str] = set()
    first = data["data"][0]["paragraphs"][0]
    for index, qa in enumerate(qa for a in data["data"] for p in a["paragraphs"] for qa in p["qas"]):
        qa["is_impossible"] = index % 5 == 0 or any(qa is q for q in first["qas"])
        if qa["is_impossible"]:
            qa["plausible_answers"], qa["answers"] = qa["answers"], []
            unanswerable.add(qa["id"])
    data["version"] = "v2.0"
    check_squad_format(data, "v2 file")
    return data, unanswerable, first["context"]


def test_squad_v2_drops_every_unanswerable_question_counted_and_keeps_its_paragraphs(squad_dev, tmp_path):
    data, unanswerable, only_unanswerable = v2_file(squad_dev)
    built = squad_paragraphs([(tmp_path / "dev-v2.0.json", data)])
    kept = {q.qid for q in built.queries}
    assert kept.isdisjoint(unanswerable) and len(kept) == 10570 - len(unanswerable)
    assert Counter(d.reason for d in built.drops) == {UNANSWERABLE: len(unanswerable)}
    assert {d.record for d in built.drops} == unanswerable
    assert only_unanswerable in {d.text for d in built.documents}  # its questions gone, the paragraph stays
    assert len(built.documents) == 2067
    stages = {s.stage: s for s in built.stages}
    assert stages["answerable_questions"].dropped == {UNANSWERABLE: len(unanswerable)}
    card = fmt.finish(built, provenance("squad-posq"), METRICS.buckets, METRICS.n_bins, tmp_path / "out")
    assert card["counts"]["queries"] == len(kept)
    written = fmt.read_drops(tmp_path / "out" / fmt.DROPS)
    assert Counter(d.reason for d in written) == {UNANSWERABLE: len(unanswerable)}


def test_two_files_share_a_paragraph_text_as_one_document(squad_dev, tmp_path):
    article = copy.deepcopy(squad_dev["data"][0])
    other = {"data": [{"title": "Copy", "paragraphs": [copy.deepcopy(article["paragraphs"][0])]}]}
    for qa in other["data"][0]["paragraphs"][0]["qas"]:
        qa["id"] = f"copy-{qa['id']}"
    built = squad_paragraphs([(tmp_path / "a.json", {"data": [article]}), (tmp_path / "b.json", other)])
    assert len(built.documents) == len(article["paragraphs"])
    assert Counter(d.reason for d in built.drops) == {SAME_TEXT: 1}
    copies = [p for p in built.positions if p.qid.startswith("copy-")]
    originals = {p.qid: p.doc_id for p in built.positions}
    assert copies and all(p.doc_id == originals[p.qid.removeprefix("copy-")] for p in copies)


def provenance(name: str) -> fmt.Provenance:
    return fmt.Provenance(name, "test", "eng", {}, {})


# --- FineWeb-PosQ's rows -----------------------------------------------------------------------------------------


def test_the_row_format_imports_alike_from_json_lines_and_parquet(squad_dev, tmp_path):
    rows = posq_rows(squad_dev)
    from_json = import_rows(write_jsonl(rows, tmp_path / "rows.jsonl.gz"), GROUPS, len, METRICS.buckets)
    from_parquet = import_rows(write_parquet(rows, tmp_path / "rows.parquet"), GROUPS, len, METRICS.buckets)
    assert from_json.documents == from_parquet.documents
    assert from_json.queries == from_parquet.queries
    assert from_json.positions == from_parquet.positions
    questions = [r for r in rows if r["question"]]
    assert len(from_json.queries) == len(questions)
    assert len(from_json.documents) == len({r["content"] for r in rows}) == 4
    assert Counter(d.reason for d in from_json.drops if d.stage == "read_rows") == {CORPUS_ONLY: 4}
    texts = {d.doc_id: d.text for d in from_json.documents}
    for row, query, position in zip(questions, from_json.queries, from_json.positions):
        assert query.text == row["question"].strip() and texts[position.doc_id] == row["content"]
        assert split_label(position.position_label) == row["span_class"]
        assert not position.has_span and position.relative_position is None and position.position_bin is None
    assert sum(1 for p in from_json.positions if "," in p.position_label) == 4  # a query in two groups


def test_label_positions_round_trip_through_the_contract(squad_dev, tmp_path):
    built = import_rows(write_jsonl(posq_rows(squad_dev), tmp_path / "rows.jsonl"), GROUPS, len, METRICS.buckets)
    card = fmt.finish(built, provenance("fineweb-posq"), METRICS.buckets, METRICS.n_bins, tmp_path / "out")
    assert fmt.read_positions(tmp_path / "out" / fmt.POSITIONS) == built.positions
    assert card["counts"]["queries_without_span"] == len(built.queries)
    assert sum(card["counts"]["queries_per_bin"]["all"]) == 0  # no span, no bin
    assert sum(card["counts"]["queries_per_position_label"].values()) == len(built.queries)
    # the labels are the thirds the answers start in: the thirds grouping of the same spans agrees
    assert Thirds().names(20) == GROUPS
