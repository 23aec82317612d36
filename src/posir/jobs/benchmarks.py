"""The jobs that make benchmarks (posir.plan.benchmarks): sources; built, generated, imported and translated
benchmarks."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from posir.builders.generation import GenerationBenchmark
from posir.builders.paragraphs import SquadParagraphsBenchmark
from posir.builders.posir_import import PosIRImportBenchmark
from posir.builders.posq_import import PosqImportBenchmark
from posir.builders.squad import SquadBenchmark
from posir.builders.text_collections import CollectionParams
from posir.builders.xquad import CrossLingualBenchmark, ParallelBenchmark
from posir.jobs import Job
from posir.llm.config import LLMConfig
from posir.metrics.params import PositionParams, TableParams
from posir.models.declarations.spec import ModelSpec
from posir.schema import Str
from posir.scorers.spec import ScorerEntry
from posir.sources import Source
from posir.translate.spec import TranslationEntry


class FetchJob(Job):
    source: Source
    mirrors: tuple[Str, ...]


class BuildJob(Job):
    """A benchmark built from checksummed sources (SQuAD-format files, XQuAD variants)."""

    entry: SquadBenchmark | SquadParagraphsBenchmark | CrossLingualBenchmark | ParallelBenchmark
    metrics: PositionParams


class CollectionJob(Job):
    name: Str
    entry: CollectionParams


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


class PosqImportJob(Job):
    """FineWeb-PosQ's rows; ``groups`` are the benchmark's label groups (its ``positions``, which a build's params
    otherwise leave out), the labels a row may name."""

    entry: PosqImportBenchmark
    groups: tuple[Str, ...]
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
