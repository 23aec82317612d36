"""Exact MaxSim search over every document token vector (Khattab and Zaharia, SIGIR 2020, ColBERT, Eq. 1 and
section 3.6, "end-to-end retrieval": here exhaustive, no candidate generation, so nothing is missed).

A query's score for a document is the sum over its token vectors of the best inner product with any of the
document's token vectors; a chunked document (several rows, its windows) scores as its best row. The corpus is
streamed in blocks of whole documents, its float16 vectors turned into float32 one block at a time, so memory holds
one block of documents, one block of query tokens, their product, and the score matrix of a chunk of queries:

1. ``S = Q_block @ D_block.T`` (torch's matmul, on its threads),
2. the best document token per row: ``numpy.maximum.reduceat`` over each row's tokens (one pass over ``S``),
3. the sum over each query's tokens (``numpy.add.reduceat``), 4. the best row of each document,

then the top ``k`` of each query's scores. perf/maxsim_speed.py times this against the bare matrix products of the
same shapes (docs/late-interaction.md, "Memory and time").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

#: query tokens x document tokens of one product (float32): 4096 x 8192 x 4 bytes = 128 MiB
QUERY_BLOCK_TOKENS = 4096
DOCUMENT_BLOCK_TOKENS = 8192
#: the scores of a chunk of queries against every document are held at most this large
SCORE_MATRIX_BYTES = 256 * 2**20


@dataclass(frozen=True)
class TokenMatrix:
    """Token vectors of rows, row after row (``vectors``: (T, dim), any float dtype, memory-mapped is fine) and
    each row's range (``offsets``: (rows + 1,))."""

    vectors: np.ndarray
    offsets: np.ndarray

    @property
    def rows(self) -> int:
        return len(self.offsets) - 1


def _blocks(offsets: np.ndarray, groups: np.ndarray, budget: int) -> Iterator[tuple[int, int]]:
    """Consecutive (first, end) ranges of rows of whole groups (a group: rows with equal ``groups`` values, which
    are adjacent) holding at most ``budget`` tokens each, or one group when a group alone is larger."""
    n = len(offsets) - 1
    first = 0
    while first < n:
        end = first + 1
        while end < n and groups[end] == groups[end - 1]:
            end += 1  # the first group, whole
        while end < n:
            following = end + 1
            while following < n and groups[following] == groups[following - 1]:
                following += 1
            if offsets[following] - offsets[first] > budget:
                break
            end = following
        yield first, end
        first = end


def _starts(segments: np.ndarray) -> np.ndarray:
    """The start index of each run of equal values in ``segments`` (for reduceat)."""
    return np.flatnonzero(np.r_[True, segments[1:] != segments[:-1]])


