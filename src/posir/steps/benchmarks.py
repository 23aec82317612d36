"""Steps: build a benchmark (or one language of it) from its sources and write its contract."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.builders import BenchmarkSpec
from posir.builders.squad_format import load_squad_file
from posir.jobs.benchmarks import BuildJob, CollectionJob, PosqImportJob
from posir.metrics.params import PositionParams
from posir.metrics.positions import bucket_of


def _finish(
    name: str,
    entry: BenchmarkSpec,
    language: str,
    built: fmt.BuiltBenchmark,
    sources: Mapping[str, Any],
    metrics: PositionParams,
    out_dir: Path,
) -> dict[str, Any]:
    """Subsample if the entry asks (``params.max_queries``), then validate and write the contract."""
    params = entry.params  # type: ignore[attr-defined]
    built = fmt.subsample(built, params.max_queries, params.seed)
    provenance = fmt.Provenance.of_entry(entry, name, language, sources)
    return fmt.finish(built, provenance, metrics.buckets, metrics.n_bins, Path(out_dir))


def build_benchmark(job: BuildJob) -> dict[str, Any]:
    """Long documents from a SQuAD-format file (PosIR 3.1 sampling); writes the contract, returns the card."""
    from posir.builders.squad import SquadBenchmark, build_squad_long
    from posir.text import qwen3_token_counter

    entry, metrics = job.entry, job.metrics
    assert isinstance(entry, SquadBenchmark)
    sources = {role: job.path(role) for role in entry.sources}
    built = build_squad_long(
        load_squad_file(sources["squad"]), entry.params, qwen3_token_counter(), metrics.buckets, metrics.n_bins
    )
    return _finish(entry.name, entry, entry.language, built, sources, metrics, job.path("card", "output").parent)


def build_paragraph_benchmark(job: BuildJob) -> dict[str, Any]:
    """Every distinct paragraph of the SQuAD-format files a document, every answerable question a query (Zeng et al.'s
    SQuAD-PosQ); writes the contract, returns the card."""
    from posir.builders.paragraphs import SquadParagraphsBenchmark, build_paragraphs
    from posir.text import qwen3_token_counter

    entry, metrics = job.entry, job.metrics
    assert isinstance(entry, SquadParagraphsBenchmark)
    sources = {role: job.paths(role) for role in entry.sources}
    files = [(path, load_squad_file(path)) for path in sources["squad"]]
    built = build_paragraphs(files, entry.params, qwen3_token_counter(), metrics.buckets, metrics.n_bins)
    return _finish(entry.name, entry, entry.language, built, sources, metrics, job.path("card", "output").parent)


def import_posq_benchmark(job: PosqImportJob) -> dict[str, Any]:
    """FineWeb-PosQ's rows (JSON lines or Parquet) as a benchmark whose positions are group labels."""
    from posir.builders.posq_import import import_rows
    from posir.text import qwen3_token_counter

    entry, metrics = job.entry, job.metrics
    sources = {role: job.path(role) for role in entry.sources}
    built = import_rows(sources["posq"], job.groups, qwen3_token_counter(), metrics.buckets)
    return _finish(entry.name, entry, entry.language, built, sources, metrics, job.path("card", "output").parent)


def _finish_language_variant(job: BuildJob, built: fmt.BuiltBenchmark) -> dict[str, Any]:
    """One language of an XQuAD entry: named ``<entry>-<language>``, from the English and that language's file."""
    language = job.wildcards["language"]
    sources = {"eng": job.path("english"), language: job.path("language")}
    name = f"{job.entry.name}-{language}"
    return _finish(name, job.entry, language, built, sources, job.metrics, job.path("card", "output").parent)


def build_cross_lingual_variant(job: BuildJob) -> dict[str, Any]:
    """XQuAD questions in the job's language against the base benchmark's long English documents."""
    from posir.builders.xquad import CrossLingualBenchmark, cross_lingual_queries

    entry, metrics = job.entry, job.metrics
    assert isinstance(entry, CrossLingualBenchmark)
    base_dir = job.path("base_corpus").parent
    english_path, language_path = job.path("english"), job.path("language")
    corpus = fmt.read_corpus(base_dir / fmt.CORPUS)
    locations = {
        r["paragraph_sha256"]: (r["doc_id"], int(r["char_offset"])) for r in fmt.read_table(base_dir / fmt.PARAGRAPHS)
    }
    tokens = {r["doc_id"]: int(r["token_length"]) for r in fmt.read_table(base_dir / fmt.DOCUMENTS)}
    built = cross_lingual_queries(
        load_squad_file(english_path),
        load_squad_file(language_path),
        corpus,
        locations,
        tokens,
        metrics.buckets,
        metrics.n_bins,
    )
    fmt.validate(corpus, built.queries, built.positions, built.evidence)
    built.notes.append(
        f"Queries only: the corpus is benchmark '{entry.corpus_from}' (English long documents), embedded once "
        f"and shared by every language; spans and positions are those of xquad.en.json in those documents."
    )
    return _finish_language_variant(job, built)


def build_parallel_variant(job: BuildJob) -> dict[str, Any]:
    """One language of the parallel XQuAD documents (same partition in every language)."""
    from posir.builders.xquad import ParallelBenchmark, parallel_documents
    from posir.text import qwen3_token_counter

    entry, metrics, language = job.entry, job.metrics, job.wildcards["language"]
    assert isinstance(entry, ParallelBenchmark)
    english_path, language_path = job.path("english"), job.path("language")
    built = parallel_documents(
        load_squad_file(english_path),
        load_squad_file(language_path),
        language,
        entry.params,
        qwen3_token_counter(),
        metrics.buckets,
        metrics.n_bins,
    )
    per_bucket = Counter(bucket_of(n, metrics.buckets) for n in built.doc_token_lengths.values())
    reached = ", ".join(f"{b}: {per_bucket[b]}" for b in metrics.bucket_names)
    built.notes += [
        f"Parallel documents only reach the short buckets: XQuAD keeps 5 paragraphs per article, so documents "
        f"per bucket are {reached}. Use the cross-lingual benchmark on long English documents for Q3-Q4.",
        "Token lengths, relative positions, bins and buckets come from the English counterpart document "
        "(PosIR 5.1); span_start/span_end are verified in this language's own document, whose own relative "
        "position is the own_relative_position column.",
    ]
    return _finish_language_variant(job, built)


def build_text_collection(job: CollectionJob) -> dict[str, Any]:
    """A renormalization collection as a corpus (``corpus.jsonl``) with its card and drop report."""
    from posir.builders.text_collections import finish_collection, python_reference_texts, read_texts, select_sentences

    source_path = job.path("source") if "source" in job.input else None
    texts = read_texts(source_path) if source_path else python_reference_texts()
    documents, drops, stage = select_sentences(texts, job.entry, prefix=f"{job.name}-")
    origin = f"source file {source_path.name}" if source_path else "CPython reference documentation (pydoc_data.topics)"
    parameters = job.entry.model_dump(mode="json", exclude={"source"} if job.entry.source is None else set())
    return finish_collection(job.name, documents, drops, [stage], origin, parameters, job.path("card", "output").parent)
