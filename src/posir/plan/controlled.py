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
from posir.builders.pairs import EvidencePairsBenchmark
from posir.config import WorkflowConfig
from posir.controlled.family import CONTROLLED_TABLE
from posir.controlled.spec import SPREAD, ControlledBenchmark
from posir.evidence import EVIDENCE, GROUPS
from posir.plan.base import Part, names_regex
from posir.plan.jobs import ControlledJob, ControlledTablesJob, DistanceTablesJob, PieceReader
from posir.results.paths import CONTROLLED_TABLES, DISTANCE_TABLES
from posir.scorers.spec import scores_with_model

#: Backends whose tokenizer gives character offsets: the card records where each span sits in their view.
OFFSET_BACKENDS = frozenset({"sentence-transformers", "flagembedding"})
#: Long-input modes that read a document window by window: their pieces may or may not share a window.
WINDOWED_INPUTS = frozenset({"chunks", "window_mean"})


def spread_families(config: WorkflowConfig) -> dict[str, ControlledBenchmark]:
    """The controlled families of spread mode (queries resting on several pieces, :mod:`posir.controlled.spread`)."""
    return {
        n: e for n, e in config.benchmarks.items() if isinstance(e, ControlledBenchmark) and e.controlled.mode == SPREAD
    }


def natural_runs(config: WorkflowConfig, family: str) -> list[tuple[str, str, str]]:
    """(source benchmark, model, setting) of each (model, setting) a move or insert family evaluates, in config order:
    the natural run whose summary its tables set beside the controlled positions. A spread family has none: its cells
    are no positions of one evidence span (its distance tables set the cells side by side)."""
    entry = config.benchmarks[family]
    assert isinstance(entry, ControlledBenchmark)
    if entry.controlled.mode == SPREAD:
        return []
    runs = config.controlled_evaluations[family]
    return list(dict.fromkeys((entry.source_benchmark, e.model, str(e.setting)) for e in runs))


