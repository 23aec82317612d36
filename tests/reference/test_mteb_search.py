"""``backend: mteb`` beyond dense encoders, on MTEB's weightless baselines (real MTEB code paths, no weights needed),
against an independent computation of what each baseline is documented to compute:

- ``output: search`` (posir.models.backends.mteb_search): a late-interaction search model
  (``mteb/baseline-random-colbert``: unit-norm token vectors from a content hash, MaxSim) and a sparse encoder wrapped
  in MTEB's search (``mteb/baseline-random-sparse-encoder``: a hash vector's 16 largest of 128 weights, dot product);
- the second stage (posir.scorers.mteb_cross_encoder): ``mteb/baseline-random-cross-encoder``, the cosine of two
  hash vectors.

The reference vectors are rebuilt here from the documented recipe (sha256 of the text seeds numpy's PCG64), not by
calling MTEB. tests/workflow/test_mteb.py runs the same entries through the workflow against ``mteb.evaluate``.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from posir.models.backends.mteb_search import search, search_model
from posir.models.declarations.spec import ModelSpec

DOCUMENTS = (
    ["d1", "d2", "d3", "d4"],
    [
        "The cat sat on the mat near the door.",
        "Dogs bark at night when the moon is full.",
        "A cat and a dog share one small house.",
        "Rivers carry water from the mountains to the sea.",
    ],
)
QUERIES = (["q1", "q2", "q3"], ["where did the cat sit", "why do dogs bark", "where do rivers go"])


def hash_vector(text: str, size: int) -> np.ndarray:
    """The baselines' vector of a text: numpy's PCG64 seeded with the text's sha256 (mod 2**32), uniform floats."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    return np.random.default_rng(int(digest, 16) % 2**32).random(size, dtype=np.float32)


def token_vectors(text: str, tokens: int = 8, size: int = 16) -> np.ndarray:
    key = hashlib.sha256(text.encode()).hexdigest()
    vectors = np.stack([hash_vector(f"{key}{i}", size) for i in range(tokens)])
    return vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-10)


def sparse_vector(text: str, size: int = 128, kept: int = 16) -> np.ndarray:
    vector = hash_vector(text, size)
    vector[np.argsort(vector)[:-kept]] = 0.0
    return vector


def mteb_entry(model: str) -> ModelSpec:
    return ModelSpec.from_config("x", {"backend": "mteb", "model": model, "output": "search"})


def searched(model: str, top_k: int = 4) -> dict[str, dict[str, float]]:
    return search(mteb_entry(model), DOCUMENTS, QUERIES, top_k, "eng-eng", ["eng-Latn"])


def assert_ranks_by(results: dict[str, dict[str, float]], reference: np.ndarray, top_k: int) -> None:
    for row, qid in enumerate(QUERIES[0]):
        order = np.argsort(-reference[row], kind="stable")[:top_k]
        expected = {DOCUMENTS[0][i]: float(reference[row, i]) for i in order}
        assert set(results[qid]) == set(expected)
        for doc, score in results[qid].items():
            assert score == pytest.approx(expected[doc], abs=1e-5)


def test_a_late_interaction_search_model_ranks_by_maxsim_over_its_token_vectors() -> None:
    queries = np.stack([token_vectors(t) for t in QUERIES[1]])
    documents = np.stack([token_vectors(t) for t in DOCUMENTS[1]])
    maxsim = np.einsum("qid,ejd->qeij", queries, documents).max(axis=3).sum(axis=2)
    assert_ranks_by(searched("mteb/baseline-random-colbert", top_k=3), maxsim, top_k=3)


def test_a_sparse_encoder_is_searched_by_its_own_dot_product() -> None:
    queries = np.stack([sparse_vector(t) for t in QUERIES[1]])
    documents = np.stack([sparse_vector(t) for t in DOCUMENTS[1]])
    assert (queries != 0).sum(axis=1).tolist() == [16, 16, 16]
    assert_ranks_by(searched("mteb/baseline-random-sparse-encoder"), queries @ documents.T, top_k=4)


def test_a_search_model_answers_every_query_with_at_most_top_k_documents() -> None:
    results = searched("mteb/baseline-bm25s", top_k=2)
    assert list(results) == QUERIES[0]
    assert all(1 <= len(docs) <= 2 for docs in results.values())
    assert max(results["q1"], key=results["q1"].get) == "d1"  # the only document with "cat" and "sat"
    assert max(results["q3"], key=results["q3"].get) == "d4"


def test_the_protocol_is_chosen_as_mteb_chooses_it() -> None:
    import mteb
    from mteb.models.search_wrappers import SearchEncoderWrapper

    encoder = mteb.get_model("mteb/baseline-random-sparse-encoder")
    assert isinstance(search_model(encoder), SearchEncoderWrapper) and search_model(encoder).model is encoder
    colbert = mteb.get_model("mteb/baseline-random-colbert")
    assert search_model(colbert) is colbert
    with pytest.raises(TypeError, match="a cross-encoder does not rank a corpus"):
        search_model(mteb.get_model("mteb/baseline-random-cross-encoder"))


def test_an_mteb_cross_encoder_scores_each_pair_by_the_cosine_of_its_hash_vectors() -> None:
    from posir.scorers.registry import load_scorer
    from posir.scorers.spec import ScorerSpec

    scorer = load_scorer(
        ScorerSpec.from_config("ce", {"backend": "mteb", "model": "mteb/baseline-random-cross-encoder"})
    )
    queries = [QUERIES[1][0], QUERIES[1][0], QUERIES[1][1], QUERIES[1][2]]
    documents = [DOCUMENTS[1][0], DOCUMENTS[1][1], DOCUMENTS[1][1], DOCUMENTS[1][3]]
    expected = []
    for query, document in zip(queries, documents):
        a, b = hash_vector(query, 32), hash_vector(document, 32)
        expected.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    assert scorer.score(queries, documents) == pytest.approx(expected, abs=1e-6)
    # a pair's score is its own: the same pair alone scores the same (the score cache keeps pairs one by one)
    assert scorer.score(queries[2:3], documents[2:3]) == pytest.approx(expected[2:3], abs=1e-6)
    identity = scorer.identity()
    assert identity["backend"] == "mteb" and identity["revision"] == "2" and "mteb" in identity["versions"]
    # the score cache's key holds MTEB's loader of the model, the libraries loaders run on and this module's version
    assert identity["loader"].endswith("random_baseline.RandomCrossEncoderBaseline")
    assert {"torch", "FlagEmbedding"} <= set(identity["versions"]) and identity["version"] >= 1
