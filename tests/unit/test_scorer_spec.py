"""``scorers:`` entries: per-backend keys, types and values, with errors naming scorers.<name>.<key>."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from posir.scorers import FACTORIES, ScorerError, ScorerSpec, load_scorer, register_backend, specs_from_config
from posir.scorers.spec import ALLOWED_KEYS

REPO = Path(__file__).resolve().parents[2]


def test_the_shipped_generation_scorers_parse():
    config = yaml.safe_load((REPO / "configs" / "generation_local.yaml").read_text(encoding="utf-8"))
    specs = specs_from_config(list(config["scorers"]), config["scorers"])
    assert [(s.name, s.backend) for s in specs] == [("minilm-maxp", "bi-encoder"), ("llm-grader", "llm-grade")]
    assert specs[0].window(256) == (200, 100)


def test_defaults_of_a_local_reranker():
    spec = ScorerSpec.from_config("ce", {"backend": "cross-encoder", "model": "some/reranker"})
    assert (spec.long_input, spec.aggregation, spec.device, spec.batch_size) == ("windows", "maxp", "cpu", 32)
    assert spec.window(512) == (448, 224)  # room for the query, half-window stride


@pytest.mark.parametrize("backend, entry, message", [
    ("nope", {}, r"scorers\.x\.backend 'nope' is not one of bi-encoder, cross-encoder"),
    ("bi-encoder", {}, r"scorers\.x\.model: missing; name a dense entry of models:"),
    ("bi-encoder", {"model": "m", "model_package": "p"}, r"scorers\.x\.model_package is not a setting of backend bi"),
    ("bi-encoder", {"model": "m", "aggregation": "avgp"}, r"scorers\.x\.aggregation: 'avgp'"),
    ("cross-encoder", {"model": "m", "protocol": "tei"}, r"scorers\.x\.protocol is not a setting of backend cross"),
    ("llm-grade", {"model": "m"}, r"scorers\.x\.model is not a setting of backend llm-grade"),
    ("cross-encoder", {}, r"scorers\.x: set 'model'"),
    ("cross-encoder", {"model": "m", "batch_size": "8"}, r"scorers\.x\.batch_size has the wrong type \(str"),
    ("cross-encoder", {"model": "m", "batch_size": True}, r"scorers\.x\.batch_size has the wrong type \(bool"),
    ("cross-encoder", {"model": "m", "aggregation": "avgp"}, r"scorers\.x\.aggregation: 'avgp'"),
    ("cross-encoder", {"model": "m", "device": "gpu"}, r"scorers\.x\.device: 'gpu'"),
    ("cross-encoder", {"model": "m", "window_tokens": 100, "stride_tokens": 101}, r"scorers\.x\.stride_tokens"),
    ("cross-encoder", {"model": "m", "max_length": 128, "window_tokens": 128}, r"scorers\.x\.window_tokens"),
    ("cross-encoder", {"model": "m", "long_input": "truncate", "aggregation": "sump"},
     r"scorers\.x\.aggregation: long_input: truncate"),
    ("flag-reranker", {"model": "m", "model_class": "gemma"}, r"scorers\.x\.model_class: 'gemma'"),
    ("flag-reranker", {"model": "m", "instruction": "Is it?"}, r"scorers\.x\.instruction: only FlagLLMReranker"),
    ("flag-reranker", {"model": "m", "dtype": "float16"}, r"scorers\.x\.dtype: FlagEmbedding runs float16"),
    ("flag-reranker", {"model": "m", "dtype": "bfloat16", "device": "cuda"}, r"scorers\.x\.dtype: FlagReranker has"),
    ("llm-grade", {"scoring": "probability"}, r"scorers\.x\.scoring: 'probability'"),
    ("llm-grade", {"top_logprobs": 21}, r"scorers\.x\.top_logprobs: 21"),
    ("rerank-api", {"base_url": "http://h", "model": "m"}, r"scorers\.x\.protocol: 'None'"),
    ("rerank-api", {"protocol": "cohere", "base_url": "h:1", "model": "m"}, r"scorers\.x\.base_url: 'h:1'"),
    ("rerank-api", {"protocol": "jina", "base_url": "http://h"}, r"scorers\.x\.model: missing"),
    ("rerank-api", {"protocol": "tei", "base_url": "http://h", "api_key_env": "sk-123-abc"},
     r"scorers\.x\.api_key_env: must be the NAME"),
    ("rerank-api", {"protocol": "cohere", "base_url": "http://h", "model": "m", "raw_scores": True},
     r"scorers\.x\.raw_scores"),
])
def test_entry_errors_name_the_key(backend, entry, message):
    with pytest.raises(ScorerError, match=message):
        ScorerSpec.from_config("x", {"backend": backend, **entry})


@pytest.mark.parametrize("key", ["api_key", "token", "secret"])
def test_a_secret_in_the_config_is_refused_without_echoing_it(key):
    with pytest.raises(ScorerError, match=rf"scorers\.x\.{key} is not allowed.*api_key_env") as error:
        ScorerSpec.from_config("x", {"backend": "rerank-api", "protocol": "tei", "base_url": "http://h",
                                     key: "sk-live-123"})
    assert "sk-live-123" not in str(error.value)


def test_rerank_api_entry_for_each_protocol():
    tei = ScorerSpec.from_config("t", {"backend": "rerank-api", "protocol": "tei", "base_url": "http://127.0.0.1:8080",
                                       "raw_scores": True, "timeout": 5})
    assert (tei.model, tei.raw_scores, tei.timeout) == (None, True, 5.0)
    cohere = ScorerSpec.from_config("c", {"backend": "rerank-api", "protocol": "cohere", "model": "rerank-v3.5",
                                          "base_url": "https://api.cohere.com", "api_key_env": "COHERE_API_KEY"})
    assert cohere.api_key_env == "COHERE_API_KEY"


def test_unknown_scorer_names_are_listed():
    with pytest.raises(ScorerError, match=r"\['missing'\] are not defined under 'scorers'.*\['a'\]"):
        specs_from_config(["missing"], {"a": {"backend": "llm-grade"}})


def test_llm_grade_needs_the_client():
    with pytest.raises(ScorerError, match="needs the LLM: configure the 'llm' section"):
        load_scorer(ScorerSpec.from_config("judge", {"backend": "llm-grade"}))


def test_a_backend_can_be_replaced_through_the_registry():
    class Constant:
        name = "c"

        def identity(self):
            return {"backend": "constant"}

        def score(self, queries, documents):
            return [1.0] * len(queries)

    original = (FACTORIES["bi-encoder"], ALLOWED_KEYS["bi-encoder"])
    try:
        register_backend("bi-encoder", lambda spec, context: Constant(), keys=["model", "batch_size"])
        spec = ScorerSpec.from_config("b", {"backend": "bi-encoder", "model": "minilm-l6"})
        assert load_scorer(spec).score(["q"], ["d"]) == [1.0]
        with pytest.raises(ScorerError, match=r"scorers\.b\.window_tokens is not a setting"):
            ScorerSpec.from_config("b", {"backend": "bi-encoder", "model": "m", "window_tokens": 64})
        with pytest.raises(ScorerError, match="not ScorerSpec fields"):
            register_backend("bi-encoder", original[0], keys=["model_ref"])
    finally:
        FACTORIES["bi-encoder"], ALLOWED_KEYS["bi-encoder"] = original
