"""The benchmark format every builder writes and every evaluation reads.

A benchmark directory holds BEIR files (``corpus.jsonl`` with ``_id, title,
text``; ``queries.jsonl`` with ``_id, text``; ``qrels/test.tsv``), a positions
table (one row per query: positive document, character span, document lengths,
relative position, position bin, length bucket), a drop report and a dataset
card (counts entering and leaving every stage, drop reasons, source checksums).
"""

from __future__ import annotations

import csv
import json
import re
import urllib.parse
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS = "qrels/test.tsv"
POSITIONS = "positions.tsv"
DROPS = "drops.tsv"
CARD = "card.json"

DOCUMENTS = "documents.tsv"
PARAGRAPHS = "paragraphs.tsv"

POSITION_FIELDS = (
    "qid",
    "doc_id",
    "span_start",
    "span_end",
    "doc_char_length",
    "doc_token_length",
    "relative_position",
    "position_bin",
    "length_bucket",
)


class BenchmarkError(ValueError):
    """A benchmark file breaks the format contract."""


# --- record ids ----------------------------------------------------------------------------------
# Ids go into TREC run files, which split on whitespace. Ids from a user's data (a corpus file
# "my doc.txt", a tab in a JSONL id) are mapped reversibly: whitespace and "%" are percent-encoded as
# UTF-8 bytes ("my doc" -> "my%20doc"), everything else is kept; original_id() undoes it.
_UNSAFE_ID_CHAR = re.compile(r"[%\s]")


def safe_id(raw: str) -> str:
    """``raw`` with whitespace and ``%`` percent-encoded (reversible, see :func:`original_id`)."""
    return _UNSAFE_ID_CHAR.sub(lambda m: "".join(f"%{byte:02X}" for byte in m.group().encode("utf-8")), raw)


def original_id(safe: str) -> str:
    """The id :func:`safe_id` was given."""
    return urllib.parse.unquote(safe, encoding="utf-8", errors="strict")


def check_id(record_id: str, where: str) -> None:
    """Refuse an id that would break a TREC run file, naming where it came from."""
    if not record_id or _WHITESPACE.search(record_id):
        raise BenchmarkError(f"{where}: id {record_id!r} is empty or holds whitespace, which TREC run files cannot "
                             f"carry; map it with posir.benchmark.safe_id when reading the data")


_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Document:
    doc_id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class Query:
    qid: str
    text: str


@dataclass(frozen=True)
class Position:
    qid: str
    doc_id: str
    span_start: int
    span_end: int
    doc_char_length: int
    doc_token_length: int
    relative_position: float
    position_bin: int
    length_bucket: str
    # For a translated or parallel variant, the span's relative position in this
    # language's own document; ``relative_position`` (which bins use) is the source's.
    own_relative_position: float | None = None


@dataclass(frozen=True)
class Drop:
    stage: str
    record: str
    reason: str
    detail: str = ""


@dataclass
class StageCount:
    """Records entering and leaving one stage, with the reason for every drop."""

    stage: str
    unit: str
    entered: int
    left: int
    dropped: dict[str, int] = field(default_factory=dict)

    def check(self) -> None:
        if self.entered - self.left != sum(self.dropped.values()):
            raise AssertionError(f"stage {self.stage}: {self.entered} in, {self.left} out, drops {self.dropped} do not add up")


def stage_count(stage: str, unit: str, entered: int, drops: Sequence[Drop]) -> StageCount:
    reasons = Counter(d.reason for d in drops if d.stage == stage)
    count = StageCount(stage, unit, entered, entered - sum(reasons.values()), dict(sorted(reasons.items())))
    count.check()
    return count


# --- writing -----------------------------------------------------------------


def _write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_benchmark(
    directory: Path,
    documents: Sequence[Document] | None,
    queries: Sequence[Query],
    positions: Sequence[Position],
    drops: Sequence[Drop],
    card: Mapping[str, Any],
) -> None:
    """Write the contract; ``documents=None`` for a query-only variant whose corpus lives elsewhere."""
    directory = Path(directory)
    (directory / "qrels").mkdir(parents=True, exist_ok=True)
    if documents is not None:
        _write_jsonl(directory / CORPUS, ({"_id": d.doc_id, "title": d.title, "text": d.text} for d in documents))
    _write_jsonl(directory / QUERIES, ({"_id": q.qid, "text": q.text} for q in queries))
    with open(directory / QRELS, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["query-id", "corpus-id", "score"])
        for p in positions:
            writer.writerow([p.qid, p.doc_id, 1])
    write_positions(directory / POSITIONS, positions)
    with open(directory / DROPS, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["stage", "record", "reason", "detail"])
        for d in drops:
            writer.writerow([d.stage, d.record, d.reason, d.detail])
    with open(directory / CARD, "w", encoding="utf-8") as out:
        json.dump(card, out, indent=2, ensure_ascii=False)
        out.write("\n")