class _Products:
    """``Q @ D.T`` into one reused float32 buffer, with torch's matmul (its threads, its kernels)."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self.buffer = torch.empty(QUERY_BLOCK_TOKENS * DOCUMENT_BLOCK_TOKENS, dtype=torch.float32)

    def __call__(self, queries: np.ndarray, documents: np.ndarray) -> np.ndarray:
        torch = self.torch
        size = len(queries) * len(documents)
        if size > self.buffer.numel():
            self.buffer = torch.empty(size, dtype=torch.float32)
        out = self.buffer[:size].view(len(queries), len(documents))
        torch.matmul(torch.from_numpy(queries), torch.from_numpy(documents).T, out=out)
        return out.numpy()


def maxsim_scores(
    queries: TokenMatrix,
    corpus: TokenMatrix,
    row_documents: np.ndarray,
    n_documents: int,
    query_rows: tuple[int, int] | None = None,
    on_pairs: Callable[[int], None] | None = None,
) -> np.ndarray:
    """MaxSim scores (float32, queries x documents) of the query rows ``query_rows`` (default all) against every
    document; ``row_documents[r]`` is the document of corpus row ``r`` (a document's rows are adjacent).
    ``on_pairs(n)`` is told of each ``n`` (query, document) pairs scored (a job's progress)."""
    first_query, end_query = query_rows or (0, queries.rows)
    scores = np.full((end_query - first_query, n_documents), -np.inf, dtype=np.float32)
    products = _Products()
    query_groups = np.arange(queries.rows)
    query_ranges = [
        (first_query + a, first_query + b)
        for a, b in _blocks(
            queries.offsets[first_query : end_query + 1] - queries.offsets[first_query],
            query_groups[first_query:end_query],
            QUERY_BLOCK_TOKENS,
        )
    ]
    query_blocks = [
        (
            a,
            b,
            np.asarray(queries.vectors[queries.offsets[a] : queries.offsets[b]], dtype=np.float32),
            queries.offsets[a:b] - queries.offsets[a],
        )
        for a, b in query_ranges
    ]
    for first, end in _blocks(corpus.offsets, row_documents, DOCUMENT_BLOCK_TOKENS):
        block = np.asarray(corpus.vectors[corpus.offsets[first] : corpus.offsets[end]], dtype=np.float32)
        row_starts = corpus.offsets[first:end] - corpus.offsets[first]
        documents = row_documents[first:end]
        document_starts = _starts(documents)
        columns = documents[document_starts]
        for a, b, query_vectors, query_starts in query_blocks:
            product = products(query_vectors, block)
            best_token = np.maximum.reduceat(product, row_starts, axis=1)
            per_row = np.add.reduceat(best_token, query_starts, axis=0)
            per_document = np.maximum.reduceat(per_row, document_starts, axis=1)
            rows = slice(a - first_query, b - first_query)
            scores[rows, columns] = np.maximum(scores[rows, columns], per_document)
            if on_pairs is not None:
                on_pairs((b - a) * len(columns))
    return scores


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` best columns (scores descending, ties by column), padded with index -1 past the columns
    that have a score (a document absent from the corpus keeps -inf and is not returned)."""
    k = min(k, scores.shape[1])
    out_scores = np.full((len(scores), k), -np.inf, dtype=np.float32)
    out_indices = np.full((len(scores), k), -1, dtype=np.int64)
    if k == 0:
        return out_scores, out_indices
    part = (
        np.argpartition(-scores, k - 1, axis=1)[:, :k]
        if k < scores.shape[1]
        else np.tile(np.arange(k), (len(scores), 1))
    )
    part_scores = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -part_scores), axis=1)
    ranked_scores = np.take_along_axis(part_scores, order, axis=1)
    ranked = np.take_along_axis(part, order, axis=1)
    present = np.isfinite(ranked_scores)
    out_scores[present] = ranked_scores[present]
    out_indices[present] = ranked[present]
    return out_scores, out_indices


def maxsim_search(
    queries: TokenMatrix,
    corpora: Sequence[TokenMatrix],
    row_documents: Sequence[np.ndarray],
    n_documents: int,
    k: int,
    on_pairs: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, document indices) per query by MaxSim over the rows of every corpus (several files of one
    corpus, one-vs-many), each row of ``corpora[i]`` belonging to document ``row_documents[i][row]``;
    ``on_pairs(n)`` as :func:`maxsim_scores` (in all, :func:`pairs_to_score` pairs).

    Queries go in chunks whose score matrix fits :data:`SCORE_MATRIX_BYTES`; each chunk reads the corpus once."""
    per_chunk = max(1, SCORE_MATRIX_BYTES // (4 * max(n_documents, 1)))
    scores = np.full((queries.rows, min(k, n_documents)), -np.inf, dtype=np.float32)
    indices = np.full((queries.rows, min(k, n_documents)), -1, dtype=np.int64)
    for first in range(0, queries.rows, per_chunk):
        end = min(first + per_chunk, queries.rows)
        chunk = np.full((end - first, n_documents), -np.inf, dtype=np.float32)
        for corpus, documents in zip(corpora, row_documents):
            chunk = np.maximum(
                chunk, maxsim_scores(queries, corpus, np.asarray(documents), n_documents, (first, end), on_pairs)
            )
        scores[first:end], indices[first:end] = top_k(chunk, k)
    return scores, indices


def pairs_to_score(queries: TokenMatrix, row_documents: Sequence[np.ndarray]) -> int:
    """The (query, document) pairs :func:`maxsim_search` scores: every query against each corpus file's documents."""
    return queries.rows * sum(
        len(_starts(np.asarray(documents))) if len(documents) else 0 for documents in row_documents
    )
