import pytest

from posir import benchmark as fmt


def _tiny():
    docs = [fmt.Document("d1", "Alpha beta gamma.", "T"), fmt.Document("d2", "Delta epsilon.", "T")]
    queries = [fmt.Query("q1", "what is beta?")]
    positions = [fmt.Position("q1", "d1", 6, 10, 17, 4, 8 / 17, 9, "Q1")]
    return docs, queries, positions


def test_round_trip(tmp_path):
    docs, queries, positions = _tiny()
    drops = [fmt.Drop("attach_questions", "q9", "answer_offset_mismatch", "detail")]
    fmt.write_benchmark(tmp_path, docs, queries, positions, drops, {"name": "tiny"})
    assert fmt.read_corpus(tmp_path / fmt.CORPUS) == docs
    assert fmt.read_queries(tmp_path / fmt.QUERIES) == queries
    assert fmt.read_qrels(tmp_path / fmt.QRELS) == {"q1": {"d1": 1}}
    back = fmt.read_positions(tmp_path / fmt.POSITIONS)
    assert back[0].doc_id == "d1" and back[0].relative_position == pytest.approx(8 / 17, abs=1e-6)
    assert (tmp_path / fmt.DROPS).read_text().splitlines()[1].startswith("attach_questions\tq9")


def test_validate_catches_a_span_that_does_not_hold_its_evidence():
    docs, queries, positions = _tiny()
    fmt.validate(docs, queries, positions, {"q1": "beta"})
    with pytest.raises(fmt.BenchmarkError, match="q1"):
        fmt.validate(docs, queries, positions, {"q1": "gamma"})


def test_validate_catches_duplicate_ids_and_missing_positives():
    docs, queries, positions = _tiny()
    with pytest.raises(fmt.BenchmarkError, match="duplicate document"):
        fmt.validate(docs + docs[:1], queries, positions)
    with pytest.raises(fmt.BenchmarkError, match="not in the corpus"):
        fmt.validate(docs[1:], queries, positions)


def test_bad_jsonl_line_names_file_and_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "b"}\n')
    with pytest.raises(fmt.BenchmarkError, match=r"corpus.jsonl, line 2: missing field\(s\) \['text'\]"):
        fmt.read_corpus(path)
    path.write_text('{"_id": "a", "text": "x"}\nnot json\n')
    with pytest.raises(fmt.BenchmarkError, match="line 2: not valid JSON"):
        fmt.read_corpus(path)
