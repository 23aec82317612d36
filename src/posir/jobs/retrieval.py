"""The jobs of encoding, searching and scoring a run (posir.plan.retrieval, posir.plan.evaluation)."""

from __future__ import annotations

from pydantic import Field

from posir.jobs import Job
from posir.metrics.params import MetricParams
from posir.models.declarations.spec import ModelSpec
from posir.schema import Str


class ScoreJob(Job):
    """Scoring a run per query, its bins and their bootstrap intervals (the rest of its aggregates and its position
    figure are its benchmark's :class:`posir.jobs.evaluation.RunAnalysisJob`)."""

    id_prefixes: list[Str] = Field(default_factory=list)
    metrics: MetricParams


class EncodeJob(Job):
    model: ModelSpec
    cache: Str = ""


class RetrieveJob(ScoreJob):
    """A first stage's search, then the scoring of its run (one job: both are short, and a job costs a Python
    start-up and the scheduler's bookkeeping; a run is always scored)."""

    model: ModelSpec
    top_k: int
    corpus_languages: list[Str]
    embedding_model: Str
