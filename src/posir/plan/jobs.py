"""One typed job per rule: what the plan decides for it (its params) and, once it runs, its files and threads.

The plan builds a job's params from the typed config; Snakemake carries them to the job as plain data (it tracks
only builtin values, so a changed setting reruns exactly the jobs it reaches); the rule's script turns them back
into the same typed object with :meth:`Job.of` and hands it, with its files, to one step function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import ConfigDict, Field

from posir.analyses.params import RepresentationParams, SaliencyParams
from posir.builders.generation import GenerationBenchmark
from posir.builders.posir_import import PosIRImportBenchmark
from posir.builders.squad import SquadBenchmark
from posir.builders.text_collections import CollectionParams
from posir.builders.xquad import CrossLingualBenchmark, ParallelBenchmark
from posir.controlled.spec import ControlledBenchmark
from posir.llm.config import LLMConfig
from posir.metrics.params import BootstrapParams, MetricParams, PositionParams, TableParams
from posir.models.spec import ModelSpec
from posir.published import PaperTableEntry, PublishedEntry, ReferenceEntry
from posir.rerank import PipelineSpec
from posir.schema import Entry, Str
from posir.scorers.spec import ScorerEntry
from posir.sources import Source
from posir.translate.spec import TranslationEntry

#: What a job learns when it runs, not from the plan: never part of its params.
RUN_TIME_FIELDS = frozenset({"input", "output", "threads", "wildcards", "llm_endpoint"})


class Job(Entry):
    """A job's typed params; ``input``, ``output`` and ``threads`` are filled when it runs (:meth:`of`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: dict[str, Any] = Field(default_factory=dict)
    """the rule's named inputs (a path, or a list of paths)"""
    output: dict[str, Any] = Field(default_factory=dict)
    """the rule's named outputs"""
    threads: int = 1
    wildcards: dict[str, str] = Field(default_factory=dict)
    llm_endpoint: LLMConfig | None = None
    """the running config's llm section: read when the job runs, never a param, so a local server on another port
    reruns nothing (what shapes answers is in the job's params)"""

    def params(self) -> dict[str, Any]:
        """The job's params as plain data: what the rule passes as ``params: job=...``."""
        return self.model_dump(mode="json", exclude=RUN_TIME_FIELDS)

    @classmethod
    def of(cls, snakemake: Any) -> Self:
        """The job of a running rule: its params (``snakemake.params.job``), named files, threads and wildcards."""
        llm = snakemake.config.get("llm")
        return cls.model_validate(
            {
                **snakemake.params.job,
                "input": _named(snakemake.input),
                "output": _named(snakemake.output),
                "threads": int(snakemake.threads),
                "wildcards": {k: str(v) for k, v in snakemake.wildcards.items()},
                "llm_endpoint": LLMConfig.from_section(llm) if llm else None,
            }
        )

    def path(self, name: str, side: str = "input") -> Path:
        files = self.input if side == "input" else self.output
        return Path(files[name])

    def paths(self, name: str) -> list[Path]:
        value = self.input.get(name, [])
        return [Path(p) for p in ([value] if isinstance(value, str) else value)]


def _named(files: Any) -> dict[str, Any]:
    """Snakemake's named files: a name -> a path, or a list of paths for a list input."""
    named: dict[str, Any] = {}
    for name, value in files.items():
        named[name] = str(value) if isinstance(value, (str, Path)) else [str(v) for v in value]
    return named


# --- sources and benchmarks ---------------------------------------------------------------------------


class FetchJob(Job):
    source: Source
    mirrors: tuple[Str, ...]


class BuildJob(Job):
    """A benchmark built from checksummed sources (SQuAD-format files, XQuAD variants)."""

    entry: SquadBenchmark | CrossLingualBenchmark | ParallelBenchmark
    metrics: PositionParams


class CollectionJob(Job):
    name: Str
    entry: CollectionParams


class PositionsFigureJob(Job):
    metrics: TableParams


class GenerationJob(Job):
    """A stage of LLM benchmark generation; ``llm`` holds the answer-shaping settings (the endpoint comes from the
    running config, so a local server on another port reruns nothing)."""

    entry: GenerationBenchmark
    scorers: dict[str, ScorerEntry] = Field(default_factory=dict)
    models: dict[str, ModelSpec] = Field(default_factory=dict)
    llm: dict[str, Any] = Field(default_factory=dict)
    metrics: PositionParams = PositionParams()
    score_cache: Str = ""
    embedding_cache: Str = ""


class ImportJob(Job):
    entry: PosIRImportBenchmark
    metrics: PositionParams


class TranslateJob(Job):
    entry: TranslationEntry
    separator: Str
    llm: LLMConfig | None = None
    cache: Str = ""
    metrics: PositionParams


class JudgeJob(Job):
    entry: TranslationEntry
    llm: LLMConfig


class JudgeTableJob(Job):
    judged_keys: list[tuple[Str, Str, Str]]


