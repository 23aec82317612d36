"""The benchmark topology: the query languages, variant directories and corpora of each benchmark, and the
evaluations the ``evaluation`` blocks ask for.

What a benchmark entry is decides its shape, so each question is one function dispatched on the entry's class
(:func:`functools.singledispatch`). The default answers for a benchmark with its own documents in the languages
its entry names; what differs is registered below, one group per kind of entry: parallel XQuAD variants (the
one-vs-many corpus of every language), benchmarks whose queries search another benchmark's corpus
(``corpus_from``), translations (the source language is the translated benchmark itself, each target a variant
``<name>-<lang>``) and controlled families (one language; the source's documents, varied). A family's variants
are benchmarks no entry declares: :class:`BenchmarkTopology` answers for them before it asks an entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, singledispatch
from typing import TypeVar

from pydantic import Field

from posir.builders import PARALLEL, BenchmarkSpec
from posir.builders.pairs import EvidencePairsBenchmark
from posir.builders.posir_import import PosIRImportBenchmark
from posir.builders.squad import SquadBenchmark
from posir.builders.xquad import CrossLingualBenchmark, MultilingualBenchmark, ParallelBenchmark
from posir.controlled.spec import ControlledBenchmark, VariantKey
from posir.languages import ONE_VS_MANY, Setting
from posir.schema import ConfigError, Entry, SettingName, Str
from posir.translate.spec import TranslationEntry

EntryT = TypeVar("EntryT", bound=BenchmarkSpec)


@dataclass(frozen=True)
class Evaluation:
    """One row of the results: a benchmark, a model (or pipeline) and a setting."""

    benchmark: str
    model: str
    setting: Setting


class EvaluationBlock(Entry):
    """An ``evaluation`` block: models (or pipelines) evaluated on a benchmark in some settings."""

    benchmark: Str
    models: tuple[Str, ...] = Field(min_length=1)
    settings: tuple[SettingName, ...] = ("eng-eng",)


@dataclass(frozen=True, eq=False)
class BenchmarkTopology:
    """The benchmarks of a config and the evaluations of its blocks, as the plan and the checks ask for them."""

    benchmarks: Mapping[str, BenchmarkSpec]
    evaluation: Sequence[EvaluationBlock]

    def _entries(self, kind: type[EntryT]) -> dict[str, EntryT]:
        """The entries of one class, in config order."""
        return {name: entry for name, entry in self.benchmarks.items() if isinstance(entry, kind)}

    @cached_property
    def families(self) -> dict[str, ControlledBenchmark]:
        """The controlled families by name."""
        return self._entries(ControlledBenchmark)

    @cached_property
    def translations(self) -> dict[str, TranslationEntry]:
        """The translation entries by name."""
        return self._entries(TranslationEntry)

    @cached_property
    def controlled_variants(self) -> dict[str, tuple[str, VariantKey]]:
        """Every controlled variant the config defines: its name -> (its family, its key)."""
        return {
            name: (family, entry.key_of(name))
            for family, entry in self.families.items()
            for name in entry.variant_names()
        }

    def family_of(self, variant: str) -> ControlledBenchmark:
        return self.families[self.controlled_variants[variant][0]]

    def query_languages(self, benchmark: str) -> list[str]:
        """Languages ``benchmark`` has queries in (ISO 639-3)."""
        if benchmark in self.controlled_variants:
            return [self.family_of(benchmark).source_language]
        return _query_languages(self.benchmarks[benchmark])

    def query_variant(self, benchmark: str, language: str) -> str:
        """Directory name under ``benchmarks/`` holding ``benchmark``'s queries in ``language``."""
        languages = self.query_languages(benchmark)
        if language not in languages:
            raise ConfigError(
                f"config: benchmark '{benchmark}' has no '{language}' queries (it has {languages}); fix the settings "
                f"listed for it under 'evaluation' in config.yaml"
            )
        if benchmark in self.controlled_variants:
            return benchmark  # a controlled variant is one benchmark of one language
        return _query_variant(self.benchmarks[benchmark], benchmark, language, self)

    def corpus_from(self, benchmark: str) -> str | None:
        """The benchmark whose corpus ``benchmark``'s queries search, when not its own."""
        if benchmark in self.controlled_variants:
            return None
        return _corpus_from(self.benchmarks[benchmark])

    def corpus_languages(self, benchmark: str) -> list[str]:
        base = self.corpus_from(benchmark)
        return self.corpus_languages(base) if base else self.query_languages(benchmark)

    def corpus_variants(self, benchmark: str, language: str) -> list[str]:
        """Benchmark directories whose ``corpus.jsonl`` form the corpus of a setting in ``language``.

        ``mul`` (one-vs-many, Multi-EuP) is the union of every language's parallel corpus.
        """
        if benchmark in self.controlled_variants:
            return [benchmark]
        base = self.corpus_from(benchmark)
        if base:
            return self.corpus_variants(base, language)
        return _corpus_variants(self.benchmarks[benchmark], benchmark, language, self)

    def has_parallel_documents(self, benchmark: str) -> bool:
        """Whether ``benchmark``'s documents are parallel across its languages (a ``-mul`` setting needs it)."""
        return _has_parallel_documents(self.benchmarks[benchmark])

    def setting_variants(self, benchmark: str, setting: Setting) -> tuple[str, list[str]]:
        """The directories under ``benchmarks/`` of a setting: its queries' and its corpus's (several: one-vs-many)."""
        query = self.query_variant(benchmark, setting.query_language)
        return query, self.corpus_variants(benchmark, setting.corpus_language)

    def setting_languages(self, benchmark: str, setting: Setting) -> list[str]:
        """Every language a setting's queries and documents are in (a one-vs-many corpus: all of them)."""
        corpus = (
            self.query_languages(benchmark) if setting.corpus_language == ONE_VS_MANY else [setting.corpus_language]
        )
        return list(dict.fromkeys([setting.query_language, *corpus]))

    def separator(self, benchmark: str) -> str:
        """The paragraph separator of a benchmark's documents (a translation or a controlled family inherits its
        source's)."""
        if benchmark in self.controlled_variants:
            return self.separator(self.family_of(benchmark).source_benchmark)
        return _separator(self.benchmarks[benchmark], self)

    def translation_variants(self) -> list[tuple[str, str]]:
        """(benchmark, language) of every translated variant the config defines."""
        return [(name, lang) for name, entry in self.translations.items() for lang in entry.languages]

    @cached_property
    def evaluations(self) -> list[Evaluation]:
        """Every (benchmark, model, setting) of the evaluation blocks, in config order; a block naming a controlled
        family evaluates each of its variants."""
        evaluations = []
        for block in self.evaluation:
            family = self.families.get(block.benchmark)
            variants = family.variant_names() if family is not None else [block.benchmark]
            evaluations += [
                Evaluation(variant, model, Setting.parse(setting))
                for variant in variants
                for model in block.models
                for setting in block.settings
            ]
        return evaluations

    @cached_property
    def controlled_evaluations(self) -> dict[str, list[Evaluation]]:
        """Per controlled family, the evaluations of its variants."""
        groups: dict[str, list[Evaluation]] = {}
        for evaluation in self.evaluations:
            if evaluation.benchmark in self.controlled_variants:
                groups.setdefault(self.controlled_variants[evaluation.benchmark][0], []).append(evaluation)
        return groups

    @cached_property
    def evaluations_by_benchmark(self) -> dict[str, list[Evaluation]]:
        """The evaluations grouped by benchmark, each group in config order (an index for per-job lookups)."""
        groups: dict[str, list[Evaluation]] = {}
        for evaluation in self.evaluations:
            groups.setdefault(evaluation.benchmark, []).append(evaluation)
        return groups


