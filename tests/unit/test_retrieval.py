"""Exact search against a plain numpy reference; BM25 against the Lucene formula by hand."""

import math

import numpy as np
import pytest

from posir.models.backends.bm25 import Bm25Analyzer, bm25_search
from posir.results.runs import read_trec_run, write_trec_run
from posir.retrieval import exact_inner_product_search


def bm25_params(**overrides: object) -> dict:
    """A bm25 entry's params with the schema's defaults filled in, as the workflow passes them."""
    from posir.models.declarations.spec import ModelSpec

    return dict(ModelSpec.from_config("bm25", {"backend": "bm25", "params": overrides}).params)


def test_faiss_exact_search_equals_numpy_matmul_and_argsort():
    rng = np.random.default_rng(0)
    docs = rng.normal(size=(500, 32)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = rng.normal(size=(40, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    scores, indices = exact_inner_product_search(queries, docs, k=50)
    reference = queries @ docs.T
    expected = np.argsort(-reference, axis=1)[:, :50]
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_allclose(scores, np.take_along_axis(reference, expected, axis=1), rtol=1e-5, atol=1e-6)


def test_top_k_larger_than_corpus_returns_the_whole_corpus():
    docs = np.eye(3, dtype=np.float32)
    scores, indices = exact_inner_product_search(np.eye(3, dtype=np.float32)[:1], docs, k=1000)
    assert indices.shape == (1, 3) and indices[0, 0] == 0


def test_dimension_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="dimensions"):
        exact_inner_product_search(np.zeros((1, 3), np.float32), np.zeros((2, 4), np.float32), 1)


def test_trec_run_round_trip_skips_empty_slots(tmp_path):
    path = tmp_path / "run.trec"
    write_trec_run(
        path, ["q1", "q2"], ["a", "b", "c"], np.array([[3.0, 2.0], [1.0, 0.0]]), np.array([[2, 0], [1, -1]]), "t"
    )
    assert path.read_text().splitlines()[0] == "q1 Q0 c 1 3.000000 t"
    assert read_trec_run(path) == {"q1": {"c": 3.0, "a": 2.0}, "q2": {"b": 1.0}}


def test_the_head_a_search_returns_is_what_its_measures_read_of_the_file(tmp_path):
    """The run's head to depth 3 scores as the whole file does: a query whose 3rd and 4th scores differ only below
    the written precision keeps both (trec_eval orders the tie by document id, so the 4th may be in its top 3), the
    5th goes; scores are the written ones read back."""
    from posir.metrics.measures import NDCG, Recall, ReciprocalRank
    from posir.metrics.per_query import score_queries

    path = tmp_path / "run.trec"
    doc_ids = ["a", "b", "c", "d", "e", "z"]
    scores = np.array([[0.9, 0.8, 0.70000001, 0.69999998, 0.5], [0.9, 0.8, 0.7, 0.6, -np.inf]])
    indices = np.array([[0, 1, 2, 5, 4], [4, 3, 2, 1, -1]])
    head = write_trec_run(path, ["q1", "q2"], doc_ids, scores, indices, "t", head=3)
    assert head == {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "z": 0.7}, "q2": {"e": 0.9, "d": 0.8, "c": 0.7}}
    measures = (NDCG(cutoff=3), Recall(cutoff=3), ReciprocalRank(cutoff=3))
    qrels = {"q1": {"z": 1}, "q2": {"b": 1, "c": 1}}
    assert score_queries(qrels, head, measures) == score_queries(qrels, read_trec_run(path), measures)
    assert score_queries(qrels, head, measures)["q1"]["ndcg@3"] == pytest.approx(0.5)  # z before c: id descending


@pytest.mark.parametrize(
    "scores, indices",
    [([[0.5, 0.9, 0.1]], [[0, 1, 2]]), ([[0.9, 0.5, 0.1]], [[0, 1, 0]])],
    ids=["scores rising down the row", "a document twice"],
)
def test_a_run_whose_rows_the_file_alone_explains_has_no_head(tmp_path, scores, indices):
    head = write_trec_run(tmp_path / "run.trec", ["q1"], ["a", "b", "c"], np.array(scores), np.array(indices), "t", 2)
    assert head is None
    assert read_trec_run(tmp_path / "run.trec")  # the file is written all the same


def _lucene_bm25(query, docs, k1=1.5, b=0.75):
    """Lucene >= 8 BM25 (Kamphuis et al. 2020): the constant (k1 + 1) factor is dropped."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    scores = []
    for doc in docs:
        total = 0.0
        for term in set(query):
            df = sum(term in d for d in docs)
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = doc.count(term)
            total += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(total)
    return scores


def test_bm25_scores_match_the_lucene_formula_on_stemmed_tokens():
    documents = [
        "The Broncos defeated the Panthers in the final game.",
        "Panthers are large cats living in forests and jungles.",
        "A game of chess between two old friends.",
        "Denver is the home of the Broncos football team and many teams more.",
    ]
    queries = ["Which team did the Broncos defeat?", "forest cats"]
    scores, indices = bm25_search(
        documents, queries, k=4, document_languages="eng", query_language="eng", params=bm25_params(k1=1.5, b=0.75)
    )
    analyzer = Bm25Analyzer.for_language("eng", bm25_params())
    doc_tokens = analyzer.tokenize(documents)
    for row, query_tokens in enumerate(analyzer.tokenize(queries)):
        expected = _lucene_bm25(query_tokens, doc_tokens)
        got = {int(i): float(s) for i, s in zip(indices[row], scores[row]) if i >= 0}
        for index, value in enumerate(expected):
            if value > 0:
                assert got[index] == pytest.approx(value, rel=1e-5)
            else:
                assert index not in got  # zero-score documents are not retrieved


def test_english_analyzer_stems_and_drops_stopwords():
    analyzer = Bm25Analyzer.for_language("eng", bm25_params())
    assert analyzer.stemmer_name == "english"
    assert analyzer.tokenize(["The teams and the players"]) == [["team", "player"]]


def test_query_without_known_terms_retrieves_nothing():
    scores, indices = bm25_search(["alpha beta", "gamma delta"], ["zzz"], 10, "eng", "eng", bm25_params())
    assert (indices == -1).all()


def test_best_window_search_equals_a_brute_force_maxp_over_every_window():
    from posir.retrieval import best_window_search

    rng = np.random.default_rng(4)
    n_documents, dims = 60, 16
    owners = np.concatenate([rng.permutation(np.repeat(np.arange(n_documents - 5), 3)), [55, 57]])  # 3 docs without
    windows = rng.normal(size=(len(owners), dims)).astype(np.float32)
    queries = rng.normal(size=(9, dims)).astype(np.float32)
    scores, indices = best_window_search(queries, windows, owners, n_documents, k=20, batch=4)
    for q in range(len(queries)):
        best = {int(doc): float(np.max(windows[owners == doc] @ queries[q])) for doc in np.unique(owners)}
        expected = sorted(best, key=lambda doc: -best[doc])[:20]
        assert indices[q].tolist() == expected
        np.testing.assert_allclose(scores[q], [best[d] for d in expected], rtol=1e-5, atol=1e-6)
    wide, wide_indices = best_window_search(queries[:1], windows, owners, n_documents, k=100)
    assert wide.shape == (1, n_documents) and (wide_indices[0, 57:] == -1).all()  # padded past the 57 with windows
