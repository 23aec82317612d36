import pytest

from posir import benchmark as fmt
from posir.metrics.positions import length_buckets


def _tiny():
    docs = [fmt.Document("d1", "Alpha beta gamma.", "T"), fmt.Document("d2", "Delta epsilon.", "T")]
    queries = [fmt.Query("q1", "what is beta?")]
    positions = [fmt.Position("q1", "d1", 6, 10, 17, 4, 8 / 17, 9, "Q1")]
    return docs, queries, positions


def test_round_trip(tmp_path):
    docs, queries, positions = _tiny()
    drops = [fmt.Drop("attach_questions", "q9", "answer_offset_mismatch", "detail")]
    built = fmt.BuiltBenchmark(docs, queries, positions, drops, [], {"d1": 4, "d2": 3}, {"q1": "beta"})
    card = fmt.finish(built, fmt.Provenance("tiny", "test", "eng", {}, {}), length_buckets(), 20, tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        fmt.CONTRACT.values()
    )
    assert card["counts"]["queries_per_bucket"] == {"Q1": 1, "Q2": 0, "Q3": 0, "Q4": 0}
    assert fmt.read_corpus(tmp_path / fmt.CORPUS) == docs
    assert fmt.read_queries(tmp_path / fmt.QUERIES) == queries
    assert fmt.read_qrels(tmp_path / fmt.QRELS) == {"q1": {"d1": 1}}
    back = fmt.read_positions(tmp_path / fmt.POSITIONS)
    assert back[0].doc_id == "d1" and back[0].relative_position == pytest.approx(8 / 17, abs=1e-6)
    assert (tmp_path / fmt.DROPS).read_text().splitlines()[1].startswith("attach_questions\tq9")
    assert fmt.read_table(tmp_path / fmt.DOCUMENTS)[0] == {
        "doc_id": "d1",
        "char_length": "17",
        "token_length": "4",
        "length_bucket": "Q1",
    }


def test_a_query_only_variant_writes_no_corpus(tmp_path):
    docs, queries, positions = _tiny()
    built = fmt.BuiltBenchmark(None, queries, positions, [], [], {"d1": 4, "d2": 3})
    fmt.finish(built, fmt.Provenance("tiny-deu", "test", "deu", {}, {}), length_buckets(), 20, tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        fmt.QUERY_ONLY_CONTRACT.values()
    )


def test_subsampling_is_seeded_by_id_and_counted():
    docs, queries, positions = _tiny()
    queries = [fmt.Query(f"q{i}", "text") for i in range(10)]
    positions = [fmt.Position(q.qid, "d1", 6, 10, 17, 4, 8 / 17, 9, "Q1") for q in queries]
    built = fmt.BuiltBenchmark(docs, queries, positions, [], [], {"d1": 4, "d2": 3})
    first, again = fmt.subsample(built, 4, seed=7), fmt.subsample(built, 4, seed=7)
    assert [q.qid for q in first.queries] == [q.qid for q in again.queries] and len(first.queries) == 4
    assert {p.qid for p in first.positions} == {q.qid for q in first.queries}
    assert sum(d.reason == "subsampled" for d in first.drops) == 6
    assert vars(first.stages[-1]) == {
        "stage": "subsample_queries",
        "unit": "questions",
        "entered": 10,
        "left": 4,
        "dropped": {"subsampled": 6},
    }


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
