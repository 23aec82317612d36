"""Planning evidence-pair benchmarks (posir.builders.pairs): the groups of a source's questions, their optional
fused questions (one LLM stage, under results/generation/<name>/fuse/) and the benchmark itself."""

from __future__ import annotations

from typing import Any

from posir import benchmark as fmt
from posir.builders.pairs import EvidencePairsBenchmark
from posir.jobs.pairs import PairsJob
from posir.metrics.params import PositionParams
from posir.plan.base import Part, names_regex

#: The fusion stage's folder under results/generation/<benchmark>/ and its answers.
FUSE_STAGE, FUSED_FILE = "fuse", "fused.jsonl"


class PairsPlan(Part):
    """Benchmarks of queries resting on several paragraphs, and their fused questions."""

    def entries(self) -> dict[str, EvidencePairsBenchmark]:
        return {n: e for n, e in self.config.benchmarks.items() if isinstance(e, EvidencePairsBenchmark)}

    def fused_regex(self) -> str:
        """The pair benchmarks whose groups an LLM also fuses into one question."""
        return names_regex(n for n, e in self.entries().items() if e.params.fuse is not None)

    def _entry(self, wildcards: Any) -> EvidencePairsBenchmark:
        return self.entries()[wildcards.benchmark]

    def source_contract(self, wildcards: Any) -> dict[str, str]:
        """The source variant's corpus, queries, positions and documents."""
        entry = self._entry(wildcards)
        source = self.paths.benchmark_dir(self.config.query_variant(entry.source_benchmark, entry.source_language))
        return {name: f"{source}/{fmt.CONTRACT[name]}" for name in ("corpus", "queries", "positions", "documents")}

    def fuse_outputs(self, benchmark: str) -> dict[str, str]:
        return self.paths.generation_stage_outputs(benchmark, FUSE_STAGE, {"fused": FUSED_FILE})

    def build_inputs(self, wildcards: Any) -> dict[str, str]:
        """The source's contract and, with ``fuse``, the fusion stage's answers, drops and counts."""
        inputs = self.source_contract(wildcards)
        if self._entry(wildcards).params.fuse is not None:
            inputs.update(self.fuse_outputs(wildcards.benchmark))
        return inputs

    def fuse_inputs(self, wildcards: Any) -> dict[str, Any]:
        prompts = [str(self.prompts_dir / f"{name}{suffix}") for name in ("fuse_questions", "grade_relevance")
                   for suffix in (".md", ".schema.json")]  # fmt: skip
        return {**self.source_contract(wildcards), "prompt": prompts}

    def build(self, wildcards: Any) -> PairsJob:
        return PairsJob(
            entry=self._entry(wildcards),
            separator=self.config.separator(wildcards.benchmark),
            metrics=self.config.metrics.positions(),
        )

    def fuse(self, wildcards: Any) -> PairsJob:
        """The fusion stage: no positions (a bucket change reruns no LLM call), the answer-shaping llm settings."""
        llm = self.config.llm.answer_settings() if self.config.llm is not None else {}
        return PairsJob(
            entry=self._entry(wildcards),
            separator=self.config.separator(wildcards.benchmark),
            metrics=PositionParams(),
            llm=llm,
        )
