"""Planning evaluation: scoring runs, tables and figures per benchmark and setting, paired tests, analyses,
published results and paper tables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.config import Evaluation, WorkflowConfig
from posir.controlled.family import CONTROLLED_TABLE
from posir.languages import ONE_VS_MANY, Setting
from posir.metrics.groupings import RelativeBins
from posir.models.backends.mteb import public_model
from posir.models.declarations.readings import NO_DENSE_SIBLING, SIBLING_NOT_EVALUATED, is_unpooled, pooling_pairs
from posir.plan.base import Part, names_regex, scaled_mem_mb
from posir.plan.controlled import natural_runs, spread_families
from posir.plan.jobs import (
    ExposureCorpus,
    ExposureJob,
    LanguageBiasJob,
    MtebModelJob,
    MtebTaskJob,
    PanelsJob,
    PaperTablesJob,
    PoolingJob,
    PositionGroupsJob,
    PublishedJob,
    RepresentationJob,
    RunAnalysisJob,
    SaliencyJob,
    ScoreJob,
    ScoreOriginJob,
    SettingTablesJob,
)
from posir.published import BUNDLED_GROUP_TABLES, group_table_path
from posir.results.paths import ANALYSED

#: Documents per query the one-vs-many language bias counts (the top of each run).
LANGUAGE_BIAS_DEPTH = 100
#: Runs one analysis job takes at most (posir.steps.evaluation.analyse_runs: a few seconds each). A benchmark's runs
#: are analysed in parts, side by side, and a run added to the config re-analyses its part only.
ANALYSIS_PART_RUNS = 16


@dataclass(frozen=True)
class RunAnalysis:
    """Runs of one benchmark whose summaries, trend tests and position figures one job writes.

    One job for many runs, not one per run: the trend tests need scipy's statistics and the figure matplotlib, about
    a CPU-second of imports that each run's own job paid before (perf/script_startup.py). A Snakemake rule's outputs
    follow from its wildcards, so each part has a rule of its own (rules/evaluation.smk), named by
    :meth:`EvaluationPlan.run_analyses`.
    """

    benchmark: str
    part: int
    runs: tuple[Evaluation, ...]

    def labels(self) -> list[tuple[str, str]]:
        """(model, setting) of each run."""
        return [(e.model, str(e.setting)) for e in self.runs]

    def log_key(self) -> str:
        return f"{self.benchmark}/{self.part}"


def _in_parts(runs: list[Evaluation]) -> list[list[Evaluation]]:
    return [runs[i : i + ANALYSIS_PART_RUNS] for i in range(0, len(runs), ANALYSIS_PART_RUNS)]


def runs_beside(config: WorkflowConfig) -> list[tuple[str, str, str]]:
    """(benchmark, model, setting) of the runs made beside the evaluations, for what reads them: a pipeline's first
    stage, the natural run of each (model, setting) a move or insert family evaluates
    (:func:`posir.plan.controlled.natural_runs`), the runs a translation comparison sets side by side
    (:func:`posir.config.comparison_rows`)."""
    from posir.config import comparison_rows

    beside = [
        (e.benchmark, config.pipelines[e.model].first_stage, str(e.setting))
        for e in config.evaluations
        if config.is_pipeline(e.model)
    ]
    for family in config.controlled_evaluations:
        beside += natural_runs(config, family)
    for comparison in config.translation_comparisons:
        beside += [(r["benchmark"], r["model"], r["setting"]) for r in comparison_rows(config, comparison)]
    return beside


class EvaluationPlan(Part):
    """What each run, benchmark and setting is scored and summarised by."""

    # --- the evaluations of a benchmark or a setting ------------------------------------------------------

    def evaluations_of(self, benchmark: str) -> list[Evaluation]:
        return self.config.evaluations_by_benchmark.get(benchmark, [])

    def evaluations_of_setting(self, benchmark: str, setting: str) -> list[Evaluation]:
        return [e for e in self.evaluations_of(benchmark) if str(e.setting) == setting]

    def aggregate_file(self, evaluation: Evaluation, suffix: str) -> str:
        return self.paths.aggregate(evaluation.benchmark, evaluation.model, str(evaluation.setting), suffix)

    def aggregates_of_benchmark(self, suffix: str) -> Any:
        def files(wildcards: Any) -> list[str]:
            return [self.aggregate_file(e, suffix) for e in self.evaluations_of(wildcards.benchmark)]

        return files

    def aggregates_of_setting(self, suffix: str) -> Any:
        def files(wildcards: Any) -> list[str]:
            return [
                self.aggregate_file(e, suffix)
                for e in self.evaluations_of_setting(wildcards.benchmark, wildcards.setting)
            ]

        return files

    def one_vs_many(self, benchmark: str) -> list[Evaluation]:
        return [e for e in self.evaluations_of(benchmark) if e.setting.corpus_language == ONE_VS_MANY]

    def is_multilingual(self, benchmark: str) -> bool:
        return len({str(e.setting) for e in self.evaluations_of(benchmark)}) > 1

    # --- scoring a run --------------------------------------------------------------------------------------

    def score_inputs(self, wildcards: Any) -> dict[str, str]:
        setting = Setting.parse(wildcards.setting)
        query_dir = self.config.query_variant(wildcards.benchmark, setting.query_language)
        run = self.paths.run(wildcards.benchmark, wildcards.model, wildcards.setting)
        inputs = {
            "qrels": self.paths.benchmark_file(query_dir, fmt.QRELS),
            "positions": self.paths.benchmark_file(query_dir, fmt.POSITIONS),
            "run": run,
        }
        if self.config.is_pipeline(wildcards.model):
            # a pipeline may rerank a sample of the queries
            inputs["evaluated"] = self.paths.reranked_queries(wildcards.benchmark, wildcards.model, wildcards.setting)
            return inputs
        corpora = self.config.corpus_variants(wildcards.benchmark, setting.corpus_language)
        if self.config.models[wildcards.model].is_dense and len(corpora) == 1:
            inputs["corpus_embeddings"] = self.paths.embeddings(
                self.config.embedding_model(wildcards.model), corpora[0], "corpus"
            )
        return inputs

    def first_stage_score_inputs(self, wildcards: Any) -> dict[str, str]:
        """What scoring a first stage's run reads besides the run its own job writes."""
        return {name: path for name, path in self.score_inputs(wildcards).items() if name != "run"}

    def score(self, wildcards: Any) -> ScoreJob:
        setting = Setting.parse(wildcards.setting)
        prefixes = self.config.query_languages(wildcards.benchmark) if setting.corpus_language == ONE_VS_MANY else []
        return ScoreJob(id_prefixes=prefixes, metrics=self.config.metrics)

    # --- analysing a benchmark's runs: their summaries, trend tests and position figures -----------------------

    @cached_property
    def run_analyses(self) -> dict[str, RunAnalysis]:
        """Every run whose summary, trend tests or figure something reads, in parts of at most
        :data:`ANALYSIS_PART_RUNS` runs of one benchmark, by the name of the rule that analyses them
        (``analyse_runs_<benchmark>_<part>``, the benchmark's characters outside a Python name as ``_``).

        A benchmark's evaluations come first, in config order; then, in parts of their own (so that a table of the
        evaluations never waits for them), the runs read beside them (:func:`runs_beside`).
        """
        evaluated = [(e.benchmark, e.model, str(e.setting)) for e in self.config.evaluations]
        beside = runs_beside(self.config)
        groups: dict[tuple[str, bool], list[Evaluation]] = {}
        evaluated_runs = set(evaluated)
        for benchmark, model, setting in dict.fromkeys(evaluated + beside):
            key = (benchmark, (benchmark, model, setting) not in evaluated_runs)
            groups.setdefault(key, []).append(Evaluation(benchmark, model, Setting.parse(setting)))
        analyses: dict[str, RunAnalysis] = {}
        prefixes: dict[str, str] = {}
        for benchmark, _ in sorted(groups):
            if benchmark in prefixes:
                continue
            prefix = "analyse_runs_" + re.sub(r"\W", "_", benchmark)
            while prefix in prefixes.values():
                prefix += "_"
            prefixes[benchmark] = prefix
            # the evaluations' parts first, then those of the runs read beside them
            parts = _in_parts(groups.get((benchmark, False), [])) + _in_parts(groups.get((benchmark, True), []))
            for number, part in enumerate(parts, 1):
                analyses[f"{prefix}_{number}"] = RunAnalysis(benchmark, number, tuple(part))
        return analyses

    def run_analysis_inputs(self, analysis: RunAnalysis) -> dict[str, list[str]]:
        """What each run's own job wrote, in the analysis' order."""
        return {
            "per_query": [self.paths.scores(e.benchmark, e.model, str(e.setting)) for e in analysis.runs],
            "bins": [self.aggregate_file(e, "bins") for e in analysis.runs],
            "bands": [self.aggregate_file(e, "bootstrap_bins") for e in analysis.runs],
        }

    def run_analysis_outputs(self, analysis: RunAnalysis) -> dict[str, list[str]]:
        """Each run's summary and trend tests (its position figure: :meth:`RunAnalysis.labels`)."""
        return {name: [self.aggregate_file(e, suffix) for e in analysis.runs] for name, suffix in ANALYSED.items()}

    def run_analysis(self, analysis: RunAnalysis) -> Any:
        """The job of an analysis rule: a function of (no) wildcards, as rules take it."""

        def make(_wildcards: Any) -> RunAnalysisJob:
            return RunAnalysisJob(
                benchmark=analysis.benchmark,
                runs=analysis.labels(),
                languages_outside_model=[self.config.languages_outside_model(e) for e in analysis.runs],
                metrics=self.config.metrics,
            )

        return make

    # --- position groups: a benchmark's runs by its grouping (Zeng et al.'s Table 1) ---------------------------

    def position_group_names(self) -> list[str]:
        """The evaluated benchmarks whose position-group table the run builds: those grouped otherwise than by
        PosIR's relative bins (whose tables are the main ones) or shown beside published rows."""
        names = []
        for name in sorted({e.benchmark for e in self.config.evaluations}):
            entry = self.config.benchmarks.get(name)
            if entry is not None and (not isinstance(entry.positions, RelativeBins) or entry.published_rows):
                names.append(name)
        return names

    def position_groups_targets(self) -> list[str]:
        return [path for name in self.position_group_names() for path in self.paths.position_groups(name).values()]

    def position_groups_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        """Every run's per-query scores, and the published tables that are files of the user's (bundled ones are the
        package's)."""
        entry = self.config.benchmarks[wildcards.benchmark]
        files = [group_table_path(table) for table in entry.published_rows]
        runs = self.evaluations_of(entry.name)
        return {
            "scores": [self.paths.scores(e.benchmark, e.model, str(e.setting)) for e in runs],
            "published": [str(f) for f in files if f.parent != BUNDLED_GROUP_TABLES],
        }

    def position_groups(self, wildcards: Any) -> PositionGroupsJob:
        entry = self.config.benchmarks[wildcards.benchmark]
        return PositionGroupsJob(
            benchmark=entry.name,
            runs=[(e.model, str(e.setting)) for e in self.evaluations_of(entry.name)],
            grouping=entry.positions,
            published_rows=dict(entry.published_rows),
            metrics=self.config.metrics,
        )

    # --- export: MTEB's results format (posir.mteb_results) -------------------------------------------------

    def mteb_export_targets(self) -> list[str]:
        """Every (model, benchmark) TaskResult and every model's metadata: what ``snakemake mteb_export`` builds."""
        pairs = sorted({(e.model, e.benchmark) for e in self.config.evaluations})
        tasks = [self.paths.mteb_task_result(model, benchmark) for model, benchmark in pairs]
        return tasks + [self.paths.mteb_model_meta(model) for model in sorted({model for model, _ in pairs})]

    def _runs_of(self, benchmark: str, model: str) -> list[Evaluation]:
        return sorted((e for e in self.evaluations_of(benchmark) if e.model == model), key=lambda e: str(e.setting))

    def mteb_task_inputs(self, wildcards: Any) -> dict[str, Any]:
        runs = self._runs_of(wildcards.benchmark, wildcards.model)
        variants = {
            variant
            for e in runs
            for query, corpus in [self.config.setting_variants(e.benchmark, e.setting)]
            for variant in (query, *corpus)
        }
        return {
            "cards": [self.paths.benchmark_file(variant, fmt.CARD) for variant in sorted(variants)],
            "per_query": [self.paths.scores(e.benchmark, e.model, str(e.setting)) for e in runs],
            **{suffix: [self.aggregate_file(e, suffix) for e in runs] for suffix in ("summary", "bootstrap", "bins")},
        }

    def mteb_task(self, wildcards: Any) -> MtebTaskJob:
        entry = self.config.benchmarks.get(wildcards.benchmark)
        grouped = entry is not None and not isinstance(entry.positions, RelativeBins)
        return MtebTaskJob(
            settings=[str(e.setting) for e in self._runs_of(wildcards.benchmark, wildcards.model)],
            measures=list(self.config.metrics.measures),
            grouping=entry.positions if grouped else None,  # type: ignore[union-attr]
            metrics=self.config.metrics if grouped else None,
        )

    def mteb_model(self, wildcards: Any) -> MtebModelJob:
        spec = self.config.models.get(wildcards.model)
        if spec is None:  # a pipeline
            return MtebModelJob(entry=wildcards.model)
        languages = list(spec.languages) if spec.languages else None
        return MtebModelJob(entry=wildcards.model, adapted_from=public_model(spec), languages=languages)

    # --- tables and figures of a benchmark ----------------------------------------------------------------

    def panels(self, wildcards: Any) -> PanelsJob:
        return PanelsJob(
            panels=[(e.model, str(e.setting)) for e in self.evaluations_of(wildcards.benchmark)],
            metrics=self.config.metrics.tables(),
        )

    def setting_tables(self, wildcards: Any) -> SettingTablesJob:
        models = [e.model for e in self.evaluations_of_setting(wildcards.benchmark, wildcards.setting)]
        return SettingTablesJob(
            models=models,
            compared=self.compared_models(wildcards.benchmark, wildcards.setting),
            metrics=self.config.metrics,
        )

    def one_vs_many_runs(self, wildcards: Any) -> list[str]:
        return [self.paths.run(e.benchmark, e.model, str(e.setting)) for e in self.one_vs_many(wildcards.benchmark)]

    # --- who gets seen: exposure by document group (posir.steps.exposure) ---------------------------------------

    def exposure_runs(self, benchmark: str) -> list[Evaluation]:
        """The runs whose exposure is compared: every model and setting of the benchmark answering every query."""
        settings = {str(e.setting) for e in self.evaluations_of(benchmark)}
        return [
            e
            for setting in sorted(settings)
            for e in self.evaluations_of_setting(benchmark, setting)
            if e.model in self.compared_models(benchmark, setting)
        ]

    def _exposure_settings(self, benchmark: str) -> list[str]:
        return sorted({str(e.setting) for e in self.exposure_runs(benchmark)})

    def _corpus_of(self, benchmark: str, setting: str) -> list[tuple[str, str]]:
        """(benchmark directory, language) of each part of a setting's corpus: every language's for one-vs-many."""
        corpus_language = Setting.parse(setting).corpus_language
        languages = self.config.query_languages(benchmark) if corpus_language == ONE_VS_MANY else [corpus_language]
        return [(v, language) for language in languages for v in self.config.corpus_variants(benchmark, language)]

    def _exposure_entry(self, benchmark: str) -> Any:
        entries = self.config.exposure_benchmarks()
        if benchmark not in entries:
            raise ValueError(
                f"results/tables/{benchmark}/exposure.csv: benchmark '{benchmark}' has no exposure entry this config "
                f"evaluates; add exposure.benchmarks.{benchmark}.attributes to config.yaml (entries: {sorted(entries)})"
            )
        return entries[benchmark]

    def exposure_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        benchmark = wildcards.benchmark
        self._exposure_entry(benchmark)
        settings = self._exposure_settings(benchmark)
        variants = [v for s in settings for v, _ in self._corpus_of(benchmark, s)]
        return {
            "runs": [self.paths.run(e.benchmark, e.model, str(e.setting)) for e in self.exposure_runs(benchmark)],
            "qrels": [
                self.paths.benchmark_file(self.config.setting_variants(benchmark, Setting.parse(s))[0], fmt.QRELS)
                for s in settings
            ],
            "documents": [self.paths.benchmark_file(v, fmt.DOCUMENTS) for v in variants],
            "cards": [self.paths.benchmark_file(v, fmt.CARD) for v in variants],
        }

    def exposure(self, wildcards: Any) -> ExposureJob:
        benchmark = wildcards.benchmark
        entry, params = self._exposure_entry(benchmark), self.config.exposure
        corpora = []
        for setting in self._exposure_settings(benchmark):
            one_vs_many = Setting.parse(setting).corpus_language == ONE_VS_MANY
            languages = [language for _, language in self._corpus_of(benchmark, setting)]
            corpora.append(ExposureCorpus(setting=setting, languages=languages, one_vs_many=one_vs_many))
        return ExposureJob(
            runs=[(e.model, str(e.setting)) for e in self.exposure_runs(benchmark)],
            corpora=corpora,
            attributes=list(entry.attributes),
            targets={attribute: dict(shares) for attribute, shares in entry.targets.items()},
            compare=[tuple(pair) for pair in entry.compare],
            measures=list(params.measures),
            bootstrap=self.config.metrics.bootstrap,
        )

    def language_bias(self, wildcards: Any) -> LanguageBiasJob:
        return LanguageBiasJob(
            runs=[(e.model, e.setting.query_language) for e in self.one_vs_many(wildcards.benchmark)],
            depth=LANGUAGE_BIAS_DEPTH,
        )

    # --- paired tests between the models of a setting -------------------------------------------------------

    def compared_models(self, benchmark: str, setting: str) -> list[str]:
        """The models of a (benchmark, setting) that answer every query; a pipeline reranking a sample is left out."""
        return [
            e.model
            for e in self.evaluations_of_setting(benchmark, setting)
            if not (self.config.is_pipeline(e.model) and self.config.pipelines[e.model].sample)
        ]

    def compared_scores(self, wildcards: Any) -> list[str]:
        return [
            self.paths.scores(wildcards.benchmark, m, wildcards.setting)
            for m in self.compared_models(wildcards.benchmark, wildcards.setting)
        ]

    # --- analyses -------------------------------------------------------------------------------------------

    def analysis_inputs(self, wildcards: Any) -> dict[str, str]:
        files = {
            name: self.paths.benchmark_file(wildcards.benchmark, filename)
            for name, filename in (
                ("positions", fmt.POSITIONS),
                ("documents", fmt.DOCUMENTS),
                ("queries", fmt.QUERIES),
                ("corpus", fmt.CORPUS),
            )
        }
        return {**files, **self.converted_inputs([wildcards.model])}

    def saliency(self, wildcards: Any) -> SaliencyJob:
        return SaliencyJob(model=self.config.models[wildcards.model], section=self.config.analyses.saliency)

    def representation(self, wildcards: Any) -> RepresentationJob:
        return RepresentationJob(
            model=self.config.models[wildcards.model],
            section=self.config.analyses.representation,
            metrics=self.config.metrics.tables(),
            cache=self.config.embedding_cache,
        )

    # --- where the score comes from: multi-vector and sparse entries (posir.analyses.score_origin) ----------------

    def score_origin_runs(self, benchmark: str) -> list[Evaluation]:
        """The runs whose scores are taken apart (:meth:`~posir.plan.base.Part.scores_taken_apart`)."""
        runs = [e for e in self.evaluations_of(benchmark) if self.scores_taken_apart(e)]
        return sorted(runs, key=lambda e: (e.model, str(e.setting)))

    def score_origin_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        inputs: dict[str, list[str]] = {"positions": [], "queries": [], "corpus": []}
        for e in self.score_origin_runs(wildcards.benchmark):
            query_dir = self.config.query_variant(e.benchmark, e.setting.query_language)
            (corpus_dir,) = self.config.corpus_variants(e.benchmark, e.setting.corpus_language)
            inputs["positions"].append(self.paths.benchmark_file(query_dir, fmt.POSITIONS))
            inputs["queries"].append(self.encoded_file(e.model, query_dir, "queries"))
            inputs["corpus"].append(self.encoded_file(e.model, corpus_dir, "corpus"))
        return inputs

    def score_origin(self, wildcards: Any) -> ScoreOriginJob:
        runs = self.score_origin_runs(wildcards.benchmark)
        return ScoreOriginJob(
            runs=[(e.model, str(e.setting)) for e in runs],
            model_outputs=[self.config.models[e.model].output for e in runs],
            metrics=self.config.metrics.tables(),
            bootstrap=self.config.metrics.bootstrap,
        )

    def score_origin_mem_mb(self, wildcards: Any, input: Any) -> int:  # noqa: A002 - Snakemake's name
        """Python, pandas and matplotlib (about 300 MB) and one run's memory-mapped files at a time, which the
        positives' rows may touch whole."""
        run_mb = max(
            (sum(Path(p).stat().st_size for p in pair) / 2**20 for pair in zip(input.queries, input.corpus)),
            default=0.0,
        )
        return scaled_mem_mb(300, 1, run_mb)

    def analysis_mem_mb(self, extra: int) -> Any:
        def mem_mb(wildcards: Any) -> int:
            return self.config.models[wildcards.model].mem_mb + extra

        return mem_mb

    # --- pooling or encoder: a dense entry beside its unpooled token-vector reading (posir.metrics.pooling) -------

    def _pooling_evaluations(self, name: str) -> list[Evaluation]:
        """A natural benchmark's evaluations, or every variant's of a controlled family."""
        return self.config.controlled_evaluations.get(name) or self.evaluations_of(name)

    def pooling_runs(self, name: str) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        """(setting, pooled, unpooled) of every pair (posir.models.declarations.readings) whose two entries ``name``
        evaluates in a setting, and (unpooled, setting, reason) of every evaluated unpooled entry left without a pair
        there."""
        pairs, _ = pooling_pairs(self.config.models)
        evaluated = {(e.model, str(e.setting)) for e in self._pooling_evaluations(name)}
        found, unpaired = [], []
        for model, setting in sorted(evaluated):
            spec = self.config.models.get(model)
            if spec is None or not is_unpooled(spec):
                continue
            siblings = [p.pooled for p in pairs if p.unpooled == model]
            paired = [pooled for pooled in siblings if (pooled, setting) in evaluated]
            found += [(setting, pooled, model) for pooled in paired]
            if not paired:
                unpaired.append((model, setting, SIBLING_NOT_EVALUATED if siblings else NO_DENSE_SIBLING))
        return found, unpaired

    def pooling_names(self) -> list[str]:
        """The natural benchmarks and controlled families whose pooling table is built: those evaluating an unpooled
        entry, once the config evaluates at least one pair somewhere (else nothing asks for the comparison). A spread
        family has none: its cells are no positions of one evidence span (its multi-vector entries' reading is each
        piece's share of the score, in its distance tables)."""
        families = set(self.config.controlled_evaluations) - set(spread_families(self.config))
        names = sorted(
            {e.benchmark for e in self.config.evaluations if e.benchmark not in self.config.controlled_variants}
            | families
        )
        runs = {name: self.pooling_runs(name) for name in names}
        if not any(found for found, _ in runs.values()):
            return []
        return [name for name, (found, unpaired) in runs.items() if found or unpaired]

    def pooling_regex(self) -> str:
        return names_regex(self.pooling_names())

    def pooling_targets(self) -> list[str]:
        return [self.paths.table(name, f"pooling.{ext}") for name in self.pooling_names() for ext in ("csv", "md")]

    def _pooling_scored(self, name: str) -> list[Evaluation]:
        found, _ = self.pooling_runs(name)
        kept = {(model, setting) for setting, *models in found for model in models}
        return [e for e in self._pooling_evaluations(name) if (e.model, str(e.setting)) in kept]

    def pooling_inputs(self, wildcards: Any) -> dict[str, list[str]]:
        """The per-query scores of both entries of every pair, and for a family each variant's controlled.tsv."""
        runs = self._pooling_scored(wildcards.benchmark)
        inputs = {"scores": [self.paths.scores(e.benchmark, e.model, str(e.setting)) for e in runs]}
        if wildcards.benchmark in self.config.controlled_evaluations:
            inputs["controlled"] = [self.paths.benchmark_file(e.benchmark, CONTROLLED_TABLE) for e in runs]
        return inputs

    def pooling(self, wildcards: Any) -> PoolingJob:
        found, unpaired = self.pooling_runs(wildcards.benchmark)
        return PoolingJob(
            pairs=found,
            unpaired=unpaired,
            runs=[(e.benchmark, e.model, str(e.setting)) for e in self._pooling_scored(wildcards.benchmark)],
            controlled=wildcards.benchmark in self.config.controlled_evaluations,
            metrics=self.config.metrics,
        )

    # --- published results and paper tables -----------------------------------------------------------------

    def published_file(self, name: str) -> str:
        """The file a 'published' entry reads: its source's fetched copy, or its local path."""
        entry = self.config.published[name]
        if entry.source is not None:
            return self.paths.source(entry.source, self.config.sources[entry.source].filename)
        assert entry.path is not None
        return entry.path

    def published_input(self, wildcards: Any) -> str:
        return self.published_file(wildcards.published)

    def published(self, wildcards: Any) -> PublishedJob:
        return PublishedJob(entry=self.config.published[wildcards.published], metrics=self.config.metrics.tables())

    def paper_evaluations(self, table: str) -> list[Evaluation]:
        benchmarks = self.config.paper_tables[table].benchmarks
        return [e for e in self.config.evaluations if e.benchmark in benchmarks]

    def paper_summaries(self, wildcards: Any) -> list[str]:
        return [self.aggregate_file(e, "summary") for e in self.paper_evaluations(wildcards.table)]

    def paper_published_files(self, wildcards: Any) -> list[str]:
        return [self.published_file(name) for name in self.config.paper_tables[wildcards.table].published]

    def paper_tables(self, wildcards: Any) -> PaperTablesJob:
        entry = self.config.paper_tables[wildcards.table]
        return PaperTablesJob(
            entry=entry,
            summary_keys=[(e.benchmark, e.model, str(e.setting)) for e in self.paper_evaluations(wildcards.table)],
            published={name: self.config.published[name] for name in entry.published},
            reference=self.config.references[entry.reference] if entry.reference else None,
            metrics=self.config.metrics.tables(),
        )
