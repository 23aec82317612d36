"""The contract's queries with several evidence spans (posir.evidence): the envelope in positions.tsv, one row per
piece in evidence.tsv, and clear errors for every way a table can break it; single-span benchmarks unchanged."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from posir.benchmark import (
    CONTRACT,
    BuiltBenchmark,
    Document,
    Position,
    Provenance,
    Query,
    finish,
    read_positions,
    subsample,
)
from posir.evidence import (
    EVIDENCE,
    EvidenceError,
    EvidencePiece,
    by_query,
    check_pieces,
    envelope,
    pieces_of,
    read_evidence,
    write_evidence,
)
from posir.metrics.positions import length_buckets

TEXT = "Alpha beta gamma.\n\nDelta epsilon zeta.\n\nEta theta iota."
BUCKETS = length_buckets()


def single_span_benchmark() -> BuiltBenchmark:
    doc = Document("d1", TEXT, "Greek")
    positions = [Position.of_span("q1", "d1", (0, 5), len(TEXT), 20, 20, BUCKETS)]
    return BuiltBenchmark([doc], [Query("q1", "alpha?")], positions, [], [], {"d1": 20}, {"q1": "Alpha"})


def two_piece_benchmark() -> BuiltBenchmark:
    built = single_span_benchmark()
    spans = [(0, 5), (TEXT.index("Eta"), TEXT.index("Eta") + 3)]
    start, end = envelope(spans)
    return replace(
        built,
        queries=[*built.queries, Query("q1+q2", "alpha? eta?")],
        positions=[*built.positions, Position.of_span("q1+q2", "d1", (start, end), len(TEXT), 20, 20, BUCKETS)],
        evidence={**(built.evidence or {}), "q1+q2": TEXT[start:end]},
        pieces=pieces_of("q1+q2", "d1", spans, len(TEXT)),
        piece_texts={"q1+q2": ("Alpha", "Eta")},
    )


def test_a_single_span_benchmark_writes_the_files_and_card_it_always_wrote(tmp_path: Path) -> None:
    card = finish(single_span_benchmark(), Provenance("b", "x", "eng", {}, {}), BUCKETS, 20, tmp_path)
    written = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    assert written == set(CONTRACT.values())
    assert "evidence" not in card and not (tmp_path / EVIDENCE).exists()


def test_a_query_with_two_pieces_keeps_one_positions_row_its_envelope_and_a_row_per_piece(tmp_path: Path) -> None:
    card = finish(two_piece_benchmark(), Provenance("b", "x", "eng", {}, {}), BUCKETS, 20, tmp_path)
    rows = read_evidence(tmp_path / EVIDENCE)
    assert [(p.qid, p.piece, p.n_pieces) for p in rows] == [("q1+q2", 0, 2), ("q1+q2", 1, 2)]
    envelope_row = next(p for p in read_positions(tmp_path / "positions.tsv") if p.qid == "q1+q2")
    assert (envelope_row.span_start, envelope_row.span_end) == (rows[0].span_start, rows[1].span_end)
    assert card["evidence"] == {
        "table": EVIDENCE,
        "queries_with_several_pieces": 1,
        "queries_per_piece_count": {"2": 1},
    }
    assert json.loads((tmp_path / "card.json").read_text())["evidence"]["queries_with_several_pieces"] == 1
    kept = subsample(two_piece_benchmark(), 1, seed=0)
    assert {p.qid for p in kept.pieces} <= {q.qid for q in kept.queries}


def checked(pieces: list[EvidencePiece], positions: dict | None = None, texts: dict | None = None) -> None:
    spans = [(p.span_start, p.span_end) for p in pieces]
    check_pieces(pieces, {"d1": TEXT}, positions or {"q": ("d1", *envelope(spans))}, texts, where="x/evidence.tsv")


def piece(index: int, start: int, end: int, k: int = 2, qid: str = "q", doc: str = "d1") -> EvidencePiece:
    return EvidencePiece(qid, doc, index, k, start, end, 0.5)


@pytest.mark.parametrize(
    ("pieces", "message"),
    [
        ([piece(0, 0, 5), piece(1, 10, 400)], r"x/evidence.tsv: query q, piece 1: span \[10, 400\) is outside"),
        ([piece(0, 0, 8), piece(1, 5, 12)], r"pieces 0 \[0, 8\) and 1 \[5, 12\) overlap .* merge overlapping"),
        ([piece(0, 20, 25), piece(1, 0, 5)], r"overlap or are out of document order; .*order the rest"),
        ([piece(0, 0, 5, k=3), piece(1, 20, 25, k=3)], r"n_pieces says \[3\] but the query has 2 rows"),
        ([piece(0, 0, 5), piece(2, 20, 25)], r"pieces numbered \[0, 2\]; number them 0..1"),
        ([piece(0, 0, 5, k=1)], r"1 piece; a query with one span needs no evidence.tsv row"),
    ],
)
def test_a_broken_evidence_table_names_the_file_the_query_and_the_fix(pieces, message) -> None:
    with pytest.raises(EvidenceError, match=message):
        checked(pieces)


def test_pieces_must_belong_to_a_query_and_its_positive_and_match_its_envelope_and_texts() -> None:
    pieces = [piece(0, 0, 5), piece(1, 20, 25)]
    with pytest.raises(EvidenceError, match="is not a query of the benchmark"):
        checked(pieces, {"other": ("d1", 0, 25)})
    with pytest.raises(EvidenceError, match=r"its rows name \['d1'\], its positive is d2"):
        checked(pieces, {"q": ("d2", 0, 25)})
    with pytest.raises(EvidenceError, match=r"positions.tsv gives the span \[0, 30\).*envelope is \[0, 25\)"):
        checked(pieces, {"q": ("d1", 0, 30)})
    with pytest.raises(EvidenceError, match="differs from the reference"):
        checked(pieces, texts={"q": ("Alpha", "nope")})
    checked(pieces, texts={"q": (TEXT[0:5], TEXT[20:25])})  # the right texts pass


def test_finish_refuses_a_benchmark_whose_pieces_break_the_contract(tmp_path: Path) -> None:
    built = two_piece_benchmark()
    broken = replace(built, pieces=[replace(p, span_end=p.span_end + 1000) for p in built.pieces])
    with pytest.raises(EvidenceError, match="outside its document d1"):
        finish(broken, Provenance("b", "x", "eng", {}, {}), BUCKETS, 20, tmp_path)


def test_reading_a_table_names_the_file_and_line_of_a_bad_value(tmp_path: Path) -> None:
    path = tmp_path / EVIDENCE
    write_evidence(path, [piece(0, 0, 5), piece(1, 20, 25)])
    assert by_query(read_evidence(path))["q"][1].span_start == 20
    path.write_text(path.read_text().replace("\t20\t", "\ttwenty\t"))
    with pytest.raises(EvidenceError, match=rf"{path}, line 3 \(query q\): .*integers"):
        read_evidence(path)
    path.write_text("qid\tdoc\n")
    with pytest.raises(EvidenceError, match="the header must start with"):
        read_evidence(path)
