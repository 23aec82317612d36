"""BGE-M3's dense, multi-vector and sparse entries (``backend: flagembedding``) against FlagEmbedding's own encoding
and scoring (docs/late-interaction.md).

The checkpoint is tiny and randomly initialised, written as a BGE-M3 folder (tests/fixtures/bge_m3_checkpoint.py:
an XLM-R encoder, an XLM-R-shaped tokenizer, ``colbert_linear.pt``, ``sparse_linear.pt``). The independent side is
FlagEmbedding's ``BGEM3FlagModel`` itself: its ``encode`` (its own tokenization, padding and batching) and its
``colbert_score`` and ``compute_lexical_matching_score``. Our search over our rows must rank as those scores do, with
per-query nDCG@10 against pytrec_eval; the entries of the other outputs must find the first one's pass cached, the
dense one included (FlagEmbedding's dense vector of the same pass, which is ``FlagModel``'s).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from posir.encoding import EncodingService
from posir.models.declarations.spec import ModelConfigError, ModelSpec
from posir.models.identity import encoding_identity
from posir.models.registry import load_encoder
from posir.retrieval.maxsim import TokenMatrix, maxsim_search
from posir.retrieval.sparse import sparse_matrix, sparse_search
from tests.fixtures import bge_m3_checkpoint, toy_collection

DOCUMENTS = [
    *toy_collection.DOCUMENTS,
    "Der Rhein ist ein Strom in Mitteleuropa.",
]  # a German text: the tokenizer is XLM-R's
QUERIES, RELEVANT = list(toy_collection.QUERIES), toy_collection.RELEVANT


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bge_m3_checkpoint.bge_m3(tmp_path_factory.mktemp("bge-m3") / "bge-m3")


def entry(folder: Path, output: str, **keys: object) -> ModelSpec:
    return ModelSpec.from_config(
        f"m3-{output}", {"backend": "flagembedding", "model": str(folder), "output": output, **keys}
    )


@pytest.fixture(scope="module")
def flag(folder: Path):  # noqa: ANN201
    """FlagEmbedding's own model of the folder, in float32 on the CPU."""
    from FlagEmbedding import BGEM3FlagModel

    return BGEM3FlagModel(str(folder), use_fp16=False, devices="cpu", batch_size=4)


@pytest.fixture(scope="module")
def reference(flag) -> dict[str, dict]:  # noqa: ANN001
    """FlagEmbedding's ColBERT vectors and lexical weights of the queries and the documents."""
    out = {}
    for role, texts in (("query", QUERIES), ("document", DOCUMENTS)):
        out[role] = flag.encode(texts, return_dense=False, return_sparse=True, return_colbert_vecs=True)
    return out


@pytest.fixture(scope="module")
def rows(folder: Path) -> dict[str, dict]:
    """Our rows of both outputs, each from its own entry."""
    out: dict[str, dict] = {}
    for output in ("multi-vector", "sparse"):
        encoder = load_encoder(entry(folder, output))
        out[output] = {
            "query": encoder.encode_rows(QUERIES, "query"),
            "document": encoder.encode_rows(DOCUMENTS, "document"),
        }
    return out


def _maxsim(query: np.ndarray, document: np.ndarray) -> float:
    return float(np.einsum("qd,td->qt", query, document).max(axis=1).sum())


def test_colbert_vectors_are_flagembeddings_after_the_first_token(folder: Path, reference, rows) -> None:  # noqa: ANN001
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    for role, texts in (("query", QUERIES), ("document", DOCUMENTS)):
        for text, ours, theirs in zip(texts, rows["multi-vector"][role], reference[role]["colbert_vecs"]):
            ids = tokenizer(text)["input_ids"]
            # every token after <s>, the closing </s> included; unit length (normalize_embeddings)
            assert list(ours.tokens["token_id"]) == ids[1:] and list(ours.tokens["position"]) == list(
                range(1, len(ids))
            )
            assert ours.input_tokens == len(ids) and ours.vectors.shape == theirs.shape
            np.testing.assert_allclose(ours.vectors.astype(np.float32), theirs, atol=1e-3)
            np.testing.assert_allclose(np.linalg.norm(ours.vectors.astype(np.float32), axis=1), 1, atol=1e-3)