def write_positions(path: Path, positions: Iterable[Position]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow([*POSITION_FIELDS, "own_relative_position"])
        for p in positions:
            row = asdict(p)
            row["relative_position"] = f"{p.relative_position:.6f}"
            own = "" if p.own_relative_position is None else f"{p.own_relative_position:.6f}"
            writer.writerow([*(row[f] for f in POSITION_FIELDS), own])


# --- reading -----------------------------------------------------------------


def _read_jsonl(path: Path, required: Sequence[str]) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise BenchmarkError(f"{path}, line {line_number}: not valid JSON ({error}). Fix or remove that line.") from error
            missing = [k for k in required if k not in record]
            if missing:
                raise BenchmarkError(f"{path}, line {line_number}: missing field(s) {missing}. Every record needs {list(required)}.")
            yield record


def write_table(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def read_table(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def read_corpus(path: Path) -> list[Document]:
    return [Document(str(r["_id"]), r["text"], r.get("title", "")) for r in _read_jsonl(path, ("_id", "text"))]


def read_queries(path: Path) -> list[Query]:
    return [Query(str(r["_id"]), r["text"]) for r in _read_jsonl(path, ("_id", "text"))]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader, None)
        if header != ["query-id", "corpus-id", "score"]:
            raise BenchmarkError(f"{path}: header must be 'query-id<TAB>corpus-id<TAB>score', got {header}")
        for line_number, row in enumerate(reader, start=2):
            if len(row) != 3:
                raise BenchmarkError(f"{path}, line {line_number}: expected 3 tab-separated fields, got {row}")
            qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def read_positions(path: Path) -> list[Position]:
    positions: list[Position] = []
    with open(path, encoding="utf-8") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        if reader.fieldnames is None or tuple(reader.fieldnames[: len(POSITION_FIELDS)]) != POSITION_FIELDS:
            raise BenchmarkError(f"{path}: positions header must start with {list(POSITION_FIELDS)}, got {reader.fieldnames}")
        for row in reader:
            positions.append(
                Position(
                    qid=row["qid"],
                    doc_id=row["doc_id"],
                    span_start=int(row["span_start"]),
                    span_end=int(row["span_end"]),
                    doc_char_length=int(row["doc_char_length"]),
                    doc_token_length=int(row["doc_token_length"]),
                    relative_position=float(row["relative_position"]),
                    position_bin=int(row["position_bin"]),
                    length_bucket=row["length_bucket"],
                    own_relative_position=float(row["own_relative_position"]) if row.get("own_relative_position") else None,
                )
            )
    return positions


# --- invariants --------------------------------------------------------------


def validate(
    documents: Sequence[Document],
    queries: Sequence[Query],
    positions: Sequence[Position],
    evidence: Mapping[str, str] | None = None,
) -> None:
    """Check the contract: unique ids, one positive per query, spans inside documents.

    ``evidence`` maps qid to the reference text that must sit at its span.
    """
    doc_ids = [d.doc_id for d in documents]
    if len(set(doc_ids)) != len(doc_ids):
        dupes = [i for i, n in Counter(doc_ids).items() if n > 1][:5]
        raise BenchmarkError(f"duplicate document ids, e.g. {dupes}")
    qids = [q.qid for q in queries]
    if len(set(qids)) != len(qids):
        dupes = [i for i, n in Counter(qids).items() if n > 1][:5]
        raise BenchmarkError(f"duplicate query ids, e.g. {dupes}")
    by_id = {d.doc_id: d for d in documents}
    positioned = [p.qid for p in positions]
    if sorted(positioned) != sorted(qids):
        raise BenchmarkError("every query needs exactly one positions row (its single positive)")
    for p in positions:
        doc = by_id.get(p.doc_id)
        if doc is None:
            raise BenchmarkError(f"query {p.qid}: positive document {p.doc_id} is not in the corpus")
        if len(doc.text) != p.doc_char_length:
            raise BenchmarkError(f"query {p.qid}: doc_char_length {p.doc_char_length} != len({p.doc_id}) = {len(doc.text)}")
        if not 0 <= p.span_start < p.span_end <= len(doc.text):
            raise BenchmarkError(f"query {p.qid}: span [{p.span_start}, {p.span_end}) outside document {p.doc_id}")
        if evidence is not None and doc.text[p.span_start : p.span_end] != evidence[p.qid]:
            raise BenchmarkError(f"query {p.qid}: text at span differs from its reference text")
