"""The config stops a wrong key or type with a message naming it: the generated JSON schema (Snakemake's
``validate``) and the declarations (``load_config``) alike."""

import copy

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from posir.config import ConfigError, MetricParams, Setting, load_config
from posir.plan import Wildcards
from posir.plan.retrieval import RetrievalPlan
from posir.results.paths import ResultPaths
from tests.conftest import REPO

SCHEMA = str(REPO / "schemas" / "config.schema.yaml")


@pytest.fixture()
def config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_default_config_is_valid(config):
    validate(copy.deepcopy(config), SCHEMA, set_default=False)
    typed = load_config(config)  # cross references are checked inside
    settings = {str(e.setting) for e in typed.evaluations}
    assert {"eng-eng", "deu-eng", "deu-deu", "deu-mul", "spa-spa", "ita-ita"} <= settings


@pytest.mark.parametrize(
    "section,key,value,schema_names,named",
    [
        ("models", "bm25", {"k_1": 1.2}, "k_1", r"config: models\.bm25\.k_1: unknown key 'k_1'"),  # unknown key
        ("metrics", "position_bins", "twenty", "twenty", r"config: metrics\.position_bins: 'twenty'"),  # wrong type
    ],
)
def test_a_bad_key_or_value_is_named_by_the_schema_and_the_loader(config, section, key, value, schema_names, named):
    bad = copy.deepcopy(config)
    if isinstance(value, dict):
        bad[section][key].update(value)
    else:
        bad[section][key] = value
    with pytest.raises(WorkflowError, match=schema_names):
        validate(copy.deepcopy(bad), SCHEMA, set_default=False)
    with pytest.raises(ConfigError, match=named):
        load_config(bad)


def test_reference_to_an_undefined_model_names_it(config):
    bad = copy.deepcopy(config)
    bad["evaluation"][0]["models"].append("no-such-model")
    with pytest.raises(ConfigError, match=r"config: evaluation\[0\]\.models: 'no-such-model'"):
        load_config(bad)


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
    with pytest.raises(ConfigError, match=r"evaluation\[0\]\.settings: .*no 'fra' queries"):
        load_config(bad)
    bad["evaluation"] = [{"benchmark": "xquad-long", "models": ["bm25"], "settings": ["deu-deu"]}]
    with pytest.raises(ConfigError, match=r"evaluation\[0\]\.settings: .*no 'deu' corpus"):
        load_config(bad)


def test_one_vs_many_needs_parallel_documents(config):
    bad = copy.deepcopy(config)
    bad["evaluation"] = [{"benchmark": "squad-long", "models": ["bm25"], "settings": ["eng-mul"]}]
    with pytest.raises(ConfigError, match=r"evaluation\[0\]\.settings: .*parallel documents"):
        load_config(bad)


def test_variants_and_corpora_resolve(config):
    typed = load_config(config)
    assert typed.query_variant("squad-long", "eng") == "squad-long"
    assert typed.query_variant("xquad-long", "deu") == "xquad-long-deu"
    assert typed.corpus_variants("xquad-long", "eng") == ["squad-long"]  # embedded once, shared by X->eng
    assert typed.corpus_variants("xquad-parallel", "mul") == [
        f"xquad-parallel-{lang}" for lang in config["benchmarks"]["xquad-parallel"]["languages"]
    ]


def test_a_multilingual_benchmark_needs_a_source_per_language(config):
    bad = copy.deepcopy(config)
    del bad["benchmarks"]["xquad-parallel"]["sources"]["deu"]
    with pytest.raises(ConfigError, match=r"config: benchmarks\.xquad-parallel\.sources: .*deu"):
        load_config(bad)


class CountingDict(dict):
    """A config section that counts how often it is read or walked."""

    reads = 0

    def __getitem__(self, key):
        CountingDict.reads += 1
        return super().__getitem__(key)

    def __iter__(self):
        raise AssertionError("a per-job lookup must not walk the config")

    def items(self):
        raise AssertionError("a per-job lookup must not walk the config")

    def values(self):
        raise AssertionError("a per-job lookup must not walk the config")


def test_a_per_job_lookup_reads_one_key(config):
    """Snakemake's lookup(dpath=...) walked the whole config per job: quadratic in benchmarks at PosIR's size.
    Rules now ask the plan, whose per-job lookups (a job's resources) read one key of the typed config."""
    typed = load_config(config)
    minilm = typed.models["minilm-l6"]
    models = CountingDict(
        {f"m{i}": minilm.model_copy(update={"name": f"m{i}", "mem_mb": i}) for i in range(1000)}
        | {"minilm": minilm.model_copy(update={"name": "minilm", "mem_mb": 3000})}
    )
    plan = RetrievalPlan(typed.model_copy(update={"models": models}), ResultPaths("results"), REPO / "prompts")
    CountingDict.reads = 0
    assert plan.model_mem_mb(Wildcards(model="minilm")) == 3000
    assert CountingDict.reads == 1
    with pytest.raises(KeyError):
        plan.model_mem_mb(Wildcards(model="nope"))


def test_rules_read_the_config_by_key():
    """No rule uses lookup(dpath=..., within=config): rules ask the plan (PLAN), which reads one key per lookup."""
    offenders = [path.name for path in (REPO / "rules").glob("*.smk") if "lookup(dpath" in path.read_text()]
    assert offenders == []


def test_evaluations_by_benchmark_keeps_config_order(config):
    typed = load_config(config)
    listed = list(typed.evaluations)
    grouped = typed.evaluations_by_benchmark
    assert list(grouped) == list(dict.fromkeys(e.benchmark for e in listed))
    for benchmark, group in grouped.items():
        assert group == [e for e in listed if e.benchmark == benchmark]


def test_an_overlay_removes_one_entry_with_null(config):
    """Snakemake merges every --configfile into one overlay before config.yaml, so an overlay that clears a block
    and one that refills it give config.yaml's block plus the refill; ``<name>: null`` removes one entry instead."""
    from snakemake.utils import update_config

    overlay = {"translation_comparisons": {"xquad-spa": None}, "models": {"use-m3": None}}
    merged = copy.deepcopy(config)
    update_config(merged, overlay)
    merged["evaluation"] = [e for e in merged["evaluation"] if "use-m3" not in e["models"]]
    for section in ("analyses", "paper_tables"):
        merged[section] = None if section == "paper_tables" else {"representation": {"runs": None}}
    validate(copy.deepcopy(merged), SCHEMA, set_default=False)  # Snakemake's check accepts the nulls
    typed = load_config(merged)
    assert "xquad-spa" not in typed.translation_comparisons and "use-m3" not in typed.models
    assert "bm25" in typed.models