def test_token_spans_point_at_the_token_in_the_text(folder: Path, rows) -> None:  # noqa: ANN001
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    for text, row in zip(DOCUMENTS, rows["multi-vector"]["document"]):
        in_text = row.tokens[row.tokens["start"] >= 0]
        assert len(in_text) > 10
        for token in in_text:
            piece = tokenizer.convert_ids_to_tokens(int(token["token_id"])).replace("▁", "")
            # a lone "▁" (a space the next piece does not carry) and <unk> name no characters of their own
            if piece and token["token_id"] != tokenizer.unk_token_id:
                assert text[token["start"] : token["end"]].strip() == piece
        assert row.tokens[-1]["token_id"] == tokenizer.eos_token_id and row.tokens[-1]["start"] == -1


def test_maxsim_is_flagembeddings_colbert_score_times_the_query_length(flag, reference, rows) -> None:  # noqa: ANN001
    for q, query in enumerate(rows["multi-vector"]["query"]):
        for d, document in enumerate(rows["multi-vector"]["document"]):
            theirs = float(
                flag.colbert_score(reference["query"]["colbert_vecs"][q], reference["document"]["colbert_vecs"][d])
            )
            ours = _maxsim(query.vectors.astype(np.float32), document.vectors.astype(np.float32))
            assert ours == pytest.approx(theirs * len(query.vectors), abs=2e-3)


def test_lexical_weights_are_flagembeddings_with_their_winning_tokens(flag, reference, rows) -> None:  # noqa: ANN001
    for role, texts in (("query", QUERIES), ("document", DOCUMENTS)):
        for text, ours, theirs in zip(texts, rows["sparse"][role], reference[role]["lexical_weights"]):
            assert 0 < len(ours.terms) < ours.input_tokens
            assert list(ours.terms["term"]) == sorted(int(t) for t in theirs)
            np.testing.assert_allclose(ours.terms["weight"], [theirs[str(t)] for t in ours.terms["term"]], rtol=1e-4)
            ids = flag.tokenizer(text)["input_ids"]
            assert all(ids[p] == t for p, t in zip(ours.terms["position"], ours.terms["term"]))
    for q, query in enumerate(rows["sparse"]["query"]):
        for d, document in enumerate(rows["sparse"]["document"]):
            theirs = flag.compute_lexical_matching_score(
                reference["query"]["lexical_weights"][q], reference["document"]["lexical_weights"][d]
            )
            common, mine, other = np.intersect1d(query.terms["term"], document.terms["term"], return_indices=True)
            ours = float(np.dot(query.terms["weight"][mine], document.terms["weight"][other]))
            assert ours == pytest.approx(float(theirs), rel=1e-4, abs=1e-6)


def _reference_scores(flag, reference) -> dict[str, np.ndarray]:  # noqa: ANN001
    q, d = reference["query"], reference["document"]
    colbert = np.array([[float(flag.colbert_score(a, b)) for b in d["colbert_vecs"]] for a in q["colbert_vecs"]])
    lexical = np.asarray(flag.compute_lexical_matching_score(q["lexical_weights"], d["lexical_weights"]), dtype=float)
    return {"multi-vector": colbert, "sparse": lexical}


def _ndcg(scores: np.ndarray) -> dict[str, float]:
    qrels = {f"q{q}": {f"d{d}": 1} for q, d in RELEVANT.items()}
    run = {f"q{q}": {f"d{d}": float(s) for d, s in enumerate(row)} for q, row in enumerate(scores)}
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return {q: values["ndcg_cut_10"] for q, values in evaluated.items()}


