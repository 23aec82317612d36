"""Pure parts of the remote scorers: P(yes) from top logprobs, and the /rerank request/response shapes."""

from __future__ import annotations

import math

import pytest
from openai.types.chat import ChatCompletion

from posir.scorers.llm import answer_word, first_token_logprobs, yes_probability
from posir.scorers.rerank_api import ProtocolViolation, parse_scores, request_body

ln = math.log


def test_yes_probability_normalises_yes_against_no():
    assert yes_probability([("yes", ln(0.6)), ("no", ln(0.2)), ("maybe", ln(0.1))]) == pytest.approx(0.75)


def test_spellings_of_one_word_add_up():
    top = [("Yes", ln(0.3)), (" yes", ln(0.3)), ("\u0120No", ln(0.2)), ("The", ln(0.1))]
    assert yes_probability(top) == pytest.approx(0.6 / 0.8)


def test_a_missing_word_is_bounded_by_what_the_listing_allows():
    # "no" is not among the top three: P(no) <= min(smallest listed 0.01, unlisted mass 1 - 0.96 = 0.04) = 0.01
    assert yes_probability([("yes", ln(0.9)), ("Yes", ln(0.05)), ("ok", ln(0.01))]) == pytest.approx(0.95 / 0.96)
    # and the other way round: P(yes) <= unlisted mass 0.02 (smaller than the smallest listed, 0.08)
    assert yes_probability([("no", ln(0.9)), ("No", ln(0.08))]) == pytest.approx(0.02 / 1.0)


def test_no_yes_and_no_no_means_no_score():
    assert yes_probability([("The", ln(0.5)), ("I", ln(0.2))]) is None
    assert yes_probability([]) is None


def test_answer_words():
    assert [answer_word(t) for t in ("Yes", " no", "\u2581YES", "\u0120no\n", "nope")] == [
        "yes",
        "no",
        "yes",
        "no",
        "nope",
    ]


def completion(logprobs: dict | None) -> ChatCompletion:
    choice = {
        "index": 0,
        "finish_reason": "length",
        "message": {"role": "assistant", "content": "Yes"},
        "logprobs": logprobs,
    }
    return ChatCompletion.model_validate(
        {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
    )


def test_first_token_logprobs_from_a_chat_completion():
    # the shape llama.cpp's server returns (with its extra id/bytes fields)
    top = [
        {"id": 1, "token": "Yes", "bytes": [89, 101, 115], "logprob": -0.1},
        {"id": 2, "token": "No", "bytes": [78, 111], "logprob": -2.5},
    ]
    response = completion({"content": [{"id": 1, "token": "Yes", "bytes": [89], "logprob": -0.1, "top_logprobs": top}]})
    assert first_token_logprobs(response) == [("Yes", -0.1), ("No", -2.5)]


def test_a_completion_without_logprobs_has_none():
    assert first_token_logprobs(completion(None)) is None
    assert first_token_logprobs(completion({"content": []})) is None


def test_request_bodies():
    assert request_body("cohere", "rerank-v3.5", "q", ["a", "b"]) == {
        "model": "rerank-v3.5",
        "query": "q",
        "documents": ["a", "b"],
        "top_n": 2,
    }
    assert request_body("jina", "jina-reranker-v2", "q", ["a"]) == {
        "model": "jina-reranker-v2",
        "query": "q",
        "documents": ["a"],
        "top_n": 1,
        "return_documents": False,
    }
    assert request_body("tei", None, "q", ["a", "b"], raw_scores=True) == {
        "query": "q",
        "texts": ["a", "b"],
        "raw_scores": True,
        "truncate": True,
        "return_text": False,
    }


def test_responses_are_put_back_in_input_order():
    cohere = {
        "id": "r",
        "results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}],
        "meta": {},
    }
    assert parse_scores("cohere", cohere, 2) == [0.1, 0.9]
    assert parse_scores("jina", {"model": "m", "usage": {"total_tokens": 5}, "results": cohere["results"]}, 2) == [
        0.1,
        0.9,
    ]
    assert parse_scores("tei", [{"index": 1, "score": -2.0}, {"index": 0, "score": 3}], 2) == [3.0, -2.0]


@pytest.mark.parametrize(
    "protocol, payload, message",
    [
        ("cohere", [{"index": 0, "score": 1.0}], "'results' list"),
        ("tei", {"results": []}, "JSON list"),
        ("cohere", {"results": [{"index": 0, "relevance_score": 1.0}]}, "1 results for 2 documents"),
        ("tei", [{"index": 0, "score": 1.0}, {"index": 0, "score": 2.0}], "repeated"),
        ("tei", [{"index": 0, "score": 1.0}, {"index": 2, "score": 2.0}], "out of range"),
        ("tei", [{"index": 0, "score": 1.0}, {"index": 1, "score": "high"}], "no finite 'score'"),
        (
            "jina",
            {"results": [{"index": 0, "relevance_score": 1.0}, {"index": 1, "relevance_score": float("nan")}]},
            "no finite",
        ),
    ],
)
def test_protocol_violations(protocol, payload, message):
    with pytest.raises(ProtocolViolation, match=message):
        parse_scores(protocol, payload, 2)