class ComparisonJob(Job):
    rows: list[dict[str, str]]
    cards: dict[str, Str]
    reference: Str
    metrics: TableParams


# --- encoding, retrieval, reranking ----------------------------------------------------------------------


class EncodeJob(Job):
    model: ModelSpec
    cache: Str = ""


class RerankJob(Job):
    """A pipeline's second stage over its first stage's run."""

    pipeline: PipelineSpec
    scorer: ScorerEntry
    models: dict[str, ModelSpec] = Field(default_factory=dict)
    id_prefixes: list[Str] = Field(default_factory=list)
    llm: dict[str, Any] = Field(default_factory=dict)
    """the answer-shaping llm settings of an LLM second stage (empty for others)"""
    score_cache: Str = ""
    embedding_cache: Str = ""


# --- evaluation, tables, figures -------------------------------------------------------------------------


class ControlledJob(Job):
    """One variant of a controlled family, built from its source benchmark; ``views`` are the evaluated models
    whose view of each moved span the card records (tokens before it, seen or cut by truncation)."""

    entry: ControlledBenchmark
    separator: Str
    metrics: PositionParams
    views: dict[str, ModelSpec] = Field(default_factory=dict)


class ControlledTablesJob(Job):
    """A controlled family's statistics: ``runs`` names each (variant, model, setting) of the ``scores`` and
    ``controlled`` inputs, in order; ``natural`` each (model, setting) of the source's ``natural`` summaries."""

    entry: ControlledBenchmark
    runs: list[tuple[Str, Str, Str]]
    natural: list[tuple[Str, Str]]
    metrics: MetricParams


class ScoreJob(Job):
    """Scoring a run per query, its aggregates and its position figure."""

    id_prefixes: list[Str] = Field(default_factory=list)
    languages_outside_model: list[Str] = Field(default_factory=list)
    metrics: MetricParams


class RetrieveJob(ScoreJob):
    """A first stage's search, then the scoring of its run (one job: both are short, and a job costs a Python
    start-up and the scheduler's bookkeeping; a run is always scored)."""

    model: ModelSpec
    top_k: int
    corpus_languages: list[Str]
    embedding_model: Str


class PanelsJob(Job):
    """A table or figure over several runs of a benchmark: (model, setting) of each input, in input order."""

    panels: list[tuple[Str, Str]]
    metrics: TableParams


class SettingTablesJob(Job):
    """A setting's grid of every model's position curve, and the paired tests between the models that answer
    every query (one job: both read the same runs' results and are always built together)."""

    models: list[Str]
    """every model of the setting, in the order of the grid's inputs"""
    compared: list[Str]
    """the models the paired tests compare, in the order of the scores' inputs"""
    metrics: MetricParams


class MtebTaskJob(Job):
    """One model's runs on one benchmark as an MTEB TaskResult (posir.mteb_results): a subset per setting."""

    settings: list[Str]
    """the settings, in the order of every input list"""


class MtebModelJob(Job):
    """A model entry's ``model_meta.json`` in MTEB's results layout."""

    entry: Str
    adapted_from: Str | None = None
    """the public model (MTEB's name for it) whose weights the entry runs, where we know it"""
    languages: list[Str] | None = None


class ExposureCorpus(Entry):
    """The corpus of one setting: its benchmark directories (the ``documents`` and ``cards`` inputs, in order) and the
    language of each; a one-vs-many corpus prefixes its document ids with it (``deu:<doc>``)."""

    setting: Str
    languages: list[Str]
    one_vs_many: bool = False


class ExposureJob(Job):
    """Who gets seen on one benchmark (posir.steps.exposure): every run's exposure by group of each attribute."""

    runs: list[tuple[Str, Str]]
    """(model, setting) of each run, in the order of the ``runs`` input"""
    corpora: list[ExposureCorpus]
    """one per setting, in the order of the ``qrels`` input"""
    attributes: list[Str]
    targets: dict[Str, dict[Str, float]] = Field(default_factory=dict)
    compare: list[tuple[Str, Str]] = Field(default_factory=list)
    browsing: Str = "rbp"
    patience: float = 0.5
    utility: float = 0.5
    peer_cutoff: int = 10
    peer_weights: list[tuple[int, float]] = Field(default_factory=list)
    """(grade, weight): pairs, not a mapping, so that the grades stay integers in the job's plain data"""
    bootstrap: BootstrapParams


class LanguageBiasJob(Job):
    runs: list[tuple[Str, Str]]
    depth: int


class SaliencyJob(Job):
    model: ModelSpec
    section: SaliencyParams


class RepresentationJob(Job):
    model: ModelSpec
    section: RepresentationParams
    metrics: TableParams
    cache: Str = ""


class PublishedJob(Job):
    entry: PublishedEntry
    metrics: TableParams


class PaperTablesJob(Job):
    entry: PaperTableEntry
    summary_keys: list[tuple[Str, Str, Str]]
    published: dict[str, PublishedEntry]
    reference: ReferenceEntry | None = None
    metrics: TableParams