@pytest.mark.parametrize("output", ["multi-vector", "sparse"])
def test_exact_search_ranks_as_flagembeddings_scores(flag, reference, rows, output: str) -> None:  # noqa: ANN001
    from posir.metrics.per_query import score_queries

    queries, documents = rows[output]["query"], rows[output]["document"]
    expected = _reference_scores(flag, reference)[output]
    n = len(DOCUMENTS)
    if output == "multi-vector":

        def matrix(rs):  # noqa: ANN001, ANN202
            return TokenMatrix(
                np.concatenate([r.vectors for r in rs]), np.r_[0, np.cumsum([len(r.vectors) for r in rs])]
            )

        scores, indices = maxsim_search(matrix(queries), [matrix(documents)], [np.arange(n)], n, n)
        lengths = np.array([len(r.vectors) for r in queries])[:, None]
        np.testing.assert_allclose(scores, -np.sort(-expected * lengths, axis=1), atol=2e-3)
    else:
        vocabulary = 1 + max(int(r.terms["term"].max()) for r in (*queries, *documents))
        scores, indices = sparse_search(
            sparse_matrix(*_flat(queries), vocabulary), [sparse_matrix(*_flat(documents), vocabulary)],
            [np.arange(n)], n, n,
        )  # fmt: skip
        np.testing.assert_allclose(scores, -np.sort(-expected, axis=1), rtol=1e-4, atol=1e-6)
    # FlagEmbedding's scores in our order fall (documents sharing no term with a query tie at 0 and may come in
    # either order); its best document is ours
    in_our_order = np.take_along_axis(expected, indices, axis=1)
    assert (np.diff(in_our_order, axis=1) <= 1e-6).all()
    assert (indices[:, 0] == expected.argmax(axis=1)).all()
    assert all(len(np.unique(np.round(row, 4))) >= 4 for row in expected)  # scores spread enough to order
    run = {f"q{q}": {f"d{d}": float(s) for d, s in zip(indices[q], scores[q])} for q in range(len(QUERIES))}
    ours = score_queries({f"q{q}": {f"d{d}": 1} for q, d in RELEVANT.items()}, run)
    for qid, value in _ndcg(expected).items():
        assert ours[qid]["ndcg@10"] == pytest.approx(value)


def _flat(rs):  # noqa: ANN001, ANN202
    terms = np.concatenate([r.terms for r in rs])
    return terms["term"], terms["weight"], np.r_[0, np.cumsum([len(r.terms) for r in rs])]


def test_one_pass_caches_both_outputs(folder: Path, tmp_path: Path, rows) -> None:  # noqa: ANN001
    colbert, lexical = entry(folder, "multi-vector"), entry(folder, "sparse")
    assert encoding_identity(colbert) == encoding_identity(lexical)
    assert encoding_identity(colbert) != encoding_identity(entry(folder, "dense"))
    cache = tmp_path / "embedding-cache.sqlite"
    with EncodingService(colbert, cache) as service:
        first = service.encode(DOCUMENTS, "document")
    assert first.from_cache == 0
    with EncodingService(lexical, cache) as service:
        second = service.encode(DOCUMENTS, "document")
        assert service._encoder is None  # the sparse entry loaded no model: the multi-vector entry's pass was cached
    assert second.from_cache == len(DOCUMENTS)
    for cached, uncached in zip(second.rows, rows["sparse"]["document"]):
        assert cached.terms.tobytes() == uncached.terms.tobytes()
    for cached, uncached in zip(first.rows, rows["multi-vector"]["document"]):
        assert (
            cached.vectors.tobytes() == uncached.vectors.tobytes()
            and cached.tokens.tobytes() == uncached.tokens.tobytes()
        )


def test_a_folder_without_the_heads_is_refused(folder: Path, tmp_path: Path) -> None:
    import shutil

    plain = tmp_path / "no-heads"
    shutil.copytree(folder, plain)
    (plain / "sparse_linear.pt").unlink()
    with pytest.raises(ModelConfigError, match=r"model 'm3-sparse'.*sparse_linear\.pt.*models\.m3-sparse\.model"):
        load_encoder(entry(plain, "sparse"))


