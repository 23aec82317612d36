"""PosIR's published parquet layout with the faults a damaged or hand-edited copy has.

Before: ``text: null`` became the document ``"None"``; a null ``pos_char_length``
crashed with a raw ``TypeError``; a float span ``[1.9, 5.7]`` was truncated to
``[1, 5]`` without a word; a duplicated qrels row dropped its query as having
"2 positives". Now each is a counted, named drop, or (the duplicate) merged. The
folder is written by the test from real SQuAD documents in PosIR's schema.
"""

from __future__ import annotations

import pytest

from tests._posir_layout import import_layout, one_article_benchmark, query_rows, write_layout


@pytest.fixture(scope="module")
def built(squad_dev):
    return one_article_benchmark(squad_dev)


def write_folder(root, built) -> dict[str, str]:
    """The benchmark in PosIR's schema with one fault per kind; returns {record: expected reason}."""
    texts: list[str | None] = [d.text for d in built.documents]
    texts[-1] = None  # a null text
    positions = [p for p in built.positions if p.doc_id != built.documents[-1].doc_id]
    rows = query_rows(built, positions, span=lambda p: [float(p.span_start), float(p.span_end)])
    qrels = [{"query-id": p.qid, "corpus-id": p.doc_id, "score": 1} for p in built.positions]
    rows[0]["pos_char_length"] = None
    rows[1]["pos_char_span"] = [rows[1]["pos_char_span"][0] + 0.9, rows[1]["pos_char_span"][1] + 0.7]
    qrels.append(dict(qrels[2]))  # the same judgement twice
    write_layout(root, built, texts, rows, qrels)
    return {
        built.documents[-1].doc_id: "missing_text",
        rows[0]["_id"]: "bad_char_length",
        rows[1]["_id"]: "non_integer_span",
    }


def test_each_fault_is_a_named_drop_and_a_duplicate_judgement_is_merged(tmp_path, built):
    expected = write_folder(tmp_path, built)
    imported = import_layout(tmp_path)
    assert {d.record: d.reason for d in imported.drops} == expected
    assert "None" not in {d.text for d in imported.documents}
    kept = {q.qid for q in imported.queries}
    duplicated = [p for p in built.positions if p.doc_id != built.documents[-1].doc_id][2].qid
    assert duplicated in kept, "a repeated qrels row is one positive, not two"
    # integral float offsets (parquet doubles) are kept exactly
    for position in imported.positions:
        original = next(p for p in built.positions if p.qid == position.qid)
        assert (position.span_start, position.span_end) == (original.span_start, original.span_end)
    for stage in imported.stages:
        stage.check()
