"""A user's raw corpus as input to LLM benchmark generation (AIR-Bench section 2.2, PosIR section 3.1).

Three layouts are read into :class:`RawDocument` records (id, text, optional
title, language, domain):

* ``jsonl``: one JSON object per line;
* ``parquet``: one row per document;
* ``text_dir``: a folder of ``*.txt`` files, one document each; the id is the
  path below the folder without the suffix, and the first folder level is the
  domain when ``domain_from_subfolder`` is set.

Field names are configurable (``fields``), so a BEIR ``corpus.jsonl``
(``_id``) reads as is; a UTF-8 byte-order mark at the start of a JSONL file is
accepted.  Bad records (invalid UTF-8, invalid JSON, not an object, missing or
non-string id or text, empty text, text with a lone surrogate such as JSON's
``"\ud800"``, text with no letter or digit, a duplicate id) are reported by line
(row, or file for a folder) and either dropped and counted or stop the run, per
``on_bad_record``; files of a folder that ``glob`` does not match are dropped as
``file_skipped``, never silently ignored.  Ids holding whitespace or ``%`` are
mapped reversibly (``posir.benchmark.safe_id``: ``my doc`` -> ``my%20doc``) and
counted.  Texts are kept byte for byte: spans are character offsets into
exactly this text.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic.json_schema import SkipJsonSchema

from posir.benchmark import Drop, safe_id
from posir.schema import Bool, Entry, Str

STAGE = "read_corpus"
SKIPPED = "file_skipped"  # a file of a text_dir corpus that corpus.glob does not match (never stops the run)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
FORMATS = ("jsonl", "parquet", "text_dir")


class RawCorpusError(ValueError):
    """A raw corpus cannot be read, or holds a bad record while ``on_bad_record`` is ``stop``."""


@dataclass(frozen=True)
class RawDocument:
    doc_id: str
    text: str
    title: str = ""
    language: str = ""
    domain: str = ""

    def as_record(self) -> dict[str, str]:
        """The raw corpus record: every field, ``doc_id`` written first as ``id``."""
        return {"id": self.doc_id, **{k: v for k, v in asdict(self).items() if k != "doc_id"}}


class CorpusFields(Entry):
    """Field (or column) names in the corpus, e.g. ``{id: _id}`` for a BEIR corpus."""

    id: Str = "id"
    text: Str = "text"
    title: Str = "title"
    language: Str = "language"
    domain: Str = "domain"


class RawCorpusSpec(Entry):
    """The ``corpus`` block of a generation benchmark."""

    path: Str
    format: Literal["jsonl", "parquet", "text_dir"] = "jsonl"
    on_bad_record: Literal["drop", "stop"] = "drop"
    fields: CorpusFields = CorpusFields()
    default_domain: Str = "general"
    domain_from_subfolder: Bool = False
    glob: Str = "**/*.txt"
    """text_dir: the files read (the folder's other files are counted as skipped)"""
    default_language: SkipJsonSchema[str] = "eng"
    """the benchmark's language: the language of records that name none (set from the entry, not a key)"""

    @property
    def field_names(self) -> dict[str, str]:
        """role (id, text, title, language, domain) -> the corpus's field or column name"""
        return self.fields.model_dump()

    def in_language(self, language: str) -> RawCorpusSpec:
        """This block read for a benchmark in ``language``."""
        return self.model_copy(update={"default_language": language})


@dataclass
class RawCorpus:
    documents: list[RawDocument]
    drops: list[Drop]
    records_seen: int
    # ids holding whitespace or "%", percent-encoded (posir.benchmark.safe_id) so TREC run files can carry them
    ids_mapped: int = 0


@dataclass(frozen=True)
class _Record:
    where: str  # "line 12", "row 3", "file a/b.txt": how a person finds the record
    value: Any  # a mapping, or a _Bad for records that never became one
    id_hint: str = ""


@dataclass(frozen=True)
class _Bad:
    reason: str
    detail: str


def read_raw_corpus(spec: RawCorpusSpec) -> RawCorpus:
    """Read, validate and deduplicate the corpus; bad records become drops (or raise under ``stop``)."""
    path = Path(spec.path)
    if not path.exists():
        raise RawCorpusError(f"raw corpus {path} does not exist: fix corpus.path in the benchmark's generation block")
    readers = {"jsonl": _jsonl_records, "parquet": _parquet_records, "text_dir": _text_dir_records}
    documents: list[RawDocument] = []
    drops: list[Drop] = []
    first_seen: dict[str, str] = {}
    seen = mapped = 0
    for record in readers[spec.format](path, spec):
        seen += 1
        result = _to_document(record, spec)
        if isinstance(result, RawDocument) and safe_id(result.doc_id) != result.doc_id:
            result = replace(result, doc_id=safe_id(result.doc_id))
            mapped += 1
        if isinstance(result, RawDocument) and result.doc_id in first_seen:
            result = _Bad("duplicate_id", f"id {result.doc_id!r} already at {first_seen[result.doc_id]}")
        if isinstance(result, _Bad):
            if spec.on_bad_record == "stop" and result.reason != SKIPPED:
                raise RawCorpusError(
                    f"{path}, {record.where}: {result.reason} ({result.detail}). Fix that record, or set "
                    f"corpus.on_bad_record: drop to drop bad records with a count"
                )
            drops.append(Drop(STAGE, record.id_hint or record.where, result.reason, f"{record.where}: {result.detail}"))
            continue
        first_seen[result.doc_id] = record.where
        documents.append(result)
    if not documents:
        raise RawCorpusError(f"raw corpus {path} holds no usable document ({seen} records, {len(drops)} dropped)")
    return RawCorpus(documents, drops, seen, mapped)


def _to_document(record: _Record, spec: RawCorpusSpec) -> RawDocument | _Bad:
    if isinstance(record.value, _Bad):
        return record.value
    value = record.value
    if not isinstance(value, Mapping):
        return _Bad(
            "not_an_object",
            f"expected an object with fields {spec.field_names['id']!r} and {spec.field_names['text']!r}",
        )
    names = spec.field_names
    doc_id = value.get(names["id"])
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)  # numeric ids are common in dumps; their text form is unambiguous
    if not isinstance(doc_id, str) or not doc_id.strip():
        return _Bad("missing_id", f"field {names['id']!r} is missing, empty or not a string")
    text = value.get(names["text"])
    if text is None:
        return _Bad("missing_text", f"field {names['text']!r} is missing")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            return _Bad("invalid_utf8", f"field {names['text']!r}: {error}")
    if not isinstance(text, str):
        return _Bad("text_not_a_string", f"field {names['text']!r} is {type(text).__name__}")
    if not text.strip():
        return _Bad("empty_text", f"field {names['text']!r} is empty or whitespace")
    for field_name, item in ((names["id"], doc_id), (names["text"], text)):
        surrogate = _LONE_SURROGATE.search(item)
        if surrogate:  # JSON can spell "\ud800"; no UTF-8 file can hold it
            return _Bad(
                "invalid_text",
                f"field {field_name!r} holds a lone surrogate "
                f"U+{ord(surrogate.group()):04X} at character {surrogate.start()}",
            )
    if not any(unicodedata.category(char)[0] in "LN" for char in text):
        return _Bad(
            "no_text_content",
            f"field {names['text']!r} has no letter or digit (only control characters, punctuation or symbols)",
        )
    optional = {}
    for key in ("title", "language", "domain"):
        item = value.get(names[key])
        optional[key] = item if isinstance(item, str) else ""
    return RawDocument(
        doc_id=doc_id,
        text=text,
        title=optional["title"],
        language=optional["language"] or spec.default_language,
        domain=optional["domain"] or spec.default_domain,
    )