@pytest.mark.parametrize("output", ["multi-vector", "sparse"])
def test_rescoring_is_the_best_windows_score(folder: Path, tmp_path: Path, output: str) -> None:
    from posir.scorers.rescore import RescoreScorer
    from posir.scorers.spec import ScorerSpec

    model = {"backend": "flagembedding", "model": str(folder), "output": output}
    scorer = RescoreScorer(
        ScorerSpec.from_config("m3-maxp", {"backend": "rescore", "model": "m3", "window_tokens": 8}),
        model,
        tmp_path / "cache.sqlite",
    )
    spec = entry(folder, output)
    encoder = load_encoder(spec)
    assert encoder.window_budget("document") == 510  # 512 less <s> and </s>
    document = DOCUMENTS[2]
    spans = encoder.window_spans(document, "document", 8, 4)
    assert len(spans) > 3 and spans[0][0] == 0 and spans[-1][1] == len(document)
    query = encoder.encode_rows(QUERIES[1:2], "query")[0]
    windows = encoder.encode_rows([document[s:e] for s, e in spans], "document")
    if output == "multi-vector":
        best = max(_maxsim(query.vectors.astype(np.float32), w.vectors.astype(np.float32)) for w in windows)
    else:
        best = max(
            float(np.dot(query.terms["weight"][a], w.terms["weight"][b]))
            for w in windows
            for _, a, b in [np.intersect1d(query.terms["term"], w.terms["term"], return_indices=True)]
        )
    assert scorer.score([QUERIES[1]], [document])[0] == pytest.approx(best, rel=1e-5, abs=1e-6)
    scorer.close()


def test_the_encode_and_search_steps_write_and_rank_both_outputs(folder: Path, tmp_path: Path, flag, reference) -> None:  # noqa: ANN001
    """Through the workflow's own steps: the text sets written in the on-disk format, read back, searched exactly;
    the chunked sparse entry's windows are its own pass (the plain colbert entry cached the queries)."""
    import json

    from posir.results.embeddings import load_sparse_vectors, load_token_vectors
    from posir.results.paths import ResultPaths
    from posir.steps.retrieval import encode_set, token_search

    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(DOCUMENTS)))
    queries.write_text("".join(json.dumps({"_id": f"q{i}", "text": t}) + "\n" for i, t in enumerate(QUERIES)))
    cache = tmp_path / "embedding-cache.sqlite"
    paths = ResultPaths(str(tmp_path / "results"))
    expected = _reference_scores(flag, reference)
    entries = {
        "m3-colbert": entry(folder, "multi-vector"),
        "m3-sparse": entry(folder, "sparse", long_input="chunks", window_tokens=12, stride_tokens=6),
    }
    for name, spec in entries.items():
        outputs = {}
        for kind, texts in (("queries", queries), ("corpus", corpus)):
            written = (paths.sparse_vector_outputs if spec.is_sparse else paths.token_vector_outputs)(name, "b", kind)
            counts = encode_set(spec, texts, kind, written, threads=1, cache_path=cache)
            outputs[kind] = next(iter(written.values()))
            if name == "m3-sparse" and kind == "queries":
                assert counts.from_cache == len(QUERIES)  # the colbert entry's pass cached its lexical weights too
        run = tmp_path / f"{name}.trec"
        token_search(spec, Path(outputs["queries"]), [Path(outputs["corpus"])], [], 10, run)
        ranked: dict[str, list[str]] = {}
        for line in run.read_text().splitlines():
            qid, _, doc_id, *_ = line.split()
            ranked.setdefault(qid, []).append(doc_id)
        if spec.is_sparse:
            corpus_rows = load_sparse_vectors(Path(outputs["corpus"]))
            assert len(corpus_rows.ids) > len(DOCUMENTS)  # windows: a document has several rows
        else:
            assert load_token_vectors(Path(outputs["corpus"])).ids == [f"d{i}" for i in range(len(DOCUMENTS))]
            for q in range(len(QUERIES)):  # the whole documents: FlagEmbedding's colbert_score order
                assert ranked[f"q{q}"][0] == f"d{int(expected['multi-vector'][q].argmax())}"
                order = [int(d[1:]) for d in ranked[f"q{q}"]]
                assert (np.diff(expected["multi-vector"][q][order]) <= 1e-6).all()