# --- a benchmark with its own documents, in the languages its entry names (the default) ------------------------


@singledispatch
def _query_languages(entry: BenchmarkSpec) -> list[str]:
    return entry.query_languages


@singledispatch
def _query_variant(entry: BenchmarkSpec, name: str, language: str, topology: BenchmarkTopology) -> str:
    return f"{name}-{language}" if entry.kind.per_language else name


@singledispatch
def _corpus_from(entry: BenchmarkSpec) -> str | None:
    return None


@singledispatch
def _corpus_variants(entry: BenchmarkSpec, name: str, language: str, topology: BenchmarkTopology) -> list[str]:
    if language == ONE_VS_MANY:
        raise ConfigError(
            f"config: benchmark '{name}': a '-mul' setting needs parallel documents (builder {PARALLEL.name})"
        )
    return [topology.query_variant(name, language)]


@singledispatch
def _has_parallel_documents(entry: BenchmarkSpec) -> bool:
    return False


@singledispatch
def _separator(entry: BenchmarkSpec, topology: BenchmarkTopology) -> str:
    return "\n\n"


@_separator.register(SquadBenchmark)
@_separator.register(MultilingualBenchmark)
def _joined_paragraphs(entry: SquadBenchmark | MultilingualBenchmark, topology: BenchmarkTopology) -> str:
    return entry.params.separator


