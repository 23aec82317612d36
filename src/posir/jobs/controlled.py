"""The jobs of controlled families (posir.plan.controlled): each variant, and the family's statistics (a spread
family's with the token accounting of its pieces)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from posir.controlled.spec import ControlledBenchmark
from posir.jobs import Job
from posir.metrics.params import MetricParams, PositionParams
from posir.models.declarations.spec import ModelSpec
from posir.schema import Entry, Str


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


class PieceReader(Entry):
    """How an evaluated name reads a document's pieces (a spread family's token accounting): a model entry's
    tokenizer, and either its ``first`` window (truncating entries, FirstP) or its ``windows`` (chunked entries,
    window means, MaxP scorers) of ``window_tokens`` every ``stride_tokens`` (null: the model's defaults)."""

    model: ModelSpec
    reads: Literal["first", "windows"]
    window_tokens: int | None = None
    stride_tokens: int | None = None


class DistanceTablesJob(Job):
    """A spread family's statistics: ``runs`` names each (variant, model, setting) of the ``scores`` and
    ``controlled`` inputs, in order; ``variants`` each variant of the ``corpora`` and ``evidence`` inputs;
    ``readers`` the evaluated names whose reading of the pieces is counted; ``origins`` the runs of multi-vector and
    sparse entries whose scores are taken apart by piece (``origin_queries`` and ``origin_corpus`` inputs, in order),
    ``origin_outputs`` each one's entry output."""

    entry: ControlledBenchmark
    runs: list[tuple[Str, Str, Str]]
    variants: list[Str]
    readers: dict[str, PieceReader] = Field(default_factory=dict)
    origins: list[tuple[Str, Str, Str]] = Field(default_factory=list)
    origin_outputs: list[Str] = Field(default_factory=list)
    metrics: MetricParams
