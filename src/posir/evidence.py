"""Queries resting on several pieces of evidence: the benchmark contract's ``evidence.tsv``.

The contract (:mod:`posir.benchmark`) gives every query one positive and one evidence span in ``positions.tsv``.
A query that needs several passages of its positive (two questions of one article asked together, a user's import
that annotates several spans) keeps that one row, whose span is the **envelope** of its pieces (from the first
piece's start to the last piece's end, so its relative position is the centre of the evidence), and has one row per
piece in ``evidence.tsv``:

========================  ======================================================================
``qid``, ``doc_id``       the query and its positive (the ``positions.tsv`` row's)
``piece``                 0, 1, ..., ``n_pieces - 1``, in document order
``n_pieces``              how many pieces the query has (k), on each of its rows
``span_start/_end``       the piece's character span in the positive, ``[start, end)``
``relative_position``     the piece's midpoint over the positive's length (PosIR section 4.1)
========================  ======================================================================

Queries with one span have no row there, and a benchmark without such queries has no ``evidence.tsv`` at all: the
files of every single-span benchmark are what they were. Pieces must lie inside the positive, must not overlap and
must come in document order; the file is checked when written and when read (:func:`check_pieces`,
:func:`read_evidence`), each error naming the file, the record and the fix.

This module sits below :mod:`posir.benchmark` (which writes the file through it) and reads only plain records.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from posir.metrics.columns import FUSED, JOINED, SEVERAL, SINGLE
from posir.metrics.positions import relative_position

EVIDENCE = "evidence.tsv"
EVIDENCE_FIELDS = ("qid", "doc_id", "piece", "n_pieces", "span_start", "span_end", "relative_position")
#: Which query of a group is which, where a builder knows it (:mod:`posir.builders.pairs`): the group's id, the
#: query's form and, for a single-evidence member, the piece of the group it answers.
GROUPS = "evidence_groups.tsv"
GROUP_FIELDS = ("qid", "group", "form", "piece")
#: The forms of a group's queries, named in the column vocabulary that the distance statistics read them by.
FORMS = (JOINED, FUSED, SINGLE, SEVERAL)


class EvidenceError(ValueError):
    """An evidence table breaks the contract; the message names the file, the record and the fix."""


@dataclass(frozen=True)
class EvidencePiece:
    """One piece of a query's evidence: a character span of its positive (a row of ``evidence.tsv``)."""

    qid: str
    doc_id: str
    piece: int
    n_pieces: int
    span_start: int
    span_end: int
    relative_position: float


