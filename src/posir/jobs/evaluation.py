"""The jobs of evaluation (posir.plan.evaluation, and the positions figure of a benchmark): scores, tables, figures,
paired tests, exposure, analyses and paper tables."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from posir.analyses.params import RepresentationParams, SaliencyParams
from posir.jobs import Job
from posir.metrics.exposure import DEFAULT_GROUP_MEASURES
from posir.metrics.groupings import PositionGrouping
from posir.metrics.measure import GroupMeasure, RankingMeasure
from posir.metrics.params import DEFAULT_MEASURES, BootstrapParams, MetricParams, TableParams
from posir.models.declarations.spec import ModelSpec
from posir.published import PaperTableEntry, PublishedEntry, ReferenceEntry
from posir.schema import Entry, Str


class PositionsFigureJob(Job):
    metrics: TableParams


class PanelsJob(Job):
    """A table or figure over several runs of a benchmark: (model, setting) of each input, in input order."""

    panels: list[tuple[Str, Str]]
    metrics: TableParams


class RunAnalysisJob(Job):
    """Runs of one benchmark (a part of its runs: posir.plan.evaluation.RunAnalysis): each run's summary, trend tests
    and position figure, from the files the run's own job wrote (posir.steps.evaluation.analyse_runs)."""

    benchmark: Str
    runs: list[tuple[Str, Str]]
    """(model, setting) of each run, in the order of every input and output list"""
    languages_outside_model: list[list[Str]]
    """per run, the languages of its setting its model does not declare"""
    metrics: MetricParams


class SettingTablesJob(Job):
    """A setting's grid of every model's position curve, and the paired tests between the models that answer
    every query (one job: both read the same runs' results and are always built together)."""

    models: list[Str]
    """every model of the setting, in the order of the grid's inputs"""
    compared: list[Str]
    """the models the paired tests compare, in the order of the scores' inputs"""
    metrics: MetricParams


class PositionGroupsJob(Job):
    """A benchmark's position-group table and figure (Zeng et al.'s Table 1): its runs by the benchmark's grouping,
    and the published rows of the same groups (posir.steps.position_groups)."""

    benchmark: Str
    runs: list[tuple[Str, Str]]
    """(model, setting) of each run, in the order of the scores' inputs"""
    grouping: PositionGrouping
    published_rows: dict[Str, Str] = Field(default_factory=dict)
    """a bundled table or a TSV file -> the dataset of it shown beside ours"""
    metrics: MetricParams


class MtebTaskJob(Job):
    """One model's runs on one benchmark as an MTEB TaskResult (posir.mteb_results): a subset per setting."""

    settings: list[Str]
    """the settings, in the order of every input list"""
    measures: list[Str] = Field(default_factory=lambda: list(DEFAULT_MEASURES))
    """the per-query measures of the runs (metrics.measures): the retrieval scores of each subset"""
    grouping: PositionGrouping | None = None
    """the benchmark's position groups, where they are not PosIR's relative bins: each subset's scores by group"""
    metrics: MetricParams | None = None
    """the bootstrap and PSI minimum of those groups (with ``grouping``)"""

    def ranking_measures(self) -> list[RankingMeasure]:
        from posir.metrics.measures import parse_ranking

        return [parse_ranking(name) for name in self.measures]


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
    measures: list[Any] = Field(default_factory=lambda: list(DEFAULT_GROUP_MEASURES))
    """the group measures as ``exposure.measures`` writes them (posir.metrics.measures.parse_group)"""
    bootstrap: BootstrapParams

    def group_measures(self) -> list[GroupMeasure]:
        """The group measures of every run, in the order of their per-query columns."""
        from posir.metrics.measures import parse_group

        return [parse_group(entry) for entry in self.measures]


class LanguageBiasJob(Job):
    runs: list[tuple[Str, Str]]
    depth: int


class ScoreOriginJob(Job):
    """Where a benchmark's multi-vector and sparse scores come from (posir.analyses.score_origin): per run, its
    entry's ``output`` and the order of its inputs (``positions``, ``queries``, ``corpus``: one file each per run)."""

    runs: list[tuple[Str, Str]]
    """(model, setting) of each run, in the order of the inputs"""
    model_outputs: list[Str]
    """each run's entry output: multi-vector or sparse"""
    metrics: TableParams
    bootstrap: BootstrapParams


class PoolingJob(Job):
    """A dense entry beside its unpooled token-vector reading (posir.metrics.pooling), on a natural benchmark or a
    controlled family: ``pairs`` (setting, pooled, unpooled); ``runs`` (benchmark or variant, model, setting) of each
    ``scores`` input (and, for a family, ``controlled`` input), in order; ``unpaired`` (unpooled entry, setting,
    why) of the runs left without a pair."""

    pairs: list[tuple[Str, Str, Str]]
    unpaired: list[tuple[Str, Str, Str]] = Field(default_factory=list)
    runs: list[tuple[Str, Str, Str]]
    controlled: bool = False
    metrics: MetricParams


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
