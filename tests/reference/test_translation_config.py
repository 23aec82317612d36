"""Translation entries in config.yaml: variants, settings, and errors that name the key to fix."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
import yaml

from posir.config import ConfigError, WorkflowConfig, comparison_rows, load_config
from posir.translate.spec import TranslationConfigError, TranslationEntry
from tests.conftest import REPO

RAW = yaml.safe_load((REPO / "config.yaml").read_text())
CONFIG = load_config(RAW)  # the typed config, cross references checked
SCHEMA = yaml.safe_load((REPO / "schemas" / "config.schema.yaml").read_text())


def config(**benchmarks: Any) -> dict[str, Any]:
    """The shipped config with extra benchmark entries, as raw data: load_config checks it."""
    c = copy.deepcopy(RAW)
    c["benchmarks"].update(benchmarks)
    return c


def translation(source: str, translations: dict[str, Any], **more: Any) -> dict[str, Any]:
    """A translation entry: ``source`` benchmark, target language -> backend keys, any other keys."""
    return {"builder": "translation", "from": source, "translations": translations, **more}


def test_the_shipped_config_is_valid() -> None:
    jsonschema.validate(RAW, SCHEMA)  # the generated schema (Snakemake's validate) accepts it too
    assert isinstance(CONFIG, WorkflowConfig)
    assert isinstance(CONFIG.benchmarks["squad-long-apertium"], TranslationEntry)
    assert ("squad-long-apertium", "spa") in CONFIG.translation_variants()


def test_settings_map_to_the_source_and_the_translated_variants() -> None:
    assert CONFIG.query_variant("squad-long-apertium", "spa") == "squad-long-apertium-spa"
    assert CONFIG.query_variant("squad-long-apertium", "eng") == "squad-long"
    assert CONFIG.corpus_variants("squad-long-apertium", "eng") == ["squad-long"]
    assert CONFIG.corpus_variants("squad-long-apertium", "spa") == ["squad-long-apertium-spa"]
    assert CONFIG.corpus_variants("squad-long-apertium", "mul") == ["squad-long", "squad-long-apertium-spa"]
    # from a multilingual benchmark: its English variant is the source
    assert CONFIG.query_variant("xquad-parallel-apertium", "eng") == "xquad-parallel-eng"
    assert CONFIG.corpus_variants("xquad-parallel-human", "spa") == ["xquad-parallel-human-spa"]
    with pytest.raises(ConfigError, match="has no 'deu' queries"):
        CONFIG.query_variant("squad-long-apertium", "deu")
    settings = {(e.benchmark, str(e.setting)) for e in CONFIG.evaluations}
    assert {("squad-long-apertium", "spa-spa"), ("squad-long-apertium", "spa-eng")} <= settings
    assert CONFIG.separator("xquad-parallel-apertium") == "\n\n"


def test_comparison_rows_cover_translations_models_and_settings() -> None:
    rows = comparison_rows(CONFIG, "xquad-spa")
    assert len(rows) == 2 * 3 * 2
    assert {r["label"] for r in rows} == {"human (XQuAD es)", "apertium eng-spa"}


@pytest.mark.parametrize(
    "entry,message",
    [
        (
            translation("squad-long", {"spa": {"backend": "apertium"}}),
            r"config: benchmarks\.bad\.translations\.spa\.pair: missing; add it",
        ),
        (
            translation("squad-long", {"spa": {"backend": "parallel"}}),
            r"config: benchmarks\.bad\.translations\.spa\.source_file: missing; add it\n"
            r"config: benchmarks\.bad\.translations\.spa\.target_file: missing; add it",
        ),
        (
            translation(
                "squad-long", {"spa": {"backend": "parallel", "source_file": "xquad_eng", "target_file": "nope"}}
            ),
            r"config: benchmarks\.bad\.translations\.spa\.target_file: 'nope' is not defined under 'sources'",
        ),
        (
            translation("squad-long", {"spa": {"backend": "llm"}}),
            r"config: benchmarks\.bad\.translations\.spa: \(backend: llm\) needs the llm section; add an 'llm' section",
        ),
        (
            translation("squad-long", {"spa": {"backend": "apertium", "pair": "eng-spa", "prompt": "x"}}),
            r"config: benchmarks\.bad\.translations\.spa\.prompt: unknown key 'prompt'; allowed keys: backend, "
            r"chunk_texts, datadir, .*pair",
        ),
        (
            translation("xquad-long", {"deu": {"backend": "apertium", "pair": "eng-deu"}}),
            r"config: benchmarks\.bad\.from: 'xquad-long' \(xquad_cross_lingual\) holds queries only, "
            r"its documents are another benchmark's; translate that benchmark instead",
        ),
        (
            translation("squad-es-long", {"deu": {"backend": "apertium", "pair": "spa-deu"}}),
            r"config: benchmarks\.bad\.from_language: 'squad-es-long' has no 'eng' variant \(it has \['spa'\]\)",
        ),
        (
            translation(
                "squad-long",
                {"spa": {"backend": "apertium", "pair": "eng-spa"}},
                filters={"outliers": {"statistic": "chars"}},
            ),
            r"config: benchmarks\.bad\.filters\.outliers\.statistic: chars is not allowed; "
            r"allowed values: tokens or ratio",
        ),
        (
            translation("squad-long", {"eng": {"backend": "apertium", "pair": "eng-spa"}}),
            r"config: benchmarks\.bad\.translations\.eng: the source language \(from_language\) "
            r"cannot also be a target; remove it",
        ),
    ],
)
def test_bad_translation_entries_name_the_key(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(config(bad=entry))


@pytest.mark.parametrize(
    "spec,problem",
    [
        ({"backend": "apertium"}, r"pair: missing; add it"),
        ({"backend": "parallel"}, r"source_file: missing; add it"),
        ({"backend": "apertium", "pair": "eng-spa", "prompt": "x"}, r"prompt: unknown key 'prompt'"),
        ({"backend": "apertium", "pair": "english-spanish"}, r"pair: 'english-spanish' does not match the pattern"),
    ],
)
def test_each_backend_has_its_own_keys(spec: dict[str, Any], problem: str) -> None:
    """What each backend needs and allows is checked at load time."""
    with pytest.raises(
        ConfigError, match=r"config: benchmarks\.bad\.translations\.spa\.(?:apertium\.|parallel\.)?" + problem
    ):
        load_config(config(bad=translation("squad-long", {"spa": spec})))


def test_an_entry_alone_is_refused_with_the_translation_error_type() -> None:
    """A translation entry read on its own (as its jobs do) raises TranslationConfigError, naming the key."""
    entry = translation(
        "squad-long", {"spa": {"backend": "apertium", "pair": "eng-spa"}}, filters={"outliers": {"statistic": "chars"}}
    )
    with pytest.raises(TranslationConfigError, match=r"config: benchmarks\.bad\.filters\.outliers\.statistic: chars"):
        TranslationEntry.from_config("bad", entry)
    good = TranslationEntry.from_config("bad", {**entry, "filters": {}})
    assert (good.source_benchmark, good.source_language, list(good.languages)) == ("squad-long", "eng", ["spa"])
    assert good.languages["spa"].language == "spa"  # each backend knows its target language (its key)


def test_variant_names_may_not_collide_and_from_must_exist() -> None:
    # squad-long-apertium's Spanish variant directory is squad-long-apertium-spa: no benchmark may have that name
    clash = config(
        **{
            "squad-long-apertium-spa": {
                "builder": "squad_long_documents",
                "language": "spa",
                "sources": {"squad": "squad_es_dev_v1_1"},
            }
        }
    )
    with pytest.raises(
        ConfigError,
        match=r"config: benchmarks\.squad-long-apertium\.translations\.spa: its variant "
        r"directory 'squad-long-apertium-spa' collides with a benchmark",
    ):
        load_config(clash)
    with pytest.raises(ConfigError, match=r"config: benchmarks\.bad\.from: 'nothing' must name another benchmark"):
        load_config(config(bad=translation("nothing", {"spa": {"backend": "apertium", "pair": "eng-spa"}})))
    # a target language is an ISO 639-3 code (so '<name>-<lang>' never reads as another benchmark's name)
    with pytest.raises(ConfigError, match=r"config: benchmarks\.bad\.translations\.long\b.*: 'long' does not match"):
        load_config(config(bad=translation("squad-long", {"long": {"backend": "apertium", "pair": "eng-spa"}})))


def _messages(error: jsonschema.ValidationError) -> Iterator[str]:
    """The messages of an error and of every error of the branches under it (a oneOf over builders)."""
    yield error.message
    for inner in error.context or []:
        yield from _messages(inner)


def test_schema_requires_from_and_translations_but_no_sources() -> None:
    jsonschema.validate(
        config(ok=translation("squad-long", {"spa": {"backend": "apertium", "pair": "eng-spa"}})),
        SCHEMA,
    )
    with pytest.raises(jsonschema.ValidationError) as raised:
        jsonschema.validate(config(bad={"builder": "translation", "from": "squad-long"}), SCHEMA)
    assert "'translations' is a required property" in set(_messages(raised.value))
    with pytest.raises(jsonschema.ValidationError) as raised:
        jsonschema.validate(config(bad={"builder": "squad_long_documents"}), SCHEMA)
    assert "'sources' is a required property" in set(_messages(raised.value))
    # the declarations say the same, naming the key
    with pytest.raises(ConfigError, match=r"config: benchmarks\.bad\.translations: missing; add it"):
        load_config(config(bad={"builder": "translation", "from": "squad-long"}))
    with pytest.raises(ConfigError, match=r"config: benchmarks\.bad\.sources: missing; add it"):
        load_config(config(bad={"builder": "squad_long_documents"}))
