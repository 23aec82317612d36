"""The config schema stops a wrong key or type with a message naming it."""

import copy

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from posir.config import (validated, ConfigError, MetricParams, Setting, check_references, config_lookup, evaluations,
                          evaluations_by_benchmark)
from tests.conftest import REPO

SCHEMA = str(REPO / "schemas" / "config.schema.yaml")


@pytest.fixture()
def config():
    return validated(yaml.safe_load((REPO / "config.yaml").read_text()))


def test_default_config_is_valid(config):
    validate(config, SCHEMA)
    check_references(config)
    settings = {str(e.setting) for e in evaluations(config)}
    assert {"eng-eng", "deu-eng", "deu-deu", "deu-mul", "spa-spa", "ita-ita"} <= settings


def test_unknown_key_is_named(config):
    bad = copy.deepcopy(config)
    bad["models"]["bm25"]["k_1"] = 1.2
    with pytest.raises(WorkflowError, match="k_1"):
        validate(bad, SCHEMA)


def test_wrong_type_is_named(config):
    bad = copy.deepcopy(config)
    bad["metrics"]["position_bins"] = "twenty"
    with pytest.raises(WorkflowError, match="twenty"):
        validate(bad, SCHEMA)


def test_reference_to_an_undefined_model_names_it(config):
    bad = copy.deepcopy(config)
    bad["evaluation"][0]["models"].append("no-such-model")
    with pytest.raises(ConfigError, match="no-such-model"):
        check_references(bad)


def test_settings_are_iso_639_3_pairs():
    assert str(Setting.parse("deu-eng")) == "deu-eng"
    with pytest.raises(ConfigError):
        Setting.parse("de-en")


def test_metric_params_defaults():
    params = MetricParams.from_config({})
    assert params.n_bins == 20 and params.bucket_names == ["Q1", "Q2", "Q3", "Q4"]


def test_settings_must_name_languages_the_benchmark_has(config):
    bad = copy.deepcopy(config)
    bad["evaluation"] = [{"benchmark": "xquad-long", "models": ["bm25"], "settings": ["fra-eng"]}]
    with pytest.raises(ConfigError, match="no 'fra' queries"):
        check_references(bad)
    bad["evaluation"] = [{"benchmark": "xquad-long", "models": ["bm25"], "settings": ["deu-deu"]}]
    with pytest.raises(ConfigError, match="no 'deu' corpus"):
        check_references(bad)


def test_one_vs_many_needs_parallel_documents(config):
    bad = copy.deepcopy(config)
    bad["evaluation"] = [{"benchmark": "squad-long", "models": ["bm25"], "settings": ["eng-mul"]}]
    with pytest.raises(ConfigError, match="parallel documents"):
        check_references(bad)


def test_variants_and_corpora_resolve(config):
    from posir.config import corpus_variants, query_variant

    assert query_variant(config, "squad-long", "eng") == "squad-long"
    assert query_variant(config, "xquad-long", "deu") == "xquad-long-deu"
    assert corpus_variants(config, "xquad-long", "eng") == ["squad-long"]  # embedded once, shared by X->eng
    assert corpus_variants(config, "xquad-parallel", "mul") == [f"xquad-parallel-{lang}" for lang in
                                                                config["benchmarks"]["xquad-parallel"]["languages"]]


def test_a_multilingual_benchmark_needs_a_source_per_language(config):
    bad = copy.deepcopy(config)
    del bad["benchmarks"]["xquad-parallel"]["sources"]["deu"]
    with pytest.raises(ConfigError, match="deu"):
        check_references(bad)


class CountingDict(dict):
    """A config section that counts how often it is read or walked."""

    reads = 0

    def __getitem__(self, key):
        CountingDict.reads += 1
        return super().__getitem__(key)

    def __iter__(self):
        raise AssertionError("config_lookup must not walk the config")

    def items(self):
        raise AssertionError("config_lookup must not walk the config")


def test_config_lookup_reads_one_key_per_path_segment():
    """Snakemake's lookup(dpath=...) walks the whole config per job: quadratic in benchmarks at PosIR's size."""
    entry = {"mem_mb": 3000}
    config = CountingDict(models=CountingDict({f"m{i}": {"mem_mb": i} for i in range(1000)} | {"minilm": entry}))
    CountingDict.reads = 0
    assert config_lookup(config, "models/{model}/mem_mb")({"model": "minilm"}) == 3000
    assert config_lookup(config, "models/{model}")({"model": "minilm"}) is entry
    assert CountingDict.reads == 4
    with pytest.raises(KeyError):
        config_lookup(config, "models/{model}")({"model": "nope"})


def test_rules_read_the_config_by_key():
    """No rule uses lookup(dpath=..., within=config): rules/common.smk's config_value reads one key per segment."""
    offenders = [path.name for path in (REPO / "rules").glob("*.smk") if "lookup(dpath" in path.read_text()]
    assert offenders == []


def test_evaluations_by_benchmark_keeps_config_order(config):
    listed = list(evaluations(config))
    grouped = evaluations_by_benchmark(listed)
    assert list(grouped) == list(dict.fromkeys(e.benchmark for e in listed))
    for benchmark, group in grouped.items():
        assert group == [e for e in listed if e.benchmark == benchmark]
