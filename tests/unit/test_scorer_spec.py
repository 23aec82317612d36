"""``scorers:`` entries: per-backend keys, types and values, with errors naming scorers.<name>.<key>."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from posir.schema import ConfigError
from posir.scorers import FACTORIES, ScorerError, ScorerSpec, load_scorer, register_backend, specs_from_config
from posir.scorers.spec import ALLOWED_KEYS, BiEncoderSpec, CrossEncoderSpec, ScorerConfigError
from posir.windows import default_window

REPO = Path(__file__).resolve().parents[2]


def test_the_shipped_generation_scorers_parse():
    config = yaml.safe_load((REPO / "configs" / "generation_local.yaml").read_text(encoding="utf-8"))
    specs = specs_from_config(list(config["scorers"]), config["scorers"])
    assert [(s.name, s.backend) for s in specs] == [("minilm-maxp", "bi-encoder"), ("llm-grader", "llm-grade")]
    assert isinstance(specs[0], BiEncoderSpec)
    # the configured window, within MiniLM's 256-token budget (posir.windows.default_window: the one rule)
    assert default_window(254, specs[0].window_tokens, specs[0].stride_tokens) == (200, 100)


def test_defaults_of_a_local_reranker():
    spec = ScorerSpec.from_config("ce", {"backend": "cross-encoder", "model": "some/reranker"})
    assert isinstance(spec, CrossEncoderSpec) and spec.name == "ce"
    assert (spec.long_input, spec.aggregation, spec.device, spec.batch_size) == ("windows", "maxp", "cpu", 32)
    assert spec.window(512) == (448, 224)  # room for the query, half-window stride


@pytest.mark.parametrize(
    "backend, entry, message",
    [
        ("nope", {}, r"scorers\.x\.backend: 'nope' is not allowed; allowed values: bi-encoder, cross-encoder"),
        ("bi-encoder", {}, r"scorers\.x\.model: missing; name a dense entry of models:"),
        (
            "bi-encoder",
            {"model": "m", "model_package": "p"},
            r"scorers\.x\.model_package: unknown key 'model_package'; "
            r"allowed keys: aggregation, backend, mem_mb, model,",
        ),
        (
            "bi-encoder",
            {"model": "m", "aggregation": "avgp"},
            r"scorers\.x\.aggregation: avgp is not allowed; allowed "
            r"values: firstp, maxp, sump or mean",
        ),
        ("bi-encoder", {"model": "m", "stride_tokens": 50}, r"scorers\.x\.stride_tokens: is set without window_tokens"),
        ("cross-encoder", {"model": "m", "protocol": "tei"}, r"scorers\.x\.protocol: unknown key 'protocol'"),
        (
            "cross-encoder",
            {"model": "m", "stride_tokens": 50},
            r"scorers\.x\.stride_tokens: is set without window_tokens",
        ),
        ("llm-grade", {"model": "m"}, r"scorers\.x\.model: unknown key 'model'"),
        ("cross-encoder", {}, r"scorers\.x\.model: missing; set 'model'"),
        (
            "cross-encoder",
            {"model": "m", "batch_size": "8"},
            r"scorers\.x\.batch_size: '8' is a str; expected an integer",
        ),
        (
            "cross-encoder",
            {"model": "m", "batch_size": True},
            r"scorers\.x\.batch_size: True is a bool; expected an "
            r"integer",
        ),
        ("cross-encoder", {"model": "m", "aggregation": "avgp"}, r"scorers\.x\.aggregation: avgp is not allowed"),
        ("cross-encoder", {"model": "m", "device": "gpu"}, r"scorers\.x\.device: 'gpu'"),
        ("cross-encoder", {"model": "m", "window_tokens": 100, "stride_tokens": 101}, r"scorers\.x\.stride_tokens"),
        ("cross-encoder", {"model": "m", "max_length": 128, "window_tokens": 128}, r"scorers\.x\.window_tokens"),
        (
            "cross-encoder",
            {"model": "m", "long_input": "truncate", "aggregation": "sump"},
            r"scorers\.x\.aggregation: long_input: truncate",
        ),
        ("flag-reranker", {"model": "m", "model_class": "gemma"}, r"scorers\.x\.model_class: gemma is not allowed"),
        ("flag-reranker", {"model": "m", "instruction": "Is it?"}, r"scorers\.x\.instruction: only FlagLLMReranker"),
        ("flag-reranker", {"model": "m", "dtype": "float16"}, r"scorers\.x\.dtype: FlagEmbedding runs float16"),
        (
            "flag-reranker",
            {"model": "m", "dtype": "bfloat16", "device": "cuda"},
            r"scorers\.x\.dtype: FlagReranker has",
        ),
        ("llm-grade", {"scoring": "probability"}, r"scorers\.x\.scoring: probability is not allowed"),
        ("llm-grade", {"top_logprobs": 21}, r"scorers\.x\.top_logprobs: 21"),
        ("rerank-api", {"base_url": "http://h", "model": "m"}, r"scorers\.x\.protocol: missing"),
        ("rerank-api", {"protocol": "cohere", "base_url": "h:1", "model": "m"}, r"scorers\.x\.base_url: 'h:1'"),
        ("rerank-api", {"protocol": "jina", "base_url": "http://h"}, r"scorers\.x\.model: missing"),
        (
            "rerank-api",
            {"protocol": "tei", "base_url": "http://h", "api_key_env": "sk-123-abc"},
            r"scorers\.x\.api_key_env: must be the NAME",
        ),
        (
            "rerank-api",
            {"protocol": "cohere", "base_url": "http://h", "model": "m", "raw_scores": True},
            r"scorers\.x\.raw_scores",
        ),
    ],
)
def test_entry_errors_name_the_key(backend, entry, message):
    with pytest.raises(ScorerError, match="^config: " + message) as error:
        ScorerSpec.from_config("x", {"backend": backend, **entry})
    assert isinstance(error.value, ScorerConfigError) and isinstance(error.value, ConfigError)


@pytest.mark.parametrize("key", ["api_key", "token", "secret"])
def test_a_secret_in_the_config_is_refused_without_echoing_it(key):
    with pytest.raises(ScorerError, match=rf"^config: scorers\.x\.{key}: '{key}' is not allowed.*api_key_env") as error:
        ScorerSpec.from_config(
            "x", {"backend": "rerank-api", "protocol": "tei", "base_url": "http://h", key: "sk-live-123"}
        )
    assert "sk-live-123" not in str(error.value)


def test_rerank_api_entry_for_each_protocol():
    tei = ScorerSpec.from_config(
        "t",
        {
            "backend": "rerank-api",
            "protocol": "tei",
            "base_url": "http://127.0.0.1:8080",
            "raw_scores": True,
            "timeout": 5,
        },
    )
    assert (tei.model, tei.raw_scores, tei.timeout) == (None, True, 5.0)
    cohere = ScorerSpec.from_config(
        "c",
        {
            "backend": "rerank-api",
            "protocol": "cohere",
            "model": "rerank-v3.5",
            "base_url": "https://api.cohere.com",
            "api_key_env": "COHERE_API_KEY",
        },
    )
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

    original = FACTORIES["bi-encoder"]
    allowed = ALLOWED_KEYS["bi-encoder"]
    try:
        register_backend("bi-encoder", lambda spec, context: Constant())
        spec = ScorerSpec.from_config("b", {"backend": "bi-encoder", "model": "minilm-l6"})
        assert load_scorer(spec).score(["q"], ["d"]) == [1.0]
        # the keys stay the declaration's: replacing the factory changes what builds the scorer, not the entry
        assert (
            ALLOWED_KEYS["bi-encoder"]
            == allowed
            == {"model", "window_tokens", "stride_tokens", "aggregation", "mem_mb"}
        )
        with pytest.raises(ScorerError, match=r"^config: scorers\.b\.batch_size: unknown key 'batch_size'"):
            ScorerSpec.from_config("b", {"backend": "bi-encoder", "model": "m", "batch_size": 64})
        with pytest.raises(ScorerError, match="has no declaration in posir.scorers.spec"):
            register_backend("constant", lambda spec, context: Constant())  # a new backend needs a declaration
        assert "constant" not in FACTORIES
    finally:
        FACTORIES["bi-encoder"] = original
