"""MaxSim search (posir.retrieval.maxsim_search) against the bare torch matrix products of the same shapes.

The goals (docs/late-interaction.md, "Memory and time"): exact MaxSim runs at least at half the speed of a torch
matmul of the same shape on the same machine, within 2 GB of memory for squad-long, and within 1.5x of the textbook
batched kernel on the same vectors (:func:`bare_kernel`: padded tensors, ``amax`` and ``sum``, as one would write it
in PyTorch), whose scores it must equal. The products are the very
blocks the search multiplies (query-token blocks times document-token blocks, float32, torch's matmul on the same
threads), so the ratio is what the reductions, the float16-to-float32 conversion and the top k add.

Shapes: a text set's token files when given (``--queries results/embeddings/M/squad-long/queries.tokens.npy
--corpus .../corpus.tokens.npy``), otherwise synthetic float16 vectors of a named shape: ``squad-long`` is MiniLM's
unpooled tokens of the default run's squad-long (10,570 queries of 16 tokens, 426 documents of 256 tokens, 384
dimensions); ``squad-long-chunks`` its windows (2,405 rows of 254 tokens); ``--scale`` shrinks the queries for a
quick look. CPU seconds and peak RSS are read from the process (on a shared machine quote the ratio).

    python perf/maxsim_speed.py --shape squad-long --threads 1
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

SHAPES = {
    # queries, query tokens, rows, row tokens, rows per document, dimension
    "squad-long": (10570, 16, 426, 256, 1, 384),
    "squad-long-chunks": (10570, 16, 2405, 254, 6, 384),
    "colbert-squad-long": (10570, 32, 426, 180, 1, 128),
}


def synthetic(shape: str, scale: float, folder: Path) -> tuple:
    """Random float16 token vectors of a shape, written to .npy files in ``folder`` a slice at a time and read back
    memory-mapped, as the workflow reads a text set's token vectors (so the peak memory is the search's)."""
    from numpy.lib.format import open_memmap

    from posir.retrieval.maxsim import TokenMatrix

    queries, query_tokens, rows, row_tokens, per_document, dim = SHAPES[shape]
    queries = max(1, int(queries * scale))
    rng = np.random.default_rng(0)

    def matrix(name: str, n: int, tokens: int) -> TokenMatrix:
        path = folder / f"{name}.npy"
        out = open_memmap(path, mode="w+", dtype=np.float16, shape=(n * tokens, dim))
        for start in range(0, n * tokens, 65536):
            end = min(start + 65536, n * tokens)
            out[start:end] = rng.standard_normal((end - start, dim), dtype=np.float32)
        out.flush()
        del out
        return TokenMatrix(np.load(path, mmap_mode="r"), np.arange(n + 1, dtype=np.int64) * tokens)

    documents = np.arange(rows) // per_document
    return (
        matrix("queries", queries, query_tokens),
        matrix("corpus", rows, row_tokens),
        documents,
        int(documents[-1]) + 1,
    )


def from_files(queries_path: str, corpus_path: str) -> tuple:
    from posir.results.embeddings import load_token_vectors
    from posir.retrieval.maxsim import TokenMatrix

    queries, corpus = load_token_vectors(queries_path), load_token_vectors(corpus_path)
    ids = corpus.ids
    documents = np.cumsum([0] + [ids[i] != ids[i - 1] for i in range(1, len(ids))])
    return (
        TokenMatrix(queries.vectors, queries.offsets),
        TokenMatrix(corpus.vectors, corpus.offsets),
        documents,
        int(documents[-1]) + 1,
    )


def bare_products(queries, corpus, documents) -> float:  # noqa: ANN001
    """CPU seconds of the search's matrix products alone (the same blocks, the same buffer, no reductions)."""
    from posir.retrieval.maxsim import DOCUMENT_BLOCK_TOKENS, QUERY_BLOCK_TOKENS, _blocks, _Products

    products = _Products()
    query_blocks = [
        np.asarray(queries.vectors[queries.offsets[a] : queries.offsets[b]], dtype=np.float32)
        for a, b in _blocks(queries.offsets, np.arange(queries.rows), QUERY_BLOCK_TOKENS)
    ]
    started = time.process_time()
    for first, end in _blocks(corpus.offsets, documents, DOCUMENT_BLOCK_TOKENS):
        block = np.asarray(corpus.vectors[corpus.offsets[first] : corpus.offsets[end]], dtype=np.float32)
        for query_block in query_blocks:
            products(query_block, block)
    return time.process_time() - started


def _padded(matrix, first: int, end: int, torch):  # noqa: ANN001, ANN202
    """Rows ``first:end`` as one (rows, longest, dim) float32 tensor, each row padded with copies of its own last
    token (a copy changes no maximum, and a padded query token scores its row's own last token again: so queries are
    padded with zero vectors instead, which add 0 to a sum of maxima)."""
    lengths = np.diff(matrix.offsets[first : end + 1])
    longest = int(lengths.max())
    vectors = np.asarray(matrix.vectors[matrix.offsets[first] : matrix.offsets[end]], dtype=np.float32)
    index = (
        np.minimum(np.arange(longest)[None, :], lengths[:, None] - 1)
        + (matrix.offsets[first:end] - matrix.offsets[first])[:, None]
    )
    return torch.from_numpy(vectors[index]), torch.from_numpy(lengths)


