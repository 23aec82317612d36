"""Planning controlled-position families: each variant built from its source benchmark, and the family's tables.

A family's variants (``<name>-r<round>-p<position>[-l<length>]``) are benchmarks like any other: the evaluation
blocks that name the family evaluate every variant (:attr:`posir.config.WorkflowConfig.evaluations`), through the
same encode, retrieve, rerank and score jobs. Unchanged documents hit the embedding cache, so a variant costs its
changed positives only. The family's own outputs set every query's positions side by side (paired statistics) and
the natural-data PSI of the source beside the controlled PSI.
"""

from __future__ import annotations

from typing import Any

from posir import benchmark as fmt
from posir.controlled.family import CONTROLLED_TABLE
from posir.controlled.spec import ControlledBenchmark
from posir.plan.base import Part, names_regex
from posir.plan.jobs import ControlledJob, ControlledTablesJob
from posir.scorers.spec import scores_with_model

#: Backends whose tokenizer gives character offsets: the card records where each span sits in their view.
OFFSET_BACKENDS = frozenset({"sentence-transformers", "flagembedding"})
#: The family's tables and figures, by output name.
FAMILY_FILES = {
    "tests_csv": "controlled.csv",
    "tests_md": "controlled.md",
    "positions_csv": "controlled_positions.csv",
    "comparison_csv": "natural_vs_controlled.csv",
    "comparison_md": "natural_vs_controlled.md",
}
FAMILY_FIGURES = {"curves": "controlled.png", "heatmap": "controlled_heatmap.png"}


class ControlledPlan(Part):
    """Controlled variants and their family tables."""

    def families(self) -> dict[str, ControlledBenchmark]:
        return {n: e for n, e in self.config.benchmarks.items() if isinstance(e, ControlledBenchmark)}

    def families_regex(self) -> str:
        return names_regex(self.families())

    def variants_regex(self) -> str:
        return names_regex(self.config.controlled_variants)

    # --- building a variant ---------------------------------------------------------------------------------

    def source_dir(self, family: ControlledBenchmark) -> str:
        return self.paths.benchmark_dir(self.config.query_variant(family.source_benchmark, family.source_language))

    def build_inputs(self, wildcards: Any) -> dict[str, str]:
        """The source variant's contract: its corpus, queries, positions and documents."""
        source = self.source_dir(self.config.family_of(wildcards.benchmark))
        contract = {name: f"{source}/{fmt.CONTRACT[name]}" for name in ("corpus", "queries", "positions", "documents")}
        return {**contract, **self.converted_inputs(self.build(wildcards).views)}

    def build(self, wildcards: Any) -> ControlledJob:
        family = self.config.family_of(wildcards.benchmark)
        evaluated = {e.model for e in self.config.controlled_evaluations.get(family.name, [])}
        models = {m for name in evaluated for m in self._models_behind(name)}
        # A view needs the model's tokenizer only: read on the CPU, a variant is not rebuilt when a model moves to
        # a GPU, and its job needs none.
        views = {
            m: self.config.models[m].on_cpu()
            for m in sorted(models)
            if self.config.models[m].backend in OFFSET_BACKENDS
        }
        return ControlledJob(
            entry=family,
            separator=self.config.separator(family.source_benchmark),
            metrics=self.config.metrics.positions(),
            views=views,
        )

    def _models_behind(self, name: str) -> list[str]:
        """The models an evaluated name reads documents with: itself, or a pipeline's first stage and its
        bi-encoder second stage."""
        if not self.config.is_pipeline(name):
            return [name]
        pipeline = self.config.pipelines[name]
        scorer = self.config.scorers[pipeline.second_stage]
        return [pipeline.first_stage, *([scorer.model] if scores_with_model(scorer) else [])]  # type: ignore[attr-defined]

    # --- the family's tables ----------------------------------------------------------------------------------

    def tables_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        """Per evaluation of the family: its per-query scores and its variant's controlled.tsv; per (model,
        setting): the source's natural summary (the same model on the source benchmark)."""
        runs = self.config.controlled_evaluations[wildcards.benchmark]
        family = self.config.benchmarks[wildcards.benchmark]
        assert isinstance(family, ControlledBenchmark)
        natural = list(dict.fromkeys((e.model, str(e.setting)) for e in runs))
        return {
            "scores": [self.paths.scores(e.benchmark, e.model, str(e.setting)) for e in runs],
            "controlled": [self.paths.benchmark_file(e.benchmark, CONTROLLED_TABLE) for e in runs],
            "natural": [self.paths.aggregate(family.source_benchmark, m, s, "summary") for m, s in natural],
        }

    def tables(self, wildcards: Any) -> ControlledTablesJob:
        runs = self.config.controlled_evaluations[wildcards.benchmark]
        return ControlledTablesJob(
            entry=self.config.benchmarks[wildcards.benchmark],  # type: ignore[arg-type]
            runs=[(e.benchmark, e.model, str(e.setting)) for e in runs],
            natural=list(dict.fromkeys((e.model, str(e.setting)) for e in runs)),
            metrics=self.config.metrics,
        )

    def family_outputs(self, family: str) -> dict[str, str]:
        return {
            **{k: self.paths.table(family, f) for k, f in FAMILY_FILES.items()},
            **{k: self.paths.figure(family, f) for k, f in FAMILY_FIGURES.items()},
        }

    def targets(self) -> list[str]:
        return [
            path
            for family in sorted(self.config.controlled_evaluations)
            for path in self.family_outputs(family).values()
        ]
