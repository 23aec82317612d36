"""Checks of a plan that need more than the config's own keys: the files it names, the models it loads.

They run when the workflow starts (:meth:`posir.plan.Plan.from_config`), so a setting that cannot work stops the
run before its first job, naming the entry and the key, not an hour in, after the first stage has encoded.
"""

from __future__ import annotations

from pathlib import Path

from posir.builders.generation import GenerationBenchmark
from posir.config import WorkflowConfig
from posir.schema import ConfigError, KeyProblem
from posir.scorers.spec import BiEncoderSpec, LLMGradeSpec, RescoreSpec
from posir.translate.spec import LLMTranslationSpec, TranslationEntry

#: The prompts each generation stage reads (prompts/<name>.md).
GENERATION_PROMPTS = ("generate_queries", "locate_span", "grade_relevance")


def check_plan(config: WorkflowConfig, prompts_dir: Path, results: str = "results") -> None:
    """Refuse a plan whose pipelines, windows, prompt files or exposure attributes cannot work, naming the key and
    the fix."""
    try:
        _check_pipelines(config)
        _check_windows(config)
        _check_prompts(config, prompts_dir)
        _check_exposure_attributes(config, Path(results))
    except KeyProblem as problem:
        raise ConfigError(f"config: {problem}") from None


def _evaluated_pipelines(config: WorkflowConfig) -> list[str]:
    return sorted({e.model for e in config.evaluations if config.is_pipeline(e.model)})


def _check_pipelines(config: WorkflowConfig) -> None:
    for evaluation in config.evaluations:
        if not config.is_pipeline(evaluation.model):
            continue
        pipeline, top_k = config.pipelines[evaluation.model], config.top_k(evaluation.benchmark)
        if pipeline.depth > top_k:
            raise KeyProblem(
                f"pipelines.{evaluation.model}.depth",
                f"{pipeline.depth} is deeper than the first stage's runs on {evaluation.benchmark} "
                f"(top_k: {top_k}), so the depth could never be reached",
                f"lower the depth, or raise retrieval.top_k or benchmarks.{evaluation.benchmark}.top_k",
            )


def _check_windows(config: WorkflowConfig) -> None:
    """Configured windows fit what one pass of their model reads (the defaults fit by construction)."""
    from posir.models.registry import load_encoder
    from posir.windows import default_window

    checked: dict[str, int | None] = {}

    def budget(model: str) -> int | None:
        if model not in checked:
            checked[model] = load_encoder(config.models[model]).window_budget("document")
        return checked[model]

    for name in _evaluated_pipelines(config):
        scorer = config.scorers[config.pipelines[name].second_stage]
        if isinstance(scorer, BiEncoderSpec | RescoreSpec) and scorer.window_tokens is not None:
            try:
                default_window(budget(scorer.model), scorer.window_tokens, scorer.stride_tokens)
            except KeyProblem as problem:
                raise KeyProblem(f"scorers.{scorer.name}.{problem.key}", problem.problem) from None
    evaluated = {e.model for e in config.evaluations}
    for name, spec in config.models.items():
        if name in evaluated and spec.is_chunked and spec.window_tokens is not None:
            try:
                default_window(budget(name), spec.window_tokens, spec.stride_tokens)
            except KeyProblem as problem:
                raise KeyProblem(f"models.{name}.{problem.key}", problem.problem) from None


def _check_prompts(config: WorkflowConfig, prompts_dir: Path) -> None:
    """Every prompt an evaluated LLM stage reads is a file under prompts/."""
    wanted: list[tuple[str, str]] = []
    for name in _evaluated_pipelines(config):
        scorer = config.scorers[config.pipelines[name].second_stage]
        if isinstance(scorer, LLMGradeSpec):
            wanted += [
                (f"scorers.{scorer.name}.prompt", scorer.prompt),
                (f"scorers.{scorer.name}.grade_prompt", scorer.grade_prompt),
            ]
    for name, entry in config.benchmarks.items():
        if isinstance(entry, GenerationBenchmark):
            wanted += [(f"benchmarks.{name}.generation", prompt) for prompt in GENERATION_PROMPTS]
        if isinstance(entry, TranslationEntry):
            for language, spec in entry.languages.items():
                if isinstance(spec, LLMTranslationSpec):
                    wanted.append((f"benchmarks.{name}.translations.{language}.prompt", spec.prompt))
            if entry.judge is not None:
                wanted.append((f"benchmarks.{name}.judge.prompt", entry.judge.prompt))
    for key, prompt in wanted:
        path = prompts_dir / f"{prompt}.md"
        if not path.is_file():
            raise KeyProblem(
                key, f"the prompt file {path} does not exist", f"add it, or name a prompt under {prompts_dir}"
            )


def _check_exposure_attributes(config: WorkflowConfig, results: Path) -> None:
    """Every exposure attribute is a column the benchmark's documents have: one every builder writes, a derived one
    (language, provenance), or one of the documents.tsv files already there (an imported benchmark's own)."""
    from posir.benchmark import DOCUMENT_FIELDS, DOCUMENTS
    from posir.languages import Setting
    from posir.metrics.exposure import DERIVED_ATTRIBUTES

    for name, entry in config.exposure_benchmarks().items():
        known = {*DOCUMENT_FIELDS, *DERIVED_ATTRIBUTES} - {"doc_id"}
        settings = {e.setting for e in config.evaluations if e.benchmark == name}
        variants = {v for s in settings for v in config.setting_variants(name, Setting.parse(str(s)))[1]}
        for variant in sorted(variants):
            table = results / "benchmarks" / variant / DOCUMENTS
            if table.is_file():
                with open(table, encoding="utf-8") as handle:
                    known |= set(handle.readline().rstrip("\n").split("\t")) - {"doc_id"}
        for attribute in entry.attributes:
            if attribute not in known:
                raise KeyProblem(
                    f"exposure.benchmarks.{name}.attributes",
                    f"'{attribute}' is no attribute of the documents of '{name}'",
                    f"use one of {sorted(known)}",
                )