def bare_kernel(
    queries, corpus, documents, n_documents: int, k: int, queries_per_block: int = 256, rows_per_block: int = 32
):  # noqa: ANN001
    """The textbook batched MaxSim on the same vectors (padded tensors, one matmul per block pair, ``amax`` over
    document tokens, ``sum`` over query tokens, the best row per document, ``topk``): CPU seconds and its top k."""
    import torch

    started = time.process_time()
    all_scores = torch.full((queries.rows, n_documents), -torch.inf)
    row_documents = torch.from_numpy(np.asarray(documents, dtype=np.int64))
    corpus_blocks = [
        _padded(corpus, a, min(a + rows_per_block, corpus.rows), torch)[0]
        for a in range(0, corpus.rows, rows_per_block)
    ]
    for first in range(0, queries.rows, queries_per_block):
        end = min(first + queries_per_block, queries.rows)
        query_vectors, lengths = _padded(queries, first, end, torch)
        mask = (torch.arange(query_vectors.shape[1])[None, :] < lengths[:, None]).float()
        query_vectors = query_vectors * mask[:, :, None]
        row = 0
        for block in corpus_blocks:
            n_rows, row_tokens, dim = block.shape
            products = (query_vectors.reshape(-1, dim) @ block.reshape(-1, dim).T).view(
                end - first, -1, n_rows, row_tokens
            )
            per_row = products.amax(dim=3).sum(dim=1)
            targets = row_documents[row : row + n_rows].expand(end - first, -1)
            all_scores[first:end].scatter_reduce_(1, targets, per_row, reduce="amax")
            row += n_rows
    top = torch.topk(all_scores, min(k, n_documents), dim=1)
    return time.process_time() - started, top.values.numpy(), top.indices.numpy()


def _first_queries(queries, scale: float):  # noqa: ANN001, ANN202
    from posir.retrieval.maxsim import TokenMatrix

    n = max(1, int(queries.rows * scale))
    return TokenMatrix(queries.vectors[: queries.offsets[n]], queries.offsets[: n + 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="squad-long")
    parser.add_argument("--scale", type=float, default=1.0, help="share of the shape's queries (a quick look)")
    parser.add_argument("--queries", help="a queries.tokens.npy file instead of a synthetic shape")
    parser.add_argument("--corpus", help="its corpus.tokens.npy")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--k", type=int, default=1000)
    args = parser.parse_args()

    import torch

    from posir.retrieval.maxsim import maxsim_search

    torch.set_num_threads(args.threads)
    if args.queries:
        queries, corpus, documents, n_documents = from_files(args.queries, args.corpus)
        queries = _first_queries(queries, args.scale)
        label = f"{args.queries} (scale {args.scale}) against {args.corpus}"
    else:
        scratch = tempfile.TemporaryDirectory(prefix="maxsim-speed-")
        queries, corpus, documents, n_documents = synthetic(args.shape, args.scale, Path(scratch.name))
        label = f"synthetic {args.shape} (scale {args.scale})"
    tokens_q, tokens_d, dim = len(queries.vectors), len(corpus.vectors), queries.vectors.shape[1]
    flops = 2 * tokens_q * tokens_d * dim
    print(f"{label}: {queries.rows} queries, {tokens_q} query tokens x {tokens_d} document tokens x {dim} dims")
    matmul_s = bare_products(queries, corpus, documents)
    started = time.process_time()
    scores, indices = maxsim_search(queries, [corpus], [documents], n_documents, args.k)
    search_s = time.process_time() - started
    kernel_s, kernel_scores, kernel_indices = bare_kernel(queries, corpus, documents, n_documents, args.k)
    largest = float(np.max(np.abs(kernel_scores - scores)))
    same_first = float(np.mean(kernel_indices[:, 0] == indices[:, 0]))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"torch matmul of the same blocks: {matmul_s:.2f} CPU s ({flops / matmul_s / 1e9:.1f} GFLOP/s)")
    print(f"MaxSim search (top {args.k}):    {search_s:.2f} CPU s")
    print(f"speed ratio (matmul time / search time): {matmul_s / search_s:.2f} (goal: at least 0.5)")
    print(f"bare batched kernel (padded matmul, amax, sum, topk): {kernel_s:.2f} CPU s")
    print(f"search time / bare kernel time: {search_s / kernel_s:.2f} (goal: at most 1.5)")
    print(f"largest |score difference| to the bare kernel: {largest:.2e}; same first document: {same_first:.1%}")
    print(f"peak RSS of the process: {peak_mb:.0f} MB (threads {args.threads})")


if __name__ == "__main__":
    main()