class ControlledPlan(Part):
    """Controlled variants and their family tables."""

    def families(self) -> dict[str, ControlledBenchmark]:
        return {n: e for n, e in self.config.benchmarks.items() if isinstance(e, ControlledBenchmark)}

    def spread_families(self) -> dict[str, ControlledBenchmark]:
        return spread_families(self.config)

    def families_regex(self, spread: bool = False) -> str:
        """The families of one kind: one evidence unit moved (controlled tables), or several pieces (distance)."""
        spreads = self.spread_families()
        return names_regex(n for n in self.families() if (n in spreads) == spread)

    def variants_regex(self, spread: bool = False) -> str:
        spreads = self.spread_families()
        return names_regex(
            v for v, (family, _) in self.config.controlled_variants.items() if (family in spreads) == spread
        )

    def spread_variants(self) -> set[str]:
        """Every variant of a spread family: no tables of its own (the family's distance tables set them side by
        side), only its runs and scores."""
        spreads = self.spread_families()
        return {v for v, (family, _) in self.config.controlled_variants.items() if family in spreads}

    # --- building a variant ---------------------------------------------------------------------------------

    def source_dir(self, family: ControlledBenchmark) -> str:
        return self.paths.benchmark_dir(self.config.query_variant(family.source_benchmark, family.source_language))

    def build_inputs(self, wildcards: Any) -> dict[str, str]:
        """The source variant's contract: its corpus, queries, positions and documents (a spread family's source, when
        the workflow makes its pieces, also its evidence table and groups)."""
        family = self.config.family_of(wildcards.benchmark)
        source = self.source_dir(family)
        contract = {name: f"{source}/{fmt.CONTRACT[name]}" for name in ("corpus", "queries", "positions", "documents")}
        if isinstance(self.config.benchmarks[family.source_benchmark], EvidencePairsBenchmark):
            contract.update(evidence=f"{source}/{EVIDENCE}", groups=f"{source}/{GROUPS}")
        return {**contract, **self.converted_inputs(self.build(wildcards).views)}

    def build(self, wildcards: Any) -> ControlledJob:
        family = self.config.family_of(wildcards.benchmark)
        evaluated = {e.model for e in self.config.controlled_evaluations.get(family.name, [])}
        # a spread family counts its pieces' tokens once, in its tables job (posir.plan.controlled.distance_tables)
        models = set() if family.controlled.mode == SPREAD else {m for n in evaluated for m in self._models_behind(n)}
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
        natural = natural_runs(self.config, wildcards.benchmark)
        return {
            "scores": [self.paths.scores(e.benchmark, e.model, str(e.setting)) for e in runs],
            "controlled": [self.paths.benchmark_file(e.benchmark, CONTROLLED_TABLE) for e in runs],
            "natural": [self.paths.aggregate(*run, "summary") for run in natural],
        }

    def tables(self, wildcards: Any) -> ControlledTablesJob:
        runs = self.config.controlled_evaluations[wildcards.benchmark]
        return ControlledTablesJob(
            entry=self.config.benchmarks[wildcards.benchmark],  # type: ignore[arg-type]
            runs=[(e.benchmark, e.model, str(e.setting)) for e in runs],
            natural=[(model, setting) for _, model, setting in natural_runs(self.config, wildcards.benchmark)],
            metrics=self.config.metrics,
        )

    def family_outputs(self, family: str) -> dict[str, str]:
        return self.paths.outputs(family, DISTANCE_TABLES if family in self.spread_families() else CONTROLLED_TABLES)

    # --- a spread family's tables ---------------------------------------------------------------------------------

    def distance_tables_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        """Per evaluation of the family: its per-query scores and its variant's controlled.tsv; per variant: its
        corpus and evidence table (where the pieces are, for their tokens); the converted models the readers load."""
        job = self.distance_tables(wildcards)
        return {
            "scores": [self.paths.scores(v, m, s) for v, m, s in job.runs],
            "controlled": [self.paths.benchmark_file(v, CONTROLLED_TABLE) for v, _, _ in job.runs],
            "corpora": [self.paths.benchmark_file(v, fmt.CORPUS) for v in job.variants],
            "evidence": [self.paths.benchmark_file(v, EVIDENCE) for v in job.variants],
            "origin_queries": [self.encoded_file(m, v, "queries") for v, m, _ in job.origins],
            "origin_corpus": [self.encoded_file(m, v, "corpus") for v, m, _ in job.origins],
            **{k: [v] for k, v in self.converted_inputs(r.model.name for r in job.readers.values()).items()},
        }

    def distance_tables(self, wildcards: Any) -> DistanceTablesJob:
        runs = self.config.controlled_evaluations[wildcards.benchmark]
        origins = [e for e in runs if self.scores_taken_apart(e)]
        return DistanceTablesJob(
            entry=self.config.benchmarks[wildcards.benchmark],  # type: ignore[arg-type]
            runs=[(e.benchmark, e.model, str(e.setting)) for e in runs],
            variants=list(dict.fromkeys(e.benchmark for e in runs)),
            readers={n: r for n in dict.fromkeys(e.model for e in runs) if (r := self.reader(n)) is not None},
            origins=[(e.benchmark, e.model, str(e.setting)) for e in origins],
            origin_outputs=[self.config.models[e.model].output for e in origins],
            metrics=self.config.metrics,
        )

    def reader(self, name: str) -> PieceReader | None:
        """How an evaluated name reads the pieces, where its tokenizer gives offsets: a model entry by its long-input
        mode, a pipeline by the windows of its second stage's model (a bi-encoder's or a rescore's, FirstP its first);
        None for the others (BM25, cross-encoders)."""
        if self.config.is_pipeline(name):
            scorer = self.config.scorers[self.config.pipelines[name].second_stage]
            model = getattr(scorer, "model", None)
            if not scores_with_model(scorer) or self.config.models[model].backend not in OFFSET_BACKENDS:
                return None
            reads = "first" if scorer.aggregation == "firstp" else "windows"  # type: ignore[attr-defined]
            return PieceReader(
                model=self.config.models[model].on_cpu(),
                reads=reads,
                window_tokens=scorer.window_tokens,  # type: ignore[attr-defined]
                stride_tokens=scorer.stride_tokens,  # type: ignore[attr-defined]
            )
        spec = self.config.models[name]
        if spec.backend not in OFFSET_BACKENDS or spec.effective_long_input == "full":
            return None
        windowed = spec.effective_long_input in WINDOWED_INPUTS
        return PieceReader(
            model=spec.on_cpu(),
            reads="windows" if windowed else "first",
            window_tokens=spec.window_tokens if windowed else None,
            stride_tokens=spec.stride_tokens if windowed else None,
        )

    def targets(self) -> list[str]:
        return [
            path
            for family in sorted(self.config.controlled_evaluations)
            for path in self.family_outputs(family).values()
        ]
