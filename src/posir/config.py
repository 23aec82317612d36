"""Reading the validated ``config.yaml``: metric parameters, settings, evaluations.

The JSON schema (``workflow/schemas/config.schema.yaml``) checks shape and
types; this module checks what a schema cannot (cross references) and gives
names to the pieces the workflow and the rule scripts share.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from posir.metrics.positions import LengthBucket, length_buckets
from posir.models.spec import LEXICAL_BACKENDS


class ConfigError(ValueError):
    """A config value refers to something that does not exist, or is inconsistent."""


@dataclass(frozen=True)
class MetricParams:
    n_bins: int
    buckets: tuple[LengthBucket, ...]
    min_bin_queries: int

    @property
    def bucket_names(self) -> list[str]:
        return [b.name for b in self.buckets]

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "MetricParams":
        return cls.from_section(config.get("metrics", {}))

    @classmethod
    def from_section(cls, metrics: Mapping[str, Any]) -> "MetricParams":
        """From the ``metrics`` section of the config."""
        return cls(
            n_bins=int(metrics.get("position_bins", 20)),
            buckets=tuple(length_buckets(metrics.get("length_buckets", {"Q1": 512, "Q2": 1024, "Q3": 1536, "Q4": 2048}))),
            min_bin_queries=int(metrics.get("min_bin_queries", 10)),
        )


@dataclass(frozen=True)
class Setting:
    """``<query language>-<corpus language>``, ISO 639-3, e.g. ``deu-eng``."""

    query_language: str
    corpus_language: str

    @classmethod
    def parse(cls, text: str) -> "Setting":
        parts = text.split("-")
        if len(parts) != 2 or not all(len(p) == 3 and p.isalpha() and p.islower() for p in parts):
            raise ConfigError(f"setting '{text}' must look like 'eng-eng': <query ISO 639-3>-<corpus ISO 639-3>")
        return cls(parts[0], parts[1])

    def __str__(self) -> str:
        return f"{self.query_language}-{self.corpus_language}"


@dataclass(frozen=True)
class Evaluation:
    benchmark: str
    model: str
    setting: Setting


def benchmark_variant(config: Mapping[str, Any], benchmark: str, language: str) -> str:
    """Directory name under ``benchmarks/`` holding ``benchmark`` in ``language``."""
    entry = config["benchmarks"][benchmark]
    if entry.get("language", "eng") == language:
        return benchmark
    raise ConfigError(
        f"benchmark '{benchmark}' has no '{language}' texts (its language is {entry.get('language', 'eng')}); "
        f"fix the settings listed for it under 'evaluation' in config.yaml"
    )


def evaluations(config: Mapping[str, Any]) -> Iterator[Evaluation]:
    for block_index, block in enumerate(config.get("evaluation", [])):
        benchmark = block["benchmark"]
        if benchmark not in config.get("benchmarks", {}):
            raise ConfigError(f"evaluation[{block_index}]: benchmark '{benchmark}' is not defined under 'benchmarks'")
        for model in block["models"]:
            if model not in config.get("models", {}):
                raise ConfigError(f"evaluation[{block_index}]: model '{model}' is not defined under 'models'")
            for setting_text in block.get("settings", ["eng-eng"]):
                setting = Setting.parse(setting_text)
                benchmark_variant(config, benchmark, setting.query_language)
                benchmark_variant(config, benchmark, setting.corpus_language)
                yield Evaluation(benchmark, model, setting)


def check_references(config: Mapping[str, Any]) -> None:
    """Fail early, naming the key, when a benchmark or evaluation points at nothing."""
    sources = config.get("sources", {})
    for name, entry in config.get("benchmarks", {}).items():
        for role, source in entry.get("sources", {}).items():
            if source not in sources:
                raise ConfigError(f"benchmarks.{name}.sources.{role}: source '{source}' is not defined under 'sources'")
    list(evaluations(config))
    check_generation_references(config)


def check_generation_references(config: Mapping[str, Any]) -> None:
    """LLM-generation benchmarks: the llm section, their scorers and their recall model must exist."""
    scorers = config.get("scorers", {}) or {}
    models = config.get("models", {}) or {}
    for name, entry in config.get("benchmarks", {}).items():
        if entry.get("builder") != "llm_generation":
            continue
        where = f"benchmarks.{name}.generation"
        if not config.get("llm"):
            raise ConfigError(f"{where}: generation calls an LLM; add an 'llm' section (base_url, model; see docs/llm.md)")
        block = entry.get("generation", {})
        for stage in ("contrast", "false_negatives"):
            for scorer in (block.get(stage, {}) or {}).get("scorers", []):
                if scorer not in scorers:
                    raise ConfigError(f"{where}.{stage}.scorers: scorer '{scorer}' is not defined under 'scorers'")
        recall = (block.get("false_negatives", {}) or {}).get("recall_model")
        if recall is not None:
            if recall not in models:
                raise ConfigError(f"{where}.false_negatives.recall_model: model '{recall}' is not defined under 'models'")
            if models[recall].get("backend") in LEXICAL_BACKENDS:
                raise ConfigError(f"{where}.false_negatives.recall_model: '{recall}' must be a dense (embedding) model")
