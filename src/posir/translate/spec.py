"""A translation benchmark entry of ``config.yaml`` (``builder: translation``), checked and typed.

.. code-block:: yaml

    squad-long-apertium:
      builder: translation
      from: squad-long            # the benchmark translated
      from_language: eng          # its language variant used as source (default eng)
      translations:               # one language variant <name>-<lang> per entry
        spa: {backend: apertium, pair: eng-spa}
      filters: {...}              # optional, posir.translate.filters
      judge: {sample: 12}         # optional LLM quality judge (needs an llm section)

Errors name the key to fix (``benchmarks.<name>.translations.<lang>.<key>``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posir.builders import TRANSLATION
from posir.builders.squad import SquadParams
from posir.schema import Section, with_defaults
from posir.translate.filters import FilterParams

BACKENDS = ("apertium", "llm", "parallel")
_BACKEND_KEYS = {
    "apertium": {"pair", "chunk_texts", "datadir"},
    "llm": {"prompt", "llm"},
    "parallel": {"source_file", "target_file"},
}
_PAIR = re.compile(r"^[a-z]{2,3}(?:_[A-Za-z]+)?-[a-z]{2,3}(?:_[A-Za-z]+)?$")


class TranslationConfigError(ValueError):
    """A translation entry is inconsistent; the message names the key."""


@dataclass(frozen=True)
class BackendSpec:
    """How one target language is translated (``translations.<lang>``; defaults in the schema)."""

    SCHEMA = "/properties/benchmarks/additionalProperties/properties/translations/additionalProperties"

    language: str
    backend: str
    pair: str | None = None  # apertium only
    chunk_texts: int | None = None  # apertium only
    datadir: str | None = None  # apertium only (None: the system's)
    prompt: str | None = None  # llm only
    llm: Mapping[str, Any] = field(default_factory=dict)  # llm only
    source_file: str | None = None  # parallel only
    target_file: str | None = None  # parallel only

    @classmethod
    def from_config(cls, where: str, language: str, section: Mapping[str, Any]) -> "BackendSpec":
        backend = section.get("backend")
        if backend not in BACKENDS:
            raise TranslationConfigError(f"{where}.backend must be one of {list(BACKENDS)}, got {backend!r}")
        extra = sorted(set(section) - {"backend"} - _BACKEND_KEYS[backend])
        if extra:
            raise TranslationConfigError(f"{where}: key(s) {extra} do not apply to backend '{backend}' "
                                         f"(it takes {sorted(_BACKEND_KEYS[backend])})")
        spec = cls(language=language, **with_defaults(section, cls.SCHEMA, where))
        if backend == "apertium" and (not spec.pair or not _PAIR.match(spec.pair)):
            raise TranslationConfigError(f"{where}.pair: apertium needs its language pair, e.g. 'eng-spa' "
                                         f"(see 'apertium -l'), got {spec.pair!r}")
        if backend == "parallel" and not (spec.source_file and spec.target_file):
            raise TranslationConfigError(f"{where}: the parallel backend needs source_file and target_file, "
                                         f"names of 'sources' entries holding aligned files (e.g. xquad_eng, xquad_spa)")
        return spec

    @property
    def source_names(self) -> dict[str, str]:
        """Role -> source name of the files this backend reads."""
        if self.backend != "parallel":
            return {}
        assert self.source_file and self.target_file
        return {"parallel_source": self.source_file, "parallel_target": self.target_file}


@dataclass(frozen=True)
class JudgeParams(Section):
    """LLM judge of translation quality (PosIR Appendix C.1): a seeded sample of documents, stratified by bucket."""

    SCHEMA = "/properties/benchmarks/additionalProperties/properties/judge"

    sample: int
    seed: int
    max_chars: int
    prompt: str


@dataclass(frozen=True)
class TranslationEntry:
    name: str
    source_benchmark: str
    source_language: str
    languages: dict[str, BackendSpec]
    filters: FilterParams
    judge: JudgeParams | None

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any]) -> "TranslationEntry":
        where = f"benchmarks.{name}"
        if entry.get("builder") != TRANSLATION.name:
            raise TranslationConfigError(f"{where}.builder is not '{TRANSLATION.name}'")
        if not entry.get("from"):
            raise TranslationConfigError(f"{where}.from: name the benchmark to translate")
        # the defaults only: the schema itself is checked when the workflow starts, these checks name the key
        entry = with_defaults(entry, "/properties/benchmarks/additionalProperties", where, check=False)
        source_language = entry["from_language"]
        translations = entry.get("translations") or {}
        if not translations:
            raise TranslationConfigError(f"{where}.translations: name at least one target language, "
                                         f"e.g. {{spa: {{backend: apertium, pair: eng-spa}}}}")
        if source_language in translations:
            raise TranslationConfigError(f"{where}.translations.{source_language}: the source language "
                                         f"(from_language) cannot also be a target")
        languages = {lang: BackendSpec.from_config(f"{where}.translations.{lang}", lang, spec or {})
                     for lang, spec in translations.items()}
        try:
            filters = FilterParams.from_config(entry["filters"], f"{where}.filters")
        except ValueError as error:
            message = str(error)
            raise TranslationConfigError(message if message.startswith(where) else f"{where}.{message}") from None
        judge = JudgeParams.from_config(entry["judge"], f"{where}.judge") if entry.get("judge") is not None else None
        return cls(name, entry["from"], source_language, languages, filters, judge)


def llm_section(config: Mapping[str, Any], spec: BackendSpec) -> dict[str, Any]:
    """The top-level ``llm`` section with the backend's own ``llm`` keys on top."""
    return {**(config.get("llm") or {}), **dict(spec.llm)}


