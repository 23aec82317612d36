"""A user's raw corpus as a careless or hostile user writes it (generation's first stage).

Before: a lone surrogate (JSON ``"\\ud800"``) crashed the stage with no line named; a
UTF-8 byte-order mark made the first record ``invalid_json``; a file of control
characters was accepted as a document; files the folder reader skipped (a ``.png``)
vanished without a count; ids with whitespace (``my doc.txt``) were accepted and broke
the TREC run files at scoring time. Each record is now dropped by line with a reason,
or read (BOM), or mapped reversibly (ids).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from posir.benchmark import BenchmarkError, original_id, safe_id
from posir.builders.generation import GenerationBenchmark
from posir.builders.raw_corpus import RawCorpusSpec, read_raw_corpus, write_documents
from posir.plan.jobs import GenerationJob
from posir.results.runs import write_trec_run
from posir.steps.generation import read_corpus_step


def spec(path: Path, **kw) -> RawCorpusSpec:
    return RawCorpusSpec.from_config({"path": str(path), **kw}, "benchmarks.raw.generation.corpus").in_language("eng")


def test_a_lone_surrogate_is_dropped_with_its_line_and_the_rest_is_written(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id": "a", "text": "Fine text."}\n{"id": "b", "text": "bad \\ud800 text"}\n'
        '{"id": "c", "text": "Also fine."}\n',
        encoding="utf-8",
    )
    corpus = read_raw_corpus(spec(path))
    assert [d.doc_id for d in corpus.documents] == ["a", "c"]
    (drop,) = corpus.drops
    assert drop.reason == "invalid_text" and drop.detail.startswith("line 2:") and "U+D800" in drop.detail
    # the stage itself writes its outputs (the surrogate used to crash the JSONL writer)
    out = tmp_path / "stage"
    entry = GenerationBenchmark.from_config(
        "raw", {"builder": "llm_generation", "language": "eng", "generation": {"corpus": {"path": str(path)}}}
    )
    read_corpus_step(
        GenerationJob(
            entry=entry,
            output={
                "documents": str(out / "documents.jsonl"),
                "drops": str(out / "drops.tsv"),
                "counts": str(out / "counts.json"),
            },
        )
    )
    assert len((out / "documents.jsonl").read_text(encoding="utf-8").splitlines()) == 2


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "text": "First record."}\n{"id": "b", "text": "Second."}\n')
    corpus = read_raw_corpus(spec(path))
    assert [d.doc_id for d in corpus.documents] == ["a", "b"] and not corpus.drops


def test_a_file_of_control_characters_is_not_a_document(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.txt").write_text("A real document about rivers.", encoding="utf-8")
    (folder / "noise.txt").write_bytes(bytes(range(1, 9)) + b"\x0b\x0c\x0e\x1f")
    corpus = read_raw_corpus(spec(folder, format="text_dir"))
    assert [d.doc_id for d in corpus.documents] == ["good"]
    assert [(d.record, d.reason) for d in corpus.drops] == [("noise", "no_text_content")]


def test_files_the_folder_reader_skips_are_counted(tmp_path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("Text of a.", encoding="utf-8")
    (folder / "sub" / "figure.png").write_bytes(b"\x89PNG\r\n")
    (folder / "notes.md").write_text("# not matched", encoding="utf-8")
    corpus = read_raw_corpus(spec(folder, format="text_dir", on_bad_record="stop"))
    assert [d.doc_id for d in corpus.documents] == ["a"]
    assert sorted((d.record, d.reason) for d in corpus.drops) == [
        ("notes.md", "file_skipped"),
        ("sub/figure.png", "file_skipped"),
    ]
    assert corpus.records_seen == 3


def test_ids_with_whitespace_are_mapped_reversibly_and_counted(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "my doc.txt").write_text("A document whose file name has a space.", encoding="utf-8")
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id": "tab\\there", "text": "Tabbed id."}\n{"id": "100%", "text": "Percent id."}\n', encoding="utf-8"
    )
    from_folder = read_raw_corpus(spec(folder, format="text_dir"))
    from_jsonl = read_raw_corpus(spec(path))
    assert [d.doc_id for d in from_folder.documents] == ["my%20doc"] and from_folder.ids_mapped == 1
    assert [d.doc_id for d in from_jsonl.documents] == ["tab%09here", "100%25"] and from_jsonl.ids_mapped == 2
    for raw in ("my doc", "tab\there", "100%", "line\nbreak", "nbsp\u00a0id", "plain"):
        assert original_id(safe_id(raw)) == raw
        assert not any(ch.isspace() for ch in safe_id(raw))
    write_documents(tmp_path / "ok.jsonl", from_folder.documents)


def test_a_run_file_refuses_ids_with_whitespace_naming_them(tmp_path):
    with pytest.raises(BenchmarkError, match=r"id 'my doc' is empty or holds whitespace"):
        write_trec_run(tmp_path / "run.trec", ["q1"], ["my doc"], np.ones((1, 1)), np.zeros((1, 1), dtype=int), "t")
