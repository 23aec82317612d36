"""The jobs of evidence-pair benchmarks (posir.plan.pairs): the optional fused questions, and the benchmark."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from posir.builders.pairs import EvidencePairsBenchmark
from posir.jobs import Job
from posir.metrics.params import PositionParams
from posir.schema import Str


class PairsJob(Job):
    """An ``evidence_pairs`` benchmark's job: its groups from the source variant (``separator`` joins its
    paragraphs), the fused questions' LLM settings (``llm``, answer-shaping only) and where positions fall."""

    entry: EvidencePairsBenchmark
    separator: Str
    metrics: PositionParams = PositionParams()
    llm: dict[str, Any] = Field(default_factory=dict)
