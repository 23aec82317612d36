"""Steps: build a benchmark (or one language of it) from its sources and write its contract."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.builders import BuilderParams
from posir.builders.squad_format import load_squad_file
from posir.config import MetricParams
from posir.metrics.positions import bucket_of


def _finish(name: str, entry: Mapping[str, Any], language: str, built: fmt.BuiltBenchmark,
            sources: Mapping[str, Any], metrics: MetricParams, out_dir: Path) -> dict[str, Any]:
    """Subsample if the entry asks (``params.max_queries``), then validate and write the contract."""
    params = BuilderParams.from_entry(entry)
    built = fmt.subsample(built, params.max_queries, params.seed)
    provenance = fmt.Provenance(name=name, builder=entry["builder"], language=language,
                                parameters=dict(entry.get("params") or {}), sources=sources,
                                provenance=entry.get("provenance"), notes=list(entry.get("notes") or []))
    return fmt.finish(built, provenance, metrics.buckets, metrics.n_bins, Path(out_dir))


def build_benchmark(name: str, entry: Mapping[str, Any], source_paths: Mapping[str, Path], metrics: MetricParams,
                    out_dir: Path) -> dict[str, Any]:
    """Long documents from a SQuAD-format file (PosIR 3.1 sampling); writes the contract, returns the card."""
    from posir.builders.squad import SquadParams, build_squad_long
    from posir.text import qwen3_token_counter

    built = build_squad_long(load_squad_file(source_paths["squad"]), SquadParams.from_config(entry["params"]),
                             qwen3_token_counter(), metrics.buckets, metrics.n_bins)
    return _finish(name, entry, entry["language"], built, source_paths, metrics, out_dir)


def build_cross_lingual_variant(name: str, entry: Mapping[str, Any], language: str, english_path: Path,
                                language_path: Path, base_dir: Path, metrics: MetricParams,
                                out_dir: Path) -> dict[str, Any]:
    """XQuAD questions in ``language`` against the base benchmark's long English documents."""
    from posir.builders.xquad import cross_lingual_queries

    base_dir = Path(base_dir)
    corpus = fmt.read_corpus(base_dir / fmt.CORPUS)
    locations = {r["paragraph_sha256"]: (r["doc_id"], int(r["char_offset"]))
                 for r in fmt.read_table(base_dir / fmt.PARAGRAPHS)}
    tokens = {r["doc_id"]: int(r["token_length"]) for r in fmt.read_table(base_dir / fmt.DOCUMENTS)}
    built = cross_lingual_queries(load_squad_file(english_path), load_squad_file(language_path), corpus, locations,
                                  tokens, metrics.buckets, metrics.n_bins)
    fmt.validate(corpus, built.queries, built.positions, built.evidence)
    built.notes.append(
        f"Queries only: the corpus is benchmark '{entry['corpus_from']}' (English long documents), embedded once "
        f"and shared by every language; spans and positions are those of xquad.en.json in those documents.")
    return _finish(f"{name}-{language}", entry, language, built, {"eng": english_path, language: language_path},
                   metrics, out_dir)


def build_parallel_variant(name: str, entry: Mapping[str, Any], language: str, english_path: Path,
                           language_path: Path, metrics: MetricParams, out_dir: Path) -> dict[str, Any]:
    """One language of the parallel XQuAD documents (same partition in every language)."""
    from posir.builders.squad import SquadParams
    from posir.builders.xquad import parallel_documents
    from posir.text import qwen3_token_counter

    built = parallel_documents(load_squad_file(english_path), load_squad_file(language_path), language,
                               SquadParams.from_config(entry["params"]), qwen3_token_counter(), metrics.buckets,
                               metrics.n_bins)
    per_bucket = Counter(bucket_of(n, metrics.buckets) for n in built.doc_token_lengths.values())
    reached = ", ".join(f"{b}: {per_bucket[b]}" for b in metrics.bucket_names)
    built.notes += [
        f"Parallel documents only reach the short buckets: XQuAD keeps 5 paragraphs per article, so documents "
        f"per bucket are {reached}. Use the cross-lingual benchmark on long English documents for Q3-Q4.",
        "Token lengths, relative positions, bins and buckets come from the English counterpart document "
        "(PosIR 5.1); span_start/span_end are verified in this language's own document, whose own relative "
        "position is the own_relative_position column.",
    ]
    return _finish(f"{name}-{language}", entry, language, built, {"eng": english_path, language: language_path},
                   metrics, out_dir)


def build_text_collection(name: str, entry: Mapping[str, Any], source_path: Path | None, out_dir: Path) -> dict[str, Any]:
    """A renormalization collection as a corpus (``corpus.jsonl``) with its card and drop report."""
    from posir.builders.text_collections import CollectionParams, python_reference_texts, read_texts, select_sentences

    texts = read_texts(Path(source_path)) if source_path else python_reference_texts()
    documents, drops, stage = select_sentences(texts, CollectionParams.from_config(entry), prefix=f"{name}-")
    origin = f"source file {Path(source_path).name}" if source_path else "CPython reference documentation (pydoc_data.topics)"
    return fmt.finish_collection(name, documents, drops, [stage], origin, dict(entry), Path(out_dir))