# --- parallel XQuAD variants: one partition in every language, so a one-vs-many corpus ---------------------------


@_corpus_variants.register(ParallelBenchmark)
def _parallel_corpus(entry: ParallelBenchmark, name: str, language: str, topology: BenchmarkTopology) -> list[str]:
    if language == ONE_VS_MANY:
        return [topology.query_variant(name, lang) for lang in topology.query_languages(name)]
    return [topology.query_variant(name, language)]


@_has_parallel_documents.register(ParallelBenchmark)
@_has_parallel_documents.register(TranslationEntry)
def _parallel(entry: ParallelBenchmark | TranslationEntry) -> bool:
    return True


# --- queries searching another benchmark's corpus ------------------------------------------------------------------


@_corpus_from.register(CrossLingualBenchmark)
@_corpus_from.register(PosIRImportBenchmark)
def _searched_corpus(entry: CrossLingualBenchmark | PosIRImportBenchmark) -> str | None:
    return entry.corpus_from


# --- a translation: its source variant is the translated benchmark's, each target a variant '<name>-<lang>' ------


@_query_languages.register(TranslationEntry)
def _translated_languages(entry: TranslationEntry) -> list[str]:
    return [entry.source_language, *entry.languages]


@_query_variant.register(TranslationEntry)
def _translated_variant(entry: TranslationEntry, name: str, language: str, topology: BenchmarkTopology) -> str:
    if language == entry.source_language:
        return topology.query_variant(entry.source_benchmark, language)  # the source is that benchmark itself
    return f"{name}-{language}"


@_corpus_variants.register(TranslationEntry)
def _translated_corpus(entry: TranslationEntry, name: str, language: str, topology: BenchmarkTopology) -> list[str]:
    if language == ONE_VS_MANY:
        return [v for lang in topology.query_languages(name) for v in topology.corpus_variants(name, lang)]
    if language == entry.source_language:
        return topology.corpus_variants(entry.source_benchmark, language)
    return [topology.query_variant(name, language)]


# --- a controlled family: one language of its source, whose documents it varies -----------------------------------


@_query_languages.register(ControlledBenchmark)
def _varied_language(entry: ControlledBenchmark) -> list[str]:
    return [entry.source_language]


@_separator.register(TranslationEntry)
@_separator.register(ControlledBenchmark)
@_separator.register(EvidencePairsBenchmark)
def _source_separator(
    entry: TranslationEntry | ControlledBenchmark | EvidencePairsBenchmark, topology: BenchmarkTopology
) -> str:
    return topology.separator(entry.source_benchmark)
