"""What a benchmark entry points at, checked: :func:`check_benchmark` has one registration per entry class.

An entry's own keys were checked by its declaration; here it meets the rest of the config: the sources it reads,
the benchmark it translates, varies or searches the corpus of, the LLM, scorers and recall model its generation
calls. Each problem is a :class:`~posir.schema.KeyProblem` naming the key (``config: <key>: <problem>; <fix>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import singledispatch

from posir.builders import SQUAD, BenchmarkSpec
from posir.builders.generation import GenerationBenchmark
from posir.builders.pairs import EvidencePairsBenchmark
from posir.builders.paragraphs import SquadParagraphsBenchmark
from posir.builders.posir_import import PosIRImportBenchmark
from posir.builders.posq_import import PosqImportBenchmark
from posir.builders.squad import SquadBenchmark
from posir.builders.xquad import CrossLingualBenchmark, MultilingualBenchmark
from posir.config.sections import ConfigSections
from posir.controlled.spec import ControlledBenchmark
from posir.schema import ConfigError, KeyProblem
from posir.translate.spec import TranslationEntry

NEEDS_LLM = "add an 'llm' section (base_url, model; see docs/llm.md)"


@singledispatch
def check_benchmark(entry: BenchmarkSpec, name: str, config: ConfigSections) -> None:
    """Fail at start, naming the key, when ``benchmarks.<name>`` points at nothing or cannot work with what it
    points at (an entry class without a registration points at nothing)."""


def _check_sources(sources: Mapping[str, str | tuple[str, ...]], where: str, config: ConfigSections) -> None:
    for role, names in sources.items():
        for source in [names] if isinstance(names, str) else names:
            if source not in config.sources:
                raise KeyProblem(f"{where}.sources.{role}", f"source '{source}' is not defined under 'sources'")


def _has_spans(source: BenchmarkSpec, key: str, what: str) -> None:
    """``what`` moves, joins or translates evidence spans: refuse a benchmark whose queries have none."""
    if source.kind.spanless:
        raise KeyProblem(
            key,
            f"'{source.name}' ({source.builder}) gives each query a position group, not an evidence span, and {what} "
            f"needs spans",
            "name a benchmark whose queries have spans",
        )


def _check_role(entry: BenchmarkSpec, role: str, name: str, what: str) -> None:
    if role not in entry.sources:  # type: ignore[attr-defined]
        raise KeyProblem(f"benchmarks.{name}.sources", f"no '{role}' source", f"name {what} under the role '{role}'")


@check_benchmark.register(SquadBenchmark)
@check_benchmark.register(SquadParagraphsBenchmark)
def _check_squad(entry: SquadBenchmark | SquadParagraphsBenchmark, name: str, config: ConfigSections) -> None:
    _check_sources(entry.sources, f"benchmarks.{name}", config)
    _check_role(entry, "squad", name, "the SQuAD-format file(s)")


@check_benchmark.register(PosqImportBenchmark)
def _check_posq(entry: PosqImportBenchmark, name: str, config: ConfigSections) -> None:
    _check_sources(entry.sources, f"benchmarks.{name}", config)
    _check_role(entry, "posq", name, "FineWeb-PosQ's rows file (JSON lines or Parquet)")


@check_benchmark.register(MultilingualBenchmark)
def _check_xquad(entry: MultilingualBenchmark, name: str, config: ConfigSections) -> None:
    """One XQuAD-format source per language, and English (the reference the variants are aligned on)."""
    _check_sources(entry.sources, f"benchmarks.{name}", config)
    missing = [lang for lang in ["eng", *entry.languages] if lang not in entry.sources]
    if missing:
        raise KeyProblem(
            f"benchmarks.{name}.sources",
            f"no XQuAD-format source for {missing}",
            "name one per language (and 'eng', the reference) under sources",
        )


@check_benchmark.register(CrossLingualBenchmark)
def _check_cross_lingual(entry: CrossLingualBenchmark, name: str, config: ConfigSections) -> None:
    _check_xquad(entry, name, config)
    base = config.benchmarks.get(entry.corpus_from)
    if base is None or base.kind is not SQUAD:
        raise KeyProblem(f"benchmarks.{name}.corpus_from", f"'{entry.corpus_from}' must name a {SQUAD.name} benchmark")


@check_benchmark.register(PosIRImportBenchmark)
def _check_posir_import(entry: PosIRImportBenchmark, name: str, config: ConfigSections) -> None:
    if entry.corpus_from is not None and (entry.corpus_from not in config.benchmarks or entry.corpus_from == name):
        raise KeyProblem(
            f"benchmarks.{name}.corpus_from",
            f"'{entry.corpus_from}' must name another benchmark (the one whose corpus these queries search)",
        )


@check_benchmark.register(GenerationBenchmark)
def _check_generation(entry: GenerationBenchmark, name: str, config: ConfigSections) -> None:
    """LLM generation needs the llm section, its scorers and its recall model."""
    where = f"benchmarks.{name}.generation"
    if config.llm is None:
        raise KeyProblem(where, "generation calls an LLM", NEEDS_LLM)
    block = entry.generation
    for stage, scorers in (
        ("contrast", block.contrast.scorers),
        ("false_negatives", block.false_negatives.scorers),
    ):
        for scorer in scorers:
            if scorer not in config.scorers:
                raise KeyProblem(f"{where}.{stage}.scorers", f"scorer '{scorer}' is not defined under 'scorers'")
    recall = block.false_negatives.recall_model
    if recall is not None:
        if recall not in config.models:
            raise KeyProblem(f"{where}.false_negatives.recall_model", f"model '{recall}' is not defined under 'models'")
        if not config.models[recall].is_dense:
            raise KeyProblem(f"{where}.false_negatives.recall_model", f"'{recall}' must be a dense (embedding) model")


@check_benchmark.register(TranslationEntry)
def _check_translation(entry: TranslationEntry, name: str, config: ConfigSections) -> None:
    """A translation translates another benchmark with documents of its own (no circle of translations), into
    variant directories no benchmark has; its files and its LLM exist."""
    where = f"benchmarks.{name}"
    source = config.benchmarks.get(entry.source_benchmark)
    if source is None or entry.source_benchmark == name:
        raise KeyProblem(
            f"{where}.from", f"'{entry.source_benchmark}' must name another benchmark (the one translated)"
        )
    translations = config.topology.translations
    seen = [name]
    base = entry.source_benchmark
    while base in translations:
        if base in seen:
            raise KeyProblem(f"{where}.from", f"translations form a cycle {' -> '.join([*seen, base])}")
        seen.append(base)
        base = translations[base].source_benchmark
        if base not in config.benchmarks:
            raise KeyProblem(f"benchmarks.{seen[-1]}.from", f"'{base}' is not defined under 'benchmarks'")
    if source.kind.query_only:
        raise KeyProblem(
            f"{where}.from",
            f"'{entry.source_benchmark}' ({source.builder}) holds queries only, its documents are another benchmark's",
            "translate that benchmark instead, or a benchmark with its own corpus",
        )
    _has_spans(source, f"{where}.from", "translation (which carries each span into the translated text)")
    languages = config.topology.query_languages(entry.source_benchmark)
    if entry.source_language not in languages:
        raise KeyProblem(
            f"{where}.from_language",
            f"'{entry.source_benchmark}' has no '{entry.source_language}' variant (it has {languages})",
        )
    for language, spec in entry.languages.items():
        key = f"{where}.translations.{language}"
        variant = f"{name}-{language}"  # a language is three letters, so only a benchmark can have this name
        if variant in config.benchmarks:
            raise KeyProblem(key, f"its variant directory '{variant}' collides with a benchmark of that name")
        for role, source_name in spec.source_names.items():
            if source_name not in config.sources:
                raise KeyProblem(
                    f"{key}.{role.split('_', 1)[1]}_file", f"'{source_name}' is not defined under 'sources'"
                )
        needs_llm = [
            why
            for why, needed in (
                ("backend: llm", spec.backend == "llm"),
                ("filters.refusal.llm_confirm", entry.filters.refusal.llm_confirm),
                ("judge", entry.judge is not None),
            )
            if needed
        ]
        if needs_llm:
            overrides = getattr(spec, "llm", None) or {}
            if config.llm is None:
                raise KeyProblem(key, f"({', '.join(needs_llm)}) needs the llm section", NEEDS_LLM)
            try:
                config.llm.with_overrides(overrides, f"{key}.llm")
            except ConfigError as error:
                # its first line already names the key's whole path: 'config: <key>.llm.<k>: <problem>'
                path, _, problem = str(error).splitlines()[0].removeprefix("config: ").partition(": ")
                raise KeyProblem(path, problem) if problem else KeyProblem(f"{key}.llm", path) from None


@check_benchmark.register(ControlledBenchmark)
def _check_controlled(entry: ControlledBenchmark, name: str, config: ConfigSections) -> None:
    """A controlled family varies a benchmark that has its own documents and evidence spans, in one language."""
    where = f"benchmarks.{name}"
    source = config.benchmarks.get(entry.source_benchmark)
    if source is None or entry.source_benchmark == name or entry.source_benchmark in config.topology.families:
        raise KeyProblem(
            f"{where}.from",
            f"'{entry.source_benchmark}' must name another benchmark (not a "
            f"controlled one): the benchmark whose queries are moved",
        )
    if source.kind.query_only or config.topology.corpus_from(entry.source_benchmark):
        raise KeyProblem(
            f"{where}.from",
            f"'{entry.source_benchmark}' searches another benchmark's documents; vary the benchmark that has them",
        )
    _has_spans(source, f"{where}.from", "a controlled family")
    languages = config.topology.query_languages(entry.source_benchmark)
    if entry.source_language not in languages:
        raise KeyProblem(
            f"{where}.from_language",
            f"'{entry.source_benchmark}' has no '{entry.source_language}' variant (it has {languages})",
        )
    for variant in entry.variant_names():
        if variant in config.benchmarks:
            raise KeyProblem(where, f"its variant '{variant}' collides with a benchmark of that name", "rename one")


@check_benchmark.register(EvidencePairsBenchmark)
def _check_pairs(entry: EvidencePairsBenchmark, name: str, config: ConfigSections) -> None:
    """Questions are grouped from a benchmark with its own documents and one span per question, in one language;
    fusing them calls the LLM."""
    where = f"benchmarks.{name}"
    source = config.benchmarks.get(entry.source_benchmark)
    if (
        source is None
        or entry.source_benchmark == name
        or isinstance(source, EvidencePairsBenchmark)
        or entry.source_benchmark in config.topology.families
    ):
        raise KeyProblem(
            f"{where}.from",
            f"'{entry.source_benchmark}' must name another benchmark with one evidence span per question (not a "
            f"controlled family nor another evidence_pairs benchmark)",
        )
    if source.kind.query_only or config.topology.corpus_from(entry.source_benchmark):
        raise KeyProblem(
            f"{where}.from",
            f"'{entry.source_benchmark}' searches another benchmark's documents; group the questions of a "
            f"benchmark that has its own",
        )
    _has_spans(source, f"{where}.from", "joining questions by their evidence")
    languages = config.topology.query_languages(entry.source_benchmark)
    if entry.source_language not in languages:
        raise KeyProblem(
            f"{where}.from_language",
            f"'{entry.source_benchmark}' has no '{entry.source_language}' variant (it has {languages})",
        )
    if entry.params.fuse is not None and config.llm is None:
        raise KeyProblem(f"{where}.params.fuse", "fusing questions calls an LLM", NEEDS_LLM)