def _jsonl_records(path: Path, spec: RawCorpusSpec) -> Iterator[_Record]:
    # Bytes first, so one line of invalid UTF-8 is one bad record, not a crash of the whole file.
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            where = f"line {number}"
            try:
                # a byte-order mark at the start of the file is an encoding marker, not part of the first record
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as error:
                yield _Record(where, _Bad("invalid_utf8", str(error)))
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                yield _Record(where, _Bad("invalid_json", str(error)))
                continue
            hint = value.get(spec.field_names["id"]) if isinstance(value, dict) else None
            yield _Record(where, value, str(hint) if isinstance(hint, (str, int)) else "")


def _parquet_records(path: Path, spec: RawCorpusSpec) -> Iterator[_Record]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as error:  # pyarrow raises several types for a file that is not parquet
        raise RawCorpusError(f"{path} is not a readable parquet file ({error})") from error
    wanted = [c for c in dict.fromkeys(spec.field_names.values()) if c in parquet.schema_arrow.names]
    if spec.field_names["text"] not in wanted or spec.field_names["id"] not in wanted:
        raise RawCorpusError(
            f"{path}: columns {parquet.schema_arrow.names} lack {spec.field_names['id']!r} or "
            f"{spec.field_names['text']!r}; "
            f"name the right columns in corpus.fields"
        )
    row = 0
    for batch in parquet.iter_batches(batch_size=4096, columns=wanted):
        for value in _batch_rows(batch):
            row += 1
            hint = value.get(spec.field_names["id"])
            yield _Record(f"row {row}", value, str(hint) if isinstance(hint, (str, int)) else "")


