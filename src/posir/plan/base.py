"""What every part of the plan shares: the typed config, the result paths, and the Snakemake-facing conventions.

Snakemake calls a rule's input, params and resource functions with a ``wildcards`` object (and, where the
function names them, ``input``, ``threads``, ...). Plan methods take exactly those arguments and read wildcards
by attribute, so a test calls them with ``Wildcards(benchmark="squad-long", ...)`` and no Snakemake at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from posir.config import Evaluation, WorkflowConfig
from posir.results.paths import ResultPaths


def Wildcards(**values: str) -> Any:  # noqa: N802 - reads like Snakemake's own Wildcards object
    """A wildcards object as Snakemake passes it, for calling plan methods without Snakemake."""
    return SimpleNamespace(**values)


@dataclass(frozen=True)
class Part:
    """A part of the plan: one group of rules, over the one typed config and the result paths."""

    config: WorkflowConfig
    paths: ResultPaths
    prompts_dir: Path

    def converted_inputs(self, models: Iterable[str]) -> dict[str, str]:
        """The converted folder (posir.models.weights.conversion) of each named model entry whose weights are converted:
        an input of every job that loads one, so the folder is written once, before any of them starts."""
        specs = [self.config.models[name] for name in models if name in self.config.models]
        packages = sorted({str(spec.model_package) for spec in specs if spec.is_converted})
        return {f"converted_{package}": self.paths.converted_model(package) for package in packages}

    def encoded_file(self, model: str, text_set: str, kind: str) -> str:
        """What an entry's encode job writes first for a text set: a dense entry's embeddings (its own, not an
        ``embeddings_from`` entry's), a multi-vector entry's token vectors, a sparse entry's terms."""
        spec = self.config.models[model]
        if spec.is_multi_vector:
            return self.paths.token_vector_outputs(model, text_set, kind)["vectors"]
        if spec.is_sparse:
            return self.paths.sparse_vector_outputs(model, text_set, kind)["terms"]
        return self.paths.embeddings(model, text_set, kind)

    def scores_taken_apart(self, evaluation: Evaluation) -> bool:
        """Whether a run's scores can be taken apart (:mod:`posir.analyses.score_origin`): a multi-vector or sparse
        entry's, in a setting whose queries and documents share a language and one corpus file (the evidence span is
        in the characters of the positive the entry read; another language's copy of it has other characters)."""
        spec = self.config.models.get(evaluation.model)  # None: a pipeline, whose second stage reranks a first stage
        if spec is None or not (spec.is_multi_vector or spec.is_sparse):
            return False
        setting = evaluation.setting
        variants = self.config.corpus_variants(evaluation.benchmark, setting.corpus_language)
        return setting.query_language == setting.corpus_language and len(variants) == 1


def input_scaled_mem_mb(base_mb: float, per_input_mb: float) -> Callable[[Any, Any], int]:
    """mem_mb of a step whose peak RSS grows with its input: twice (base_mb + per_input_mb x input MB), in 100 MB
    steps, at least 1000 MB (docs/cluster.md, "Where the resources come from"). Snakemake evaluates it when the
    job is ready, so ``input.size_mb`` is the real size."""

    def mem_mb(wildcards: Any, input: Any) -> int:  # noqa: A002 - Snakemake passes the job's input by this name
        return scaled_mem_mb(base_mb, per_input_mb, input.size_mb)

    return mem_mb


def scaled_mem_mb(base_mb: float, per_input_mb: float, input_mb: float) -> int:
    return max(1000, 100 * math.ceil(2 * (base_mb + per_input_mb * input_mb) / 100))


def names_regex(names: Iterable[str]) -> str:
    """A wildcard regex matching exactly ``names``; with none, a regex that matches nothing."""
    names = list(names)
    return "|".join(re.escape(n) for n in names) if names else "(?!x)x"