def envelope(spans: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The span from the first piece's start to the last piece's end: the query's ``positions.tsv`` span."""
    return min(s for s, _ in spans), max(e for _, e in spans)


def pieces_of(qid: str, doc_id: str, spans: Sequence[tuple[int, int]], doc_length: int) -> list[EvidencePiece]:
    """A query's pieces from its spans (sorted into document order); raises :class:`EvidenceError` on overlaps."""
    ordered = sorted(spans)
    pieces = [
        EvidencePiece(qid, doc_id, i, len(ordered), s, e, relative_position(s, e, doc_length))
        for i, (s, e) in enumerate(ordered)
    ]
    _check_query(pieces, f"query {qid}", doc_length)
    return pieces


def _check_query(pieces: Sequence[EvidencePiece], where: str, doc_length: int | None) -> None:
    """One query's rows: k of them numbered 0..k-1 in document order, inside the document, none overlapping."""
    k = len(pieces)
    if k < 2:
        raise EvidenceError(
            f"{where}: {k} piece; a query with one span needs no evidence.tsv row (positions.tsv holds its span); "
            f"remove the row or add the query's other pieces"
        )
    declared = {p.n_pieces for p in pieces}
    if declared != {k}:
        raise EvidenceError(
            f"{where}: n_pieces says {sorted(declared)} but the query has {k} rows; give every row of the query "
            f"n_pieces = {k} (or add the missing pieces)"
        )
    if [p.piece for p in pieces] != list(range(k)):
        raise EvidenceError(
            f"{where}: pieces numbered {[p.piece for p in pieces]}; number them 0..{k - 1} in document order"
        )
    for p in pieces:
        if not 0 <= p.span_start < p.span_end or (doc_length is not None and p.span_end > doc_length):
            raise EvidenceError(
                f"{where}, piece {p.piece}: span [{p.span_start}, {p.span_end}) is outside its document "
                f"{p.doc_id} ({doc_length} characters); fix the offsets (0 <= start < end <= length)"
            )
    for before, after in zip(pieces, pieces[1:]):
        if after.span_start < before.span_end:
            raise EvidenceError(
                f"{where}: pieces {before.piece} [{before.span_start}, {before.span_end}) and {after.piece} "
                f"[{after.span_start}, {after.span_end}) overlap or are out of document order; merge overlapping "
                f"pieces into one and order the rest by their start"
            )


def by_query(pieces: Iterable[EvidencePiece]) -> dict[str, list[EvidencePiece]]:
    """Each query's pieces in piece order."""
    grouped: dict[str, list[EvidencePiece]] = {}
    for piece in pieces:
        grouped.setdefault(piece.qid, []).append(piece)
    return {qid: sorted(rows, key=lambda p: p.piece) for qid, rows in grouped.items()}


def check_pieces(
    pieces: Iterable[EvidencePiece],
    documents: Mapping[str, str],
    positions: Mapping[str, tuple[str, int, int]],
    texts: Mapping[str, Sequence[str]] | None = None,
    where: str = EVIDENCE,
) -> None:
    """The contract of an evidence table against its benchmark.

    ``documents`` maps a document id to its text, ``positions`` a query to its ``positions.tsv`` row (positive,
    span start, span end), ``texts`` (optional) a query to the reference text of each piece. Every query of the
    table is a query of the benchmark, its rows name its positive, its pieces (k >= 2, numbered in document order,
    not overlapping) lie inside it, and its ``positions.tsv`` span is their envelope.
    """
    for qid, rows in by_query(pieces).items():
        record = f"{where}: query {qid}"
        if qid not in positions:
            raise EvidenceError(f"{record} is not a query of the benchmark (no positions.tsv row); remove its rows")
        positive, start, end = positions[qid]
        if {p.doc_id for p in rows} != {positive}:
            raise EvidenceError(
                f"{record}: its rows name {sorted({p.doc_id for p in rows})}, its positive is {positive}; every "
                f"piece lies in the query's one positive"
            )
        if positive not in documents:
            raise EvidenceError(f"{record}: positive {positive} is not in the corpus")
        text = documents[positive]
        _check_query(rows, record, len(text))
        if envelope([(p.span_start, p.span_end) for p in rows]) != (start, end):
            raise EvidenceError(
                f"{record}: positions.tsv gives the span [{start}, {end}), the pieces' envelope is "
                f"[{rows[0].span_start}, {max(p.span_end for p in rows)}); the positions.tsv span of a query with "
                f"several pieces runs from its first piece's start to its last piece's end"
            )
        if texts is not None and qid in texts:
            expected = list(texts[qid])
            found = [text[p.span_start : p.span_end] for p in rows]
            if found != expected:
                raise EvidenceError(
                    f"{record}: the text at its pieces {found!r} differs from the reference {expected!r}"
                )


def write_evidence(path: Path, pieces: Iterable[EvidencePiece]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(EVIDENCE_FIELDS)
        for p in pieces:
            writer.writerow(
                (p.qid, p.doc_id, p.piece, p.n_pieces, p.span_start, p.span_end, f"{p.relative_position:.6f}")
            )


def read_evidence(path: Path) -> list[EvidencePiece]:
    """The rows of an evidence table, each query's checked on its own (against the benchmark: :func:`check_pieces`)."""
    path = Path(path)
    pieces: list[EvidencePiece] = []
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        if reader.fieldnames is None or tuple(reader.fieldnames[: len(EVIDENCE_FIELDS)]) != EVIDENCE_FIELDS:
            raise EvidenceError(f"{path}: the header must start with {list(EVIDENCE_FIELDS)}, got {reader.fieldnames}")
        for line, row in enumerate(reader, start=2):
            try:
                pieces.append(
                    EvidencePiece(
                        row["qid"],
                        row["doc_id"],
                        int(row["piece"]),
                        int(row["n_pieces"]),
                        int(row["span_start"]),
                        int(row["span_end"]),
                        float(row["relative_position"]),
                    )
                )
            except (TypeError, ValueError) as error:
                raise EvidenceError(
                    f"{path}, line {line} (query {row.get('qid')}): {error}; piece, n_pieces and the span are "
                    f"integers, relative_position a number"
                ) from None
    for qid, rows in by_query(pieces).items():
        _check_query(rows, f"{path}: query {qid}", None)
    return pieces