def _batch_rows(batch: Any) -> Iterator[dict[str, Any]]:
    """Rows of an Arrow batch; binary columns stay bytes so invalid UTF-8 is caught per row."""
    columns = {name: batch.column(i).to_pylist() for i, name in enumerate(batch.schema.names)}
    for index in range(batch.num_rows):
        yield {name: values[index] for name, values in columns.items()}


def _text_dir_records(path: Path, spec: RawCorpusSpec) -> Iterator[_Record]:
    if not path.is_dir():
        raise RawCorpusError(f"{path} is not a folder: corpus.format text_dir needs a folder of text files")
    matched = {p for p in path.glob(spec.glob) if p.is_file()}
    # every other file of the folder is a record too, dropped as skipped, so nothing disappears without a count
    for file in sorted(p for p in path.rglob("*") if p.is_file() and p not in matched):
        relative = file.relative_to(path).as_posix()
        yield _Record(f"file {relative}", _Bad(SKIPPED, f"does not match corpus.glob {spec.glob!r}"), relative)
    for file in sorted(matched):
        relative = file.relative_to(path)
        doc_id = relative.with_suffix("").as_posix()
        where = f"file {relative.as_posix()}"
        try:
            text = file.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            yield _Record(where, _Bad("invalid_utf8", str(error)), doc_id)
            continue
        value = {spec.field_names["id"]: doc_id, spec.field_names["text"]: text}
        if spec.domain_from_subfolder and len(relative.parts) > 1:
            value[spec.field_names["domain"]] = relative.parts[0]
        yield _Record(where, value, doc_id)


def write_documents(
    path: Path, documents: list[RawDocument], extra: Mapping[str, Mapping[str, Any]] | None = None
) -> None:
    """One JSON object per document (``extra`` adds fields by id, e.g. token counts)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for doc in documents:
            record = {**doc.as_record(), **(extra or {}).get(doc.doc_id, {})}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_documents(path: Path) -> list[tuple[RawDocument, dict[str, Any]]]:
    """Documents written by :func:`write_documents`, each with its extra fields."""
    out = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                doc = RawDocument(
                    record.pop("id"),
                    record.pop("text"),
                    record.pop("title", ""),
                    record.pop("language", ""),
                    record.pop("domain", ""),
                )
                out.append((doc, record))
    return out


def corpus_fingerprint(spec: RawCorpusSpec) -> dict[str, Any]:
    """sha256 of the raw corpus file, or of the sorted (path, sha256) list of a folder's files."""
    from posir.sources import sha256_of

    path = Path(spec.path)
    if path.is_file():
        return {"path": str(path), "format": spec.format, "sha256": sha256_of(path)}
    digest = hashlib.sha256()
    files = sorted(p for p in path.glob(spec.glob) if p.is_file())
    for file in files:
        digest.update(f"{file.relative_to(path).as_posix()}\x00{sha256_of(file)}\n".encode())
    return {"path": str(path), "format": spec.format, "files": len(files), "sha256": digest.hexdigest()}