def make_translator(
    spec: BackendSpec,
    source_language: str,
    *,
    llm: Mapping[str, Any] | None = None,
    cache_path: str | Path | None = None,
    parallel_files: Mapping[str, Path] | None = None,
    progress: bool = True,
) -> Any:
    """The translator for ``spec`` (:mod:`posir.translate.backends`)."""
    from posir.translate import backends

    if spec.backend == "apertium":
        from posir.translate.apertium import DEFAULT_DATADIR, Apertium
        from posir.translate.cache import TranslationCache

        engine = Apertium(str(spec.pair), Path(spec.datadir) if spec.datadir else DEFAULT_DATADIR)
        cache = TranslationCache(cache_path) if cache_path else None
        return backends.ApertiumTranslator(engine, cache, spec.chunk_texts, progress=progress)
    if spec.backend == "llm":
        from posir.llm import LLMClient, LLMConfig, load_prompt

        if not llm:
            raise TranslationConfigError(f"the llm backend for '{spec.language}' needs an 'llm' section "
                                         f"(base_url, model; see docs/llm.md)")
        client = LLMClient(LLMConfig.from_section(llm), progress=progress)
        return backends.LLMTranslator(client, load_prompt(spec.prompt), source_language, spec.language)
    from posir.builders.squad_format import load_squad_file

    if not parallel_files or set(parallel_files) != {"parallel_source", "parallel_target"}:
        raise TranslationConfigError("the parallel backend needs the files parallel_source and parallel_target")
    source, target = Path(parallel_files["parallel_source"]), Path(parallel_files["parallel_target"])
    pairs, by_id, conflicts = backends.parallel_pairs(load_squad_file(source), load_squad_file(target),
                                                      f"{target.name} against {source.name}")
    return backends.ParallelTranslator(pairs, {"source": source.name, "target": target.name}, conflicts, by_id)


# --- workflow-level checks and lookups (called from rules/translation.smk at parse time) -------


def translation_entries(config: Mapping[str, Any]) -> dict[str, TranslationEntry]:
    """Every ``builder: translation`` benchmark, parsed."""
    return {name: TranslationEntry.from_config(name, entry)
            for name, entry in (config.get("benchmarks") or {}).items() if entry["builder"] == TRANSLATION.name}


def benchmark_separator(config: Mapping[str, Any], benchmark: str) -> str:
    """The paragraph separator of a benchmark's documents (a translation inherits its source's)."""
    entry = config["benchmarks"][benchmark]
    if entry["builder"] == TRANSLATION.name:
        return benchmark_separator(config, entry["from"])
    return str(SquadParams.from_config(entry.get("params"), f"benchmarks.{benchmark}.params").separator)


