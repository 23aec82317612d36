"""Translation entries in config.yaml: variants, settings, and errors that name the key to fix."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml

from posir.config import ConfigError, check_references, corpus_variants, evaluations, query_variant
from posir.translate.spec import (
    TranslationConfigError,
    benchmark_separator,
    check_translation_config,
    comparison_rows,
    translation_variants,
)
from posir.config import validated
from tests.conftest import REPO

RAW = yaml.safe_load((REPO / "config.yaml").read_text())
CONFIG = validated(RAW)  # as Snakemake's validate leaves it: the schema's defaults filled in
SCHEMA = yaml.safe_load((REPO / "schemas" / "config.schema.yaml").read_text())


def config(**benchmarks) -> dict:
    """The shipped config with extra benchmark entries, defaults filled but not checked: the checks under test do."""
    c = copy.deepcopy(RAW)
    c["benchmarks"].update(benchmarks)
    return validated(c, check=False)


def test_the_shipped_config_is_valid() -> None:
    jsonschema.validate(RAW, SCHEMA)
    check_references(CONFIG)
    check_translation_config(CONFIG)
    assert ("squad-long-apertium", "spa") in translation_variants(CONFIG)


def test_settings_map_to_the_source_and_the_translated_variants() -> None:
    assert query_variant(CONFIG, "squad-long-apertium", "spa") == "squad-long-apertium-spa"
    assert query_variant(CONFIG, "squad-long-apertium", "eng") == "squad-long"
    assert corpus_variants(CONFIG, "squad-long-apertium", "eng") == ["squad-long"]
    assert corpus_variants(CONFIG, "squad-long-apertium", "spa") == ["squad-long-apertium-spa"]
    assert corpus_variants(CONFIG, "squad-long-apertium", "mul") == ["squad-long", "squad-long-apertium-spa"]
    # from a multilingual benchmark: its English variant is the source
    assert query_variant(CONFIG, "xquad-parallel-apertium", "eng") == "xquad-parallel-eng"
    assert corpus_variants(CONFIG, "xquad-parallel-human", "spa") == ["xquad-parallel-human-spa"]
    with pytest.raises(ConfigError, match="has no 'deu' queries"):
        query_variant(CONFIG, "squad-long-apertium", "deu")
    settings = {(e.benchmark, str(e.setting)) for e in evaluations(CONFIG)}
    assert {("squad-long-apertium", "spa-spa"), ("squad-long-apertium", "spa-eng")} <= settings
    assert benchmark_separator(CONFIG, "xquad-parallel-apertium") == "\n\n"


def test_comparison_rows_cover_translations_models_and_settings() -> None:
    rows = comparison_rows(CONFIG, "xquad-spa")
    assert len(rows) == 2 * 3 * 2
    assert {r["label"] for r in rows} == {"human (XQuAD es)", "apertium eng-spa"}


@pytest.mark.parametrize("entry,message", [
    ({"builder": "translation", "from": "squad-long", "translations": {"spa": {"backend": "apertium"}}},
     r"translations\.spa\.pair: apertium needs its language pair"),
    ({"builder": "translation", "from": "squad-long", "translations": {"spa": {"backend": "parallel"}}},
     r"translations\.spa: the parallel backend needs source_file and target_file"),
    ({"builder": "translation", "from": "squad-long",
      "translations": {"spa": {"backend": "parallel", "source_file": "xquad_eng", "target_file": "nope"}}},
     r"translations\.spa\.target_file: 'nope' is not defined under 'sources'"),
    ({"builder": "translation", "from": "squad-long", "translations": {"spa": {"backend": "llm"}}},
     r"translations\.spa \(backend: llm\) needs the llm section"),
    ({"builder": "translation", "from": "squad-long", "translations": {"spa": {"backend": "apertium", "pair": "eng-spa",
                                                                                "prompt": "x"}}},
     r"key\(s\) \['prompt'\] do not apply to backend 'apertium'"),
    ({"builder": "translation", "from": "xquad-long", "translations": {"deu": {"backend": "apertium", "pair": "eng-deu"}}},
     r"from: 'xquad-long' has no documents of its own"),
    ({"builder": "translation", "from": "squad-es-long", "translations": {"deu": {"backend": "apertium", "pair": "spa-deu"}}},
     r"from_language: 'squad-es-long' has no 'eng' variant"),
    ({"builder": "translation", "from": "squad-long", "translations": {"spa": {"backend": "apertium", "pair": "eng-spa"}},
      "filters": {"outliers": {"statistic": "chars"}}},
     r"benchmarks\.bad\.filters\.outliers\.statistic"),
])
def test_bad_translation_entries_name_the_key(entry, message) -> None:
    with pytest.raises(TranslationConfigError, match=message):
        check_translation_config(config(bad=entry))


def test_variant_names_may_not_collide_and_from_must_exist() -> None:
    clash = config(**{"squad": {"builder": "translation", "from": "squad-long",
                                "translations": {"long": {"backend": "apertium", "pair": "eng-spa"}}}})
    with pytest.raises(TranslationConfigError, match="'squad-long' collides"):
        check_translation_config(clash)
    with pytest.raises(ConfigError, match="from: 'nothing' must name another benchmark"):
        check_references(config(bad={"builder": "translation", "from": "nothing",
                                     "translations": {"spa": {"backend": "apertium", "pair": "eng-spa"}}}))


def test_schema_requires_from_and_translations_but_no_sources() -> None:
    bad = config(bad={"builder": "translation", "from": "squad-long"})
    with pytest.raises(jsonschema.ValidationError, match="translations"):
        jsonschema.validate(bad, SCHEMA)
    with pytest.raises(jsonschema.ValidationError, match="sources"):
        jsonschema.validate(config(bad={"builder": "squad_long_documents"}), SCHEMA)


def test_judge_and_comparison_rules_are_planned(tmp_path, mirror) -> None:
    """A judge block (with an llm section) adds the judge rules; the comparison table needs both translations."""
    from tests._snakemake import planned_jobs, snakemake

    c = copy.deepcopy(CONFIG)
    c["llm"] = {"base_url": "http://127.0.0.1:9/v1", "model": "smollm2", "api_key_env": None}
    c["benchmarks"]["xquad-parallel-apertium"]["judge"] = {"sample": 4}
    for key in ("published", "paper_tables"):
        c.pop(key)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(c))
    dry = snakemake(tmp_path, "-n", "--cores", "2", "results/tables/xquad-parallel-apertium/translation_judge.md",
                    "results/tables/xquad-spa/translation_comparison.md", mirror=mirror)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned_jobs(dry.stdout)
    assert ("judge_translation", {"benchmark": "xquad-parallel-apertium", "language": "spa"}) in jobs
    rules = {rule for rule, _ in jobs}
    assert {"translation_judge_table", "translation_comparison", "translate_benchmark", "build_parallel_variant"} <= rules
    translated = {w["benchmark"] for rule, w in jobs if rule == "translate_benchmark"}
    assert translated == {"xquad-parallel-apertium", "xquad-parallel-human"}
