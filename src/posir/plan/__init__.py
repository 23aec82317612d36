"""The workflow's plan, as a library: from the typed config, every target and every job's inputs, params, threads
and resources. Pure functions of the config (no Snakemake needed), tested as plans in ``tests/unit/test_plan.py``;
``rules/*.smk`` only call them.

:meth:`Plan.from_config` is the one way in: it types and checks the config (every check that the config and file
names allow happens here, before the first job starts) and composes the parts: :class:`BenchmarkPlan` (sources,
benchmarks, generation, translation), :class:`RetrievalPlan` (encode, search, rerank) and
:class:`EvaluationPlan` (scores, tables, figures, tests, analyses, paper tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posir.builders import BUILDERS
from posir.config import WorkflowConfig, check_installed, load_config
from posir.models.registry import reads_one_pass
from posir.plan.base import Wildcards, input_scaled_mem_mb, names_regex
from posir.plan.benchmarks import BenchmarkPlan
from posir.plan.checks import check_plan
from posir.plan.controlled import ControlledPlan
from posir.plan.evaluation import EvaluationPlan
from posir.plan.pairs import PairsPlan
from posir.plan.retrieval import RetrievalPlan
from posir.results.paths import (
    EXPOSURE_TABLES,
    LANGUAGE_BIAS_TABLE,
    LANGUAGES_TABLE,
    MAIN_TABLE,
    SCORE_ORIGIN_TABLE,
    TRANSLATION_COMPARISON_TABLE,
    TRANSLATION_JUDGE_TABLE,
    ResultPaths,
)

__all__ = ["Plan", "ResultPaths", "Wildcards", "input_scaled_mem_mb"]


@dataclass(frozen=True)
class Plan:
    """Every target and every job of a config."""

    config: WorkflowConfig
    paths: ResultPaths
    benchmarks: BenchmarkPlan
    retrieval: RetrievalPlan
    evaluation: EvaluationPlan
    controlled: ControlledPlan
    pairs: PairsPlan

    @classmethod
    def from_config(
        cls, raw: Mapping[str, Any], prompts_dir: Path, results: str = "results", check_environment: bool = True
    ) -> Plan:
        """The plan of a raw config (Snakemake's ``config``): typed, cross-checked and checked as a plan."""
        config = load_config(raw)
        if check_environment:
            check_installed(config)
        paths = ResultPaths(results, {variant: family for variant, (family, _) in config.controlled_variants.items()})
        parts = (BenchmarkPlan, RetrievalPlan, EvaluationPlan, ControlledPlan, PairsPlan)
        plan = cls(config, paths, *(part(config, paths, prompts_dir) for part in parts))
        check_plan(config, prompts_dir, results)
        return plan

    # --- caches ---------------------------------------------------------------------------------------------

    def cache_files(self) -> dict[str, str]:
        """Every cache file of the config by cache kind (posir.cache_shards.KINDS), those it switches off left out:
        what the run's start and end fold the shards of."""
        config = self.config
        files = {
            "embedding": config.embedding_cache,
            "score": config.score_cache,
            "translation": config.translation_cache,
            "llm-answer": (config.llm.cache_path if config.llm is not None else None) or "",
            "saliency": config.analyses.saliency.cache,
        }
        # rows are kept by multi-vector and sparse entries, and by a dense entry whose one pass gives them (BGE-M3)
        if config.embedding_cache and any(
            spec.encodes and (not spec.is_dense or reads_one_pass(spec)) for spec in config.models.values()
        ):
            from posir.token_cache import token_cache_path

            files["token-vector"] = str(token_cache_path(config.embedding_cache))
        return {kind: path for kind, path in files.items() if path}

    # --- wildcards ------------------------------------------------------------------------------------------

    def wildcard_constraints(self) -> dict[str, str]:
        """The global wildcard constraints: names the config defines, settings and languages by shape."""
        return {
            "kind": "corpus|queries",
            "setting": "[a-z]{3}-[a-z]{3}",
            "language": "[a-z]{3}",
            "model": names_regex([*self.config.models, *self.config.pipelines]),
            "benchmark": "[^/]+",
            # before a benchmark's tables and grids: a variant's family and a slash, or empty (benchmark_folder)
            "family": "|" + names_regex(f"{family}/" for family in self.controlled.families()),
            "collection": names_regex(self.config.text_collections),
            "text_set": "[^/]+",
            "source": "[^/]+",
            "published": "[^/]+",
            "table": "[^/]+",
            "comparison": names_regex(self.config.translation_comparisons),
        }

    def benchmarks_built_by(self, builder: str) -> str:
        """A wildcard regex matching exactly the benchmarks made by ``builder`` (a builder's name)."""
        assert builder in BUILDERS, builder
        return names_regex(n for n, e in self.config.benchmarks.items() if e.builder == builder)

    def models_regex(self) -> str:
        return names_regex(self.config.models)

    def pipelines_regex(self) -> str:
        return names_regex(self.config.pipelines)

    # --- what `snakemake` builds ------------------------------------------------------------------------------

    def targets(self) -> list[str]:
        """What ``rule all`` asks for: tables and figures of every evaluation, tests, analyses, paper tables and
        the translations something evaluates."""
        return [
            *self.evaluation_targets(),
            *self.significance_targets(),
            *self.analyses_targets(),
            *self.paper_targets(),
            *self.translation_targets(),
            *self.controlled.targets(),
            *self.evaluation.pooling_targets(),
            *self.evaluation.position_groups_targets(),
        ]

    def evaluation_targets(self) -> list[str]:
        paths, evaluation = self.paths, self.evaluation
        outputs = []
        # a spread family's variants have no tables or grids of their own: the family's distance tables hold them;
        # a benchmark whose queries have no evidence spans has its position groups' table only
        spread = self.controlled.spread_variants() | self.spanless_benchmarks()
        for name in sorted({e.benchmark for e in self.config.evaluations} - spread):
            main = paths.outputs(name, MAIN_TABLE)
            outputs += [main["csv"], main["markdown"]]
            if evaluation.is_multilingual(name):
                # one grid per setting; a grid of every model and setting would be unreadable
                outputs += [paths.outputs(name, LANGUAGES_TABLE)["markdown"]]
            else:
                outputs += [paths.grid(name)]
            if evaluation.one_vs_many(name):
                outputs += _csv_and_figure(paths.outputs(name, LANGUAGE_BIAS_TABLE))
            if name in self.config.exposure_benchmarks():
                exposure = paths.outputs(name, EXPOSURE_TABLES)
                outputs += [exposure["exposure_csv"], exposure["figure"]]
            if evaluation.score_origin_runs(name):
                outputs += _csv_and_figure(paths.outputs(name, SCORE_ORIGIN_TABLE))
            settings = sorted({str(e.setting) for e in evaluation.evaluations_of(name)})
            if len(settings) > 1:
                outputs += [paths.grid(name, s) for s in settings]
        variants = sorted(
            {self.config.query_variant(e.benchmark, e.setting.query_language) for e in self.config.evaluations} - spread
        )
        outputs += [paths.positions_figure(v) for v in variants]
        spanless = self.spanless_benchmarks()
        outputs += [
            paths.run_figure(e.benchmark, e.model, str(e.setting))
            for e in self.config.evaluations
            if e.benchmark not in spanless
        ]
        return outputs

    def spanless_benchmarks(self) -> set[str]:
        """Benchmarks whose queries' positions are group labels, without evidence spans (posq_import): what needs a
        span (relative bins, buckets' PSI, the grids, the paired tests by bucket) is not built for them."""
        return {name for name, entry in self.config.benchmarks.items() if entry.kind.spanless}

    def significance_targets(self) -> list[str]:
        skipped = self.controlled.spread_variants() | self.spanless_benchmarks()
        pairs = sorted({(e.benchmark, str(e.setting)) for e in self.config.evaluations if e.benchmark not in skipped})
        return [
            self.paths.significance(b, s, "markdown")
            for b, s in pairs
            if len(self.evaluation.compared_models(b, s)) > 1
        ]

    def analyses_targets(self) -> list[str]:
        analyses = self.config.analyses
        outputs = [self.paths.saliency_figure(b, m) for b, ms in analyses.saliency.runs.items() for m in ms]
        outputs += [self.paths.segments_figure(b, m) for b, ms in analyses.representation.runs.items() for m in ms]
        return outputs

    def paper_targets(self) -> list[str]:
        outputs = []
        for name in self.config.published:
            outputs += list(self.paths.published_table(name).values())
        for table in self.config.paper_tables:
            outputs += list(self.paths.paper_tables(table).values())
        return outputs

    def translation_targets(self) -> list[str]:
        # like every other benchmark, a translation is built by 'all' only when something evaluates it
        from posir import benchmark as fmt
        from posir.translate.spec import TranslationEntry

        evaluated = {e.benchmark for e in self.config.evaluations}
        outputs = [
            self.paths.benchmark_file(f"{name}-{lang}", fmt.CARD)
            for name, lang in self.config.translation_variants()
            if name in evaluated
        ]
        for name, entry in self.config.benchmarks.items():
            if isinstance(entry, TranslationEntry) and entry.judge is not None:
                outputs += list(self.paths.outputs(name, TRANSLATION_JUDGE_TABLE).values())
        for name in self.config.translation_comparisons:
            outputs += list(self.paths.outputs(name, TRANSLATION_COMPARISON_TABLE).values())
        return outputs


def _csv_and_figure(outputs: Mapping[str, str]) -> list[str]:
    """What 'all' asks of a table job that also draws: its CSV and its figure (the rest comes with them)."""
    return [outputs["csv"], outputs["figure"]]