def check_translation_config(config: Mapping[str, Any]) -> None:
    """Fail at start, naming the key, when a translation entry or comparison cannot work."""
    from posir.config import benchmark_languages, corpus_variants, query_variant
    from posir.llm.config import LLMConfig, LLMConfigError

    benchmarks = config.get("benchmarks") or {}
    sources = config.get("sources") or {}
    entries = translation_entries(config)
    variant_names: dict[str, str] = {}
    for name, parsed in entries.items():
        where = f"benchmarks.{name}"
        seen = [name]
        base = parsed.source_benchmark
        while benchmarks[base]["builder"] == TRANSLATION.name:
            if base in seen:
                raise TranslationConfigError(f"{where}.from: translations form a cycle {' -> '.join([*seen, base])}")
            seen.append(base)
            base = benchmarks[base]["from"]
        source_entry = benchmarks[parsed.source_benchmark]
        if parsed.source_language not in benchmark_languages(source_entry):
            raise TranslationConfigError(
                f"{where}.from_language: '{parsed.source_benchmark}' has no '{parsed.source_language}' variant "
                f"(it has {benchmark_languages(source_entry)})")
        own = query_variant(config, parsed.source_benchmark, parsed.source_language)
        if corpus_variants(config, parsed.source_benchmark, parsed.source_language) != [own]:
            raise TranslationConfigError(
                f"{where}.from: '{parsed.source_benchmark}' has no documents of its own in "
                f"'{parsed.source_language}' (its queries search another benchmark's corpus); translate that one")
        for language, spec in parsed.languages.items():
            key = f"{where}.translations.{language}"
            variant = f"{name}-{language}"
            if variant in benchmarks or variant in variant_names:
                raise TranslationConfigError(f"{key}: its variant directory '{variant}' collides with "
                                             f"{variant_names.get(variant, 'a benchmark of that name')}")
            variant_names[variant] = key
            for role, source in spec.source_names.items():
                if source not in sources:
                    raise TranslationConfigError(f"{key}.{role.split('_', 1)[1]}_file: '{source}' is not defined "
                                                 f"under 'sources'")
            needs_llm = [why for why, needed in (("backend: llm", spec.backend == "llm"),
                                                 ("filters.refusal.llm_confirm", parsed.filters.refusal.llm_confirm),
                                                 ("judge", parsed.judge is not None)) if needed]
            if needs_llm:
                try:
                    LLMConfig.from_section(llm_section(config, spec), prefix="llm")
                except LLMConfigError as error:
                    raise TranslationConfigError(f"{key} ({', '.join(needs_llm)}) needs the llm section: {error}") from None
    for name in (config.get("translation_comparisons") or {}):
        comparison_rows(config, name)


def translation_variants(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(benchmark, language) of every translated variant the config defines."""
    return [(name, lang) for name, parsed in translation_entries(config).items() for lang in parsed.languages]


def comparison_rows(config: Mapping[str, Any], name: str) -> list[dict[str, str]]:
    """Rows of ``translation_comparisons.<name>``: benchmark, label, model, setting (checked)."""
    from posir.config import Setting, corpus_languages, query_variant

    section = config["translation_comparisons"][name]
    where = f"translation_comparisons.{name}"
    benchmarks = config.get("benchmarks") or {}
    labels = section["translations"]
    for benchmark in labels:
        entry = benchmarks.get(benchmark)
        if entry is None or entry["builder"] != TRANSLATION.name:
            raise TranslationConfigError(f"{where}.translations: '{benchmark}' is not a translation benchmark")
        if section["language"] not in entry.get("translations", {}):
            raise TranslationConfigError(f"{where}.language: '{benchmark}' has no '{section['language']}' translation")
    if section["reference"] not in labels:
        raise TranslationConfigError(f"{where}.reference: '{section['reference']}' is not one of its translations")
    for model in section["models"]:
        if model not in (config.get("models") or {}):
            raise TranslationConfigError(f"{where}.models: '{model}' is not defined under 'models'")
    rows = []
    for benchmark, label in labels.items():
        for setting_text in section["settings"]:
            setting = Setting.parse(setting_text)
            query_variant(config, benchmark, setting.query_language)
            if setting.corpus_language not in corpus_languages(config, benchmark):
                raise TranslationConfigError(f"{where}.settings: '{setting}' has no corpus in '{benchmark}'")
            for model in section["models"]:
                rows.append({"benchmark": benchmark, "label": str(label), "model": model, "setting": str(setting)})
    return rows
