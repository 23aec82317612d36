"""The job of a reranking pipeline's second stage (posir.plan.retrieval)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from posir.jobs import Job
from posir.models.declarations.spec import ModelSpec
from posir.rerank import PipelineSpec
from posir.schema import Str
from posir.scorers.spec import ScorerEntry


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
