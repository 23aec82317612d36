"""The jobs of controlled families (posir.plan.controlled): each variant, and the family's statistics."""

from __future__ import annotations

from pydantic import Field

from posir.controlled.spec import ControlledBenchmark
from posir.jobs import Job
from posir.metrics.params import MetricParams, PositionParams
from posir.models.spec import ModelSpec
from posir.schema import Str


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
