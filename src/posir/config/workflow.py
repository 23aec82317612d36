"""The whole ``config.yaml``, typed once and cross-checked: :class:`WorkflowConfig`, and :func:`load_config`, the
one way in.

A raw mapping (what Snakemake's ``config`` holds, or a YAML file) becomes a frozen :class:`WorkflowConfig` or a
:class:`ConfigError` whose lines name the key, the value and the fix. The config answers the questions the plan
and the steps share: the benchmarks' languages, variants and corpora and the evaluations (its
:class:`~posir.config.topology.BenchmarkTopology`), and what a model or a pipeline declares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from pydantic import ValidationError, model_validator

from posir.config.checks import check_references, scorer_model
from posir.config.sections import ConfigSections
from posir.config.topology import Evaluation
from posir.controlled.spec import ControlledBenchmark, VariantKey
from posir.languages import Setting, macrolanguage
from posir.llm.config import LLMConfig
from posir.metrics.exposure import ExposureBenchmark
from posir.schema import ConfigError, explain


class WorkflowConfig(ConfigSections):
    """posir-workflow configuration: everything an experiment changes (machine settings go to profiles)."""

    @model_validator(mode="after")
    def _cross_references(self) -> Self:
        check_references(self)
        return self

    # --- benchmarks, their languages and corpora (the topology's answers) --------------------------------------

    @property
    def controlled_variants(self) -> dict[str, tuple[str, VariantKey]]:
        """Every controlled variant the config defines: its name -> (its family, its key)."""
        return self.topology.controlled_variants

    def family_of(self, variant: str) -> ControlledBenchmark:
        return self.topology.family_of(variant)

    def query_languages(self, benchmark: str) -> list[str]:
        """Languages ``benchmark`` has queries in (ISO 639-3)."""
        return self.topology.query_languages(benchmark)

    def query_variant(self, benchmark: str, language: str) -> str:
        """Directory name under ``benchmarks/`` holding ``benchmark``'s queries in ``language``."""
        return self.topology.query_variant(benchmark, language)

    def corpus_from(self, benchmark: str) -> str | None:
        """The benchmark whose corpus ``benchmark``'s queries search, when not its own."""
        return self.topology.corpus_from(benchmark)

    def corpus_languages(self, benchmark: str) -> list[str]:
        return self.topology.corpus_languages(benchmark)

    def setting_variants(self, benchmark: str, setting: Setting) -> tuple[str, list[str]]:
        """The directories under ``benchmarks/`` of a setting: its queries' and its corpus's (several: one-vs-many)."""
        return self.topology.setting_variants(benchmark, setting)

    def corpus_variants(self, benchmark: str, language: str) -> list[str]:
        """Benchmark directories whose ``corpus.jsonl`` form the corpus of a setting in ``language`` (``mul``: the
        union of every language's parallel corpus)."""
        return self.topology.corpus_variants(benchmark, language)

    def setting_languages(self, benchmark: str, setting: Setting) -> list[str]:
        """Every language a setting's queries and documents are in (a one-vs-many corpus: all of them)."""
        return self.topology.setting_languages(benchmark, setting)

    def separator(self, benchmark: str) -> str:
        """The paragraph separator of a benchmark's documents."""
        return self.topology.separator(benchmark)

    def translation_variants(self) -> list[tuple[str, str]]:
        """(benchmark, language) of every translated variant the config defines."""
        return self.topology.translation_variants()

    @property
    def evaluations(self) -> list[Evaluation]:
        """Every (benchmark, model, setting) of the evaluation blocks, in config order; a block naming a controlled
        family evaluates each of its variants."""
        return self.topology.evaluations

    @property
    def controlled_evaluations(self) -> dict[str, list[Evaluation]]:
        """Per controlled family, the evaluations of its variants."""
        return self.topology.controlled_evaluations

    @property
    def evaluations_by_benchmark(self) -> dict[str, list[Evaluation]]:
        """The evaluations grouped by benchmark, each group in config order (an index for per-job lookups)."""
        return self.topology.evaluations_by_benchmark

    def exposure_benchmarks(self) -> dict[str, ExposureBenchmark]:
        """The exposure entries of evaluated benchmarks, each with the pairs whose two models it evaluates (a
        narrowed config, a test's, evaluates fewer)."""
        evaluated: dict[str, set[str]] = {}
        for e in self.evaluations:
            evaluated.setdefault(e.benchmark, set()).add(e.model)
        return {
            name: entry.model_copy(update={"compare": tuple(p for p in entry.compare if set(p) <= evaluated[name])})
            for name, entry in self.exposure.benchmarks.items()
            if name in evaluated
        }

    def top_k(self, benchmark: str) -> int:
        """How many documents each query's run of ``benchmark`` (or of a controlled variant of it) keeps: the
        benchmark's own ``top_k``, else ``retrieval.top_k``."""
        name = self.controlled_variants[benchmark][0] if benchmark in self.controlled_variants else benchmark
        entry = self.benchmarks.get(name)
        return getattr(entry, "top_k", None) or self.retrieval.top_k

    # --- models, pipelines -----------------------------------------------------------------------------------

    def is_pipeline(self, name: str) -> bool:
        """A name of an evaluation block is a model (``models:``) or a reranking pipeline (``pipelines:``)."""
        return name in self.pipelines

    def embedding_model(self, model: str) -> str:
        """The model entry whose cached embeddings ``model`` searches (itself, or its ``embeddings_from``)."""
        return self.models[model].embeddings_from or model

    def declared_languages(self, name: str) -> list[str] | None:
        """A model's ``languages``; a pipeline's are those both its stages declare (None: no declaration)."""
        if not self.is_pipeline(name):
            declared = self.models[name].languages
            return None if declared is None else list(declared)
        pipeline = self.pipelines[name]
        lists = [self.declared_languages(pipeline.first_stage)]
        scorer = self.scorers.get(pipeline.second_stage)
        model = None if scorer is None else scorer_model(scorer)
        if model in self.models:
            lists.append(self.declared_languages(model))
        known = [set(found) for found in lists if found is not None]
        return sorted(set.intersection(*known)) if known else None

    def languages_outside_model(self, evaluation: Evaluation) -> list[str]:
        """Languages of the evaluation's setting that its model does not declare (``models.<name>.languages``).

        A model evaluated in a language it was not trained for can collapse to near-random nDCG@10, which a
        reader would take for a finding; tables flag such rows. A model without a ``languages`` list declares
        nothing and is never flagged. A declared macrolanguage covers its members (``zho`` covers PosIR's ``cmn``).
        """
        declared = self.declared_languages(evaluation.model)
        if declared is None:
            return []
        return [
            lang
            for lang in self.setting_languages(evaluation.benchmark, evaluation.setting)
            if lang not in declared and macrolanguage(lang) not in declared
        ]

    def llm_for(self, overrides: Mapping[str, Any] | None = None, where: str = "llm") -> LLMConfig:
        """The ``llm`` section, with a translation's own keys on top when it has some."""
        if self.llm is None:
            raise ConfigError(f"config: {where}: calls an LLM; add an 'llm' section (base_url, model; see docs/llm.md)")
        return self.llm.with_overrides(overrides, where) if overrides else self.llm


def load_config(raw: Mapping[str, Any]) -> WorkflowConfig:
    """The typed config, or a :class:`ConfigError` naming every problem's key, value and fix."""
    try:
        return WorkflowConfig.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(explain(error, raw, "", WorkflowConfig)) from None
