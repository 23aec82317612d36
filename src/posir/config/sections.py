"""The sections of ``config.yaml`` composed: :class:`ConfigSections` holds each under its key, typed by its own
declaration (declared beside the code that reads it; :mod:`posir.schema` says how), with the few sections only
the config itself reads.

What the file says, as it says it: what the sections say together is checked above this module
(:mod:`posir.config.checks`, run by :class:`posir.config.workflow.WorkflowConfig`), so the checks can read the
sections without importing the class that runs them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, Literal, Union

from pydantic import Field, model_validator

from posir.analyses.params import AnalysesSection
from posir.builders.generation import GenerationBenchmark
from posir.builders.pairs import EvidencePairsBenchmark
from posir.builders.paragraphs import SquadParagraphsBenchmark
from posir.builders.posir_import import PosIRImportBenchmark
from posir.builders.posq_import import PosqImportBenchmark
from posir.builders.squad import SquadBenchmark
from posir.builders.text_collections import CollectionParams
from posir.builders.xquad import CrossLingualBenchmark, ParallelBenchmark
from posir.config.topology import BenchmarkTopology, EvaluationBlock
from posir.controlled.spec import ControlledBenchmark
from posir.llm.config import LLMConfig
from posir.metrics.exposure import ExposureParams
from posir.metrics.params import MetricParams
from posir.models.declarations.spec import ModelSpec
from posir.published import PaperTableEntry, PublishedEntry, ReferenceEntry
from posir.rerank import PipelineSpec
from posir.schema import Entry, KeyProblem, Language, Name, PositiveInt, SettingName, Str
from posir.scorers.spec import ScorerEntry
from posir.sources import Source
from posir.translate.spec import TranslationEntry

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
        EvidencePairsBenchmark,
        SquadParagraphsBenchmark,
        PosqImportBenchmark,
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


class ConfigSections(Entry):
    """Every section of config.yaml, each typed by its declaration (the cross references are not checked here)."""

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

    @cached_property
    def topology(self) -> BenchmarkTopology:
        """The benchmarks' languages, variants and corpora, and the evaluations of the blocks."""
        return BenchmarkTopology(self.benchmarks, self.evaluation)
