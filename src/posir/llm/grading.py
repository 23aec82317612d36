"""LLM relevance grades 0-4 of (query, document) pairs in one batch (PosIR Appendix D.3).

The ``grade_relevance`` prompt and its schema, validated by
:func:`posir.llm.validators.grade_in_range`; generation's grading stage
(PosIR section 3.3) asks it for each query's full and span-removed document.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from posir.llm.prompts import load_prompt
from posir.llm.validators import grade_in_range


class RelevanceGrader:
    """LLM relevance grades 0-4 (PosIR D.3) through one client; ``None`` for a failed call, whose
    :class:`posir.llm.client.LLMResult` stays in ``failures`` (at the pair's index) until the next batch."""

    def __init__(self, client: Any, prompts_dir: Path) -> None:
        self.client = client
        self.template = load_prompt("grade_relevance", prompts_dir)
        self.validator = grade_in_range()
        self.failures: list[Any] = []

    def __call__(self, queries: Sequence[str], documents: Sequence[str], stage: str) -> list[int | None]:
        results = self.client.map(
            stage,
            self.template,
            [{"query": q, "document": d} for q, d in zip(queries, documents)],
            validator=self.validator,
        )
        self.failures = [None if r.ok else r for r in results]
        return [int(r.value["grade"]) if r.ok else None for r in results]