M3_DENSE = {"params": {"model_class": "encoder-only-m3"}}


def test_the_dense_vector_is_flagembeddings_and_flagmodels_from_the_same_pass(folder: Path, flag) -> None:  # noqa: ANN001
    from posir.models.backends.bge_m3 import M3Encoder
    from posir.models.backends.flagembedding import FlagEmbeddingEncoder

    encoder = load_encoder(entry(folder, "dense", **M3_DENSE))
    assert isinstance(encoder, M3Encoder)
    ours = encoder.encode(DOCUMENTS, "document")
    theirs = flag.encode(DOCUMENTS, return_dense=True, return_sparse=False, return_colbert_vecs=False)["dense_vecs"]
    np.testing.assert_allclose(ours, theirs, atol=1e-6, rtol=0)
    flag_model = load_encoder(entry(folder, "dense"))  # the default class: FlagModel, on the same folder
    assert isinstance(flag_model, FlagEmbeddingEncoder)
    np.testing.assert_allclose(ours, flag_model.encode(DOCUMENTS, "document"), atol=1e-6, rtol=0)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_the_class_is_the_entrys_not_the_folders(folder: Path, tmp_path: Path) -> None:
    """Which reading encodes a dense entry is said by its config (params.model_class), never by the files a machine
    holds: an entry keeps its identity and its vectors on every host."""
    import shutil

    from posir.models.identity import vector_versions

    plain = tmp_path / "no-heads"
    shutil.copytree(folder, plain)
    (plain / "colbert_linear.pt").unlink()
    with pytest.raises(ModelConfigError, match=r"model 'm3-dense'.*colbert_linear\.pt.*models\.m3-dense\.model"):
        load_encoder(entry(plain, "dense", **M3_DENSE))
    # FlagModel's entries are keyed on FlagModel's implementation, a dense entry of the pass on the pass's
    assert "flagembedding/dense" in vector_versions(entry(folder, "dense"))
    assert "flagembedding/one-pass" in vector_versions(entry(folder, "dense", **M3_DENSE))
    with pytest.raises(ModelConfigError, match=r"params\.pooling_method: BGE-M3's pass gives its dense vector by CLS"):
        entry(folder, "dense", params={"model_class": "encoder-only-m3", "pooling_method": "mean"})
    with pytest.raises(ModelConfigError, match=r"params\.model_class: output 'sparse' is BGE-M3's pass"):
        entry(folder, "sparse", params={"model_class": "encoder-only-m3"})


@pytest.mark.parametrize(("first", "then"), [("multi-vector", "dense"), ("dense", "sparse"), ("sparse", "dense")])
def test_one_pass_caches_all_three_outputs(folder: Path, tmp_path: Path, first: str, then: str) -> None:
    def of(output: str) -> ModelSpec:
        return entry(folder, output, **(M3_DENSE if output == "dense" else {}))

    cache = tmp_path / "embedding-cache.sqlite"
    with EncodingService(of(first), cache) as service:
        assert service.encode(DOCUMENTS, "document").from_cache == 0
    with EncodingService(of(then), cache) as service:
        cached = service.encode(DOCUMENTS, "document")
        assert service._encoder is None  # no model loaded: the first entry's pass was cached for this output
    assert cached.from_cache == len(DOCUMENTS)
    uncached = EncodingService(of(then)).encode(DOCUMENTS, "document")
    if then == "dense":
        assert cached.vectors.tobytes() == uncached.vectors.tobytes()
        assert cached.input_tokens == uncached.input_tokens
    else:
        assert [r.terms.tobytes() for r in cached.rows] == [r.terms.tobytes() for r in uncached.rows]
