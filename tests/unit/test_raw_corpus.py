"""Raw corpus input (JSONL, Parquet, a folder of text files): bad records reported by line, dropped or fatal."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from posir.builders.raw_corpus import RawCorpusError, RawCorpusSpec, read_documents, read_raw_corpus, write_documents
from posir.schema import ConfigError

GOOD = [
    {"id": "a", "text": "Alpha text.", "title": "A", "domain": "science"},
    {"id": "b", "text": "Beta “quoted” text\n\nwith a second paragraph.", "language": "deu"},
]


def write_jsonl(path: Path, rows: list, extra: bytes = b"") -> Path:
    path.write_bytes(b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows) + extra)
    return path


def spec(path: Path, **kw) -> RawCorpusSpec:
    return RawCorpusSpec.from_config({"path": str(path), **kw}, "generation.corpus").in_language("eng")


def test_jsonl_reads_fields_and_defaults(tmp_path):
    corpus = read_raw_corpus(spec(write_jsonl(tmp_path / "c.jsonl", GOOD), default_domain="web"))
    assert [d.doc_id for d in corpus.documents] == ["a", "b"] and not corpus.drops
    a, b = corpus.documents
    assert (a.title, a.domain, a.language) == ("A", "science", "eng")
    assert (b.domain, b.language) == ("web", "deu")
    assert b.text == GOOD[1]["text"]  # kept character for character


def test_bad_jsonl_records_are_dropped_with_line_and_reason(tmp_path):
    rows = GOOD + [
        {"id": "a", "text": "duplicate"},
        {"id": "c"},
        {"id": "d", "text": "   "},
        {"text": "no id"},
        ["not", "an", "object"],
        {"id": "e", "text": 5},
    ]
    path = write_jsonl(tmp_path / "c.jsonl", rows, b'{"id": "f", "text": "caf\xe9"}\n{"id": "g", \n')
    corpus = read_raw_corpus(spec(path))
    assert [d.doc_id for d in corpus.documents] == ["a", "b"]
    assert corpus.records_seen == 10
    got = {(d.reason, d.detail.split(":")[0]) for d in corpus.drops}
    assert got == {
        ("duplicate_id", "line 3"),
        ("missing_text", "line 4"),
        ("empty_text", "line 5"),
        ("missing_id", "line 6"),
        ("not_an_object", "line 7"),
        ("text_not_a_string", "line 8"),
        ("invalid_utf8", "line 9"),
        ("invalid_json", "line 10"),
    }
    assert "already at line 1" in next(d.detail for d in corpus.drops if d.reason == "duplicate_id")


def test_stop_names_the_file_the_line_and_the_fix(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", GOOD + [{"id": "x"}])
    with pytest.raises(RawCorpusError, match=r"c\.jsonl, line 3: missing_text .*on_bad_record: drop"):
        read_raw_corpus(spec(path, on_bad_record="stop"))


def test_parquet_with_renamed_fields_and_binary_text(tmp_path):
    table = pa.table(
        {
            "_id": ["p1", "p2", "p3", "p1"],
            "body": pa.array([b"first", b"caf\xe9", b"third", b"again"], type=pa.binary()),
            "name": ["T1", None, "T3", "T4"],
        }
    )
    pq.write_table(table, tmp_path / "c.parquet")
    corpus = read_raw_corpus(
        spec(tmp_path / "c.parquet", format="parquet", fields={"id": "_id", "text": "body", "title": "name"})
    )
    assert [(d.doc_id, d.text, d.title) for d in corpus.documents] == [("p1", "first", "T1"), ("p3", "third", "T3")]
    assert {(d.reason, d.detail.split(":")[0]) for d in corpus.drops} == {
        ("invalid_utf8", "row 2"),
        ("duplicate_id", "row 4"),
    }


def test_parquet_without_the_text_column_names_the_columns(tmp_path):
    pq.write_table(pa.table({"id": ["x"], "content": ["y"]}), tmp_path / "c.parquet")
    with pytest.raises(RawCorpusError, match=r"columns \['id', 'content'\] lack 'id' or 'text'.*corpus.fields"):
        read_raw_corpus(spec(tmp_path / "c.parquet", format="parquet"))


def test_text_folder_ids_domains_and_invalid_utf8(tmp_path):
    root = tmp_path / "docs"
    (root / "law").mkdir(parents=True)
    (root / "health").mkdir()
    (root / "law" / "one.txt").write_text("Law text.", encoding="utf-8")
    (root / "health" / "two.txt").write_text("Health text.", encoding="utf-8")
    (root / "health" / "bad.txt").write_bytes(b"\xff\xfe broken")
    (root / "health" / "empty.txt").write_text("\n", encoding="utf-8")
    corpus = read_raw_corpus(spec(root, format="text_dir", domain_from_subfolder=True))
    assert [(d.doc_id, d.domain) for d in corpus.documents] == [("health/two", "health"), ("law/one", "law")]
    assert {(d.record, d.reason, d.detail.split(":")[0]) for d in corpus.drops} == {
        ("health/bad", "invalid_utf8", "file health/bad.txt"),
        ("health/empty", "empty_text", "file health/empty.txt"),
    }


def test_missing_path_and_unknown_format_are_config_errors(tmp_path):
    with pytest.raises(RawCorpusError, match="does not exist: fix corpus.path"):
        read_raw_corpus(spec(tmp_path / "nope.jsonl"))
    with pytest.raises(
        ConfigError,
        match=r"config: generation\.corpus\.format: csv is not allowed; allowed values: "
        r"jsonl, parquet or text_dir",
    ):
        spec(tmp_path, format="csv")


def test_documents_round_trip_with_extra_fields(tmp_path):
    corpus = read_raw_corpus(spec(write_jsonl(tmp_path / "c.jsonl", GOOD)))
    write_documents(tmp_path / "out.jsonl", corpus.documents, {"a": {"token_length": 3}})
    back = read_documents(tmp_path / "out.jsonl")
    assert [d for d, _ in back] == corpus.documents and back[0][1] == {"token_length": 3} and back[1][1] == {}
