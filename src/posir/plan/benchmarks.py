"""Planning the data: source files, benchmarks (built, generated, imported, translated) and text collections."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.builders.generation import GenerationBenchmark
from posir.builders.posir_import import PosIRImportBenchmark
from posir.builders.posq_import import PosqImportBenchmark
from posir.builders.xquad import CrossLingualBenchmark
from posir.metrics.params import PositionParams
from posir.plan.base import Part
from posir.plan.jobs import (
    BuildJob,
    CollectionJob,
    ComparisonJob,
    FetchJob,
    GenerationJob,
    ImportJob,
    JudgeJob,
    JudgeTableJob,
    PositionsFigureJob,
    PosqImportJob,
    TranslateJob,
)
from posir.results.paths import GENERATION_STAGES
from posir.scorers.spec import BiEncoderSpec
from posir.translate.spec import TranslationEntry

#: The apertium pipeline is a dozen programs running at once: 1.8 cores busy while it translates (measured).
TRANSLATION_THREADS = 2


class BenchmarkPlan(Part):
    """Source files, the benchmarks built from them, generated and imported benchmarks, translations."""

    # --- sources --------------------------------------------------------------------------------------

    def source_file(self, name: str) -> str:
        return self.paths.source(name, self.config.sources[name].filename)

    def fetch(self, wildcards: Any) -> FetchJob:
        return FetchJob(source=self.config.sources[wildcards.source], mirrors=self.config.mirrors)

    # --- built benchmarks -------------------------------------------------------------------------------

    def sources_of(self, wildcards: Any) -> dict[str, str | list[str]]:
        """A built benchmark's source files, by role (a role of several files: their list, in order)."""
        entry = self.config.benchmarks[wildcards.benchmark]
        return {
            role: self.source_file(names) if isinstance(names, str) else [self.source_file(n) for n in names]
            for role, names in entry.sources.items()  # type: ignore[union-attr]
        }

    def variant_sources(self, wildcards: Any) -> dict[str, str]:
        """An XQuAD variant's files: the English reference and the language's own."""
        roles = self.config.benchmarks[wildcards.benchmark].sources  # type: ignore[union-attr]
        return {"english": self.source_file(roles["eng"]), "language": self.source_file(roles[wildcards.language])}

    def cross_lingual_inputs(self, wildcards: Any) -> dict[str, str]:
        entry = self.config.benchmarks[wildcards.benchmark]
        assert isinstance(entry, CrossLingualBenchmark)
        base = entry.corpus_from
        return {
            **self.variant_sources(wildcards),
            "base_corpus": self.paths.benchmark_file(base, fmt.CORPUS),
            "base_paragraphs": self.paths.benchmark_file(base, fmt.PARAGRAPHS),
            "base_documents": self.paths.benchmark_file(base, fmt.DOCUMENTS),
        }

    def build(self, wildcards: Any) -> BuildJob:
        entry = self.config.benchmarks[wildcards.benchmark]
        return BuildJob(entry=entry, metrics=self.config.metrics.positions())  # type: ignore[arg-type]

    def positions_figure(self, wildcards: Any) -> PositionsFigureJob:
        return PositionsFigureJob(metrics=self.config.metrics.tables())

    def collection_source(self, wildcards: Any) -> dict[str, str]:
        source = self.config.text_collections[wildcards.collection].source
        return {"source": self.source_file(source)} if source else {}

    def collection(self, wildcards: Any) -> CollectionJob:
        return CollectionJob(name=wildcards.collection, entry=self.config.text_collections[wildcards.collection])

    # --- the PosIR import and LLM generation ------------------------------------------------------------

    def import_files(self, wildcards: Any) -> dict[str, str]:
        entry = self.config.benchmarks[wildcards.benchmark]
        assert isinstance(entry, PosIRImportBenchmark)
        spec = entry.posir_import
        return {} if spec.download else {k: str(v) for k, v in spec.files().items()}

    def posq_import(self, wildcards: Any) -> PosqImportJob:
        entry = self.config.benchmarks[wildcards.benchmark]
        assert isinstance(entry, PosqImportBenchmark)
        return PosqImportJob(
            entry=entry,
            groups=entry.positions.names(self.config.metrics.position_bins),
            metrics=self.config.metrics.positions(),
        )

    def import_job(self, wildcards: Any) -> ImportJob:
        return ImportJob(
            entry=self.config.benchmarks[wildcards.benchmark],  # type: ignore[arg-type]
            metrics=self.config.metrics.positions(),
        )

    def raw_corpus(self, wildcards: Any) -> str:
        return self._generation_entry(wildcards).generation.corpus.path

    def prompt_files(self, name: str) -> list[str]:
        """A prompt and its answer schema, where it has one (a yes/no prompt has none): inputs, so editing a prompt
        reruns the stages that read it."""
        schema = self.prompts_dir / f"{name}.schema.json"
        return [str(self.prompts_dir / f"{name}.md")] + ([str(schema)] if schema.exists() else [])

    def llm_answer_settings(self) -> dict[str, Any]:
        """The llm settings that shape answers; a change reruns the LLM stages (the cache keeps old answers).
        The endpoint itself is read from the running config, so a local server on another port reruns nothing."""
        return self.config.llm.answer_settings() if self.config.llm is not None else {}

    def generation(self, stage: str) -> Any:
        """The job of one generation stage: the entry, the scorers and models it uses, the answer settings."""

        def job(wildcards: Any) -> GenerationJob:
            entry = self._generation_entry(wildcards)
            block = entry.generation
            names = {"contrast": block.contrast.scorers, "false_negatives": block.false_negatives.scorers}
            scorers = {name: self.config.scorers[name] for name in names.get(stage, ())}
            models = [s.model for s in scorers.values() if isinstance(s, BiEncoderSpec)]
            if stage == "false_negatives" and block.false_negatives.recall_model:
                models.append(block.false_negatives.recall_model)
            with_caches = stage in ("contrast", "false_negatives")
            return GenerationJob(
                entry=entry,
                scorers=scorers,
                models={m: self.config.models[m] for m in models},
                llm=self.llm_answer_settings(),
                # only the last stage writes positions: a bucket change reruns no LLM stage
                metrics=self.config.metrics.positions() if stage == "assemble" else PositionParams(),
                score_cache=self.config.score_cache if with_caches else "",
                embedding_cache=self.config.embedding_cache if with_caches else "",
            )

        return job

    def scorer_mem_mb(self, wildcards: Any) -> int:
        block = self._generation_entry(wildcards).generation
        names = {*block.contrast.scorers, *block.false_negatives.scorers}
        return max([self.config.scorers[n].mem_mb for n in names] + [3000])

    def generation_stage_dirs(self, wildcards: Any) -> list[str]:
        return [self.paths.generation_stage_dir(wildcards.benchmark, s) for s in GENERATION_STAGES]

    def generation_counts(self, wildcards: Any) -> list[str]:
        return [f"{d}/{fmt.COUNTS}" for d in self.generation_stage_dirs(wildcards)]

    def generation_drops(self, wildcards: Any) -> list[str]:
        return [f"{d}/{fmt.DROPS}" for d in self.generation_stage_dirs(wildcards)]

    def _generation_entry(self, wildcards: Any) -> GenerationBenchmark:
        entry = self.config.benchmarks[wildcards.benchmark]
        assert isinstance(entry, GenerationBenchmark)
        return entry

    # --- translation ------------------------------------------------------------------------------------

    def _translation(self, wildcards: Any) -> TranslationEntry:
        entry = self.config.benchmarks[wildcards.benchmark]
        assert isinstance(entry, TranslationEntry)
        return entry

    def translation_source_dir(self, wildcards: Any) -> str:
        """The variant translated: the 'from' benchmark in its 'from_language'."""
        entry = self._translation(wildcards)
        return self.paths.benchmark_dir(self.config.query_variant(entry.source_benchmark, entry.source_language))

    def translation_source_corpus(self, wildcards: Any) -> str:
        return f"{self.translation_source_dir(wildcards)}/{fmt.CORPUS}"

    def translation_inputs(self, wildcards: Any) -> dict[str, str]:
        source = self.translation_source_dir(wildcards)
        inputs = {
            name: f"{source}/{filename}" for name, filename in fmt.CONTRACT.items() if name not in ("drops", "card")
        }
        spec = self._translation(wildcards).languages[wildcards.language]
        for role, name in spec.source_names.items():
            inputs[role] = self.source_file(name)
        before = self.apertium_translated_before(wildcards.benchmark, wildcards.language)
        if before is not None:
            inputs["translated_before"] = self.paths.benchmark_file(before, fmt.CARD)
        return inputs

    def apertium_translated_before(self, benchmark: str, language: str) -> str | None:
        """The apertium variant of the same language pair whose job goes before this one's: an ordering edge only.

        Apertium's tagger carries state across the texts of a batch (posir.translate.apertium), so a text's
        translation depends on its batch, and the translation cache freezes the first one. Two variants sharing
        texts (squad-long and XQuAD hold the same 48 articles) then got their shared paragraphs from whichever job ran
        first: a schedule changed the run's numbers (xquad-parallel-apertium's use-m3 spa-eng moved by up to 0.70
        nDCG@10 on one query). In a chain by variant name, each pair's texts come from the same batches in every run.
        """
        entry = self.config.benchmarks[benchmark]
        assert isinstance(entry, TranslationEntry)
        pair = (entry.source_language, language)
        chain = sorted(
            f"{name}-{target}"
            for name, other in self.config.benchmarks.items()
            if isinstance(other, TranslationEntry)
            for target, spec in other.languages.items()
            if spec.backend == "apertium" and (other.source_language, target) == pair
        )
        variant = f"{benchmark}-{language}"
        if variant not in chain or chain.index(variant) == 0:
            return None
        return chain[chain.index(variant) - 1]

    def translate(self, wildcards: Any) -> TranslateJob:
        """A variant's job. The llm section only for variants that call an LLM (so editing it reruns only those);
        the translation cache only for apertium (the LLM has its own answer cache)."""
        entry = self._translation(wildcards)
        spec = entry.languages[wildcards.language]
        uses_llm = spec.backend == "llm" or entry.filters.refusal.llm_confirm
        overrides = getattr(spec, "llm", None)
        llm = (
            self.config.llm_for(overrides, f"benchmarks.{wildcards.benchmark}.translations.{wildcards.language}")
            if uses_llm
            else None
        )
        return TranslateJob(
            entry=entry,
            separator=self.config.separator(wildcards.benchmark),
            llm=llm,
            cache=self.config.translation_cache if spec.backend == "apertium" else "",
            metrics=self.config.metrics.positions(),
        )

    def judge(self, wildcards: Any) -> JudgeJob:
        entry = self._translation(wildcards)
        overrides = getattr(entry.languages[wildcards.language], "llm", None)
        return JudgeJob(entry=entry, llm=self.config.llm_for(overrides, f"benchmarks.{wildcards.benchmark}.judge"))

    def judged_languages(self, benchmark: str) -> list[str]:
        return [lang for name, lang in self.config.translation_variants() if name == benchmark]

    def judge_files(self, wildcards: Any) -> list[str]:
        return [
            self.paths.translation_judge(f"{wildcards.benchmark}-{lang}")["judged"]
            for lang in self.judged_languages(wildcards.benchmark)
        ]

    def judge_table(self, wildcards: Any) -> JudgeTableJob:
        entry = self._translation(wildcards)
        return JudgeTableJob(
            judged_keys=[
                (wildcards.benchmark, lang, entry.languages[lang].backend)
                for lang in self.judged_languages(wildcards.benchmark)
            ]
        )

    # --- translations compared ----------------------------------------------------------------------------

    def comparison_rows(self, comparison: str) -> list[dict[str, str]]:
        from posir.config import comparison_rows

        return comparison_rows(self.config, comparison)

    def comparison_summaries(self, wildcards: Any) -> list[str]:
        return [
            self.paths.aggregate(r["benchmark"], r["model"], r["setting"], "summary")
            for r in self.comparison_rows(wildcards.comparison)
        ]

    def comparison_cards(self, wildcards: Any) -> dict[str, str]:
        section = self.config.translation_comparisons[wildcards.comparison]
        return {b: self.paths.benchmark_file(f"{b}-{section.language}", fmt.CARD) for b in section.translations}

    def comparison_card_files(self, wildcards: Any) -> list[str]:
        return list(self.comparison_cards(wildcards).values())

    def comparison(self, wildcards: Any) -> ComparisonJob:
        return ComparisonJob(
            rows=self.comparison_rows(wildcards.comparison),
            cards=self.comparison_cards(wildcards),
            reference=self.config.translation_comparisons[wildcards.comparison].reference,
            metrics=self.config.metrics.tables(),
        )


def prompts_dir_of(input_files: list[str]) -> Path:
    """The folder of a rule's prompt files."""
    return Path(input_files[0]).parent
