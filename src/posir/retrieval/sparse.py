"""Exact sparse search: every query's dot product with every document's sparse vector (scipy.sparse), top ``k``.

SPLADE's relevance score is the dot product of the query's and the document's vocabulary-sized vectors (Formal et
al., SIGIR 2021, section 3); a chunked document scores as its best window. Queries go in chunks whose dense score
matrix fits :data:`SCORE_MATRIX_BYTES`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from posir.retrieval.maxsim import top_k

SCORE_MATRIX_BYTES = 256 * 2**20


def sparse_matrix(terms: np.ndarray, weights: np.ndarray, offsets: np.ndarray, vocabulary: int):  # noqa: ANN201
    """Rows' sparse vectors (terms and weights row after row, ``offsets`` as in posir.results.embeddings.RowSet) as
    a CSR matrix of ``vocabulary`` columns (float32)."""
    from scipy.sparse import csr_matrix

    return csr_matrix(
        (np.asarray(weights, dtype=np.float32), np.asarray(terms, dtype=np.int32), np.asarray(offsets, dtype=np.int64)),
        shape=(len(offsets) - 1, vocabulary),
    )


def sparse_scores(queries, corpus, row_documents: np.ndarray, n_documents: int) -> np.ndarray:  # noqa: ANN001
    """Dot products (float32, query rows x documents): each document's best row."""
    products = np.asarray((queries @ corpus.T).toarray(), dtype=np.float32)
    scores = np.full((products.shape[0], n_documents), -np.inf, dtype=np.float32)
    if products.shape[1] == 0:
        return scores
    starts = np.flatnonzero(np.r_[True, row_documents[1:] != row_documents[:-1]])
    scores[:, row_documents[starts]] = np.maximum.reduceat(products, starts, axis=1)
    return scores


def sparse_search(
    queries,
    corpora: Sequence,
    row_documents: Sequence[np.ndarray],
    n_documents: int,
    k: int,  # noqa: ANN001
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, document indices) per query by the dot product over the rows of every corpus (CSR
    matrices of one vocabulary), each row of ``corpora[i]`` belonging to document ``row_documents[i][row]``."""
    rows = queries.shape[0]
    per_chunk = max(1, SCORE_MATRIX_BYTES // (4 * max(n_documents, 1)))
    scores = np.full((rows, min(k, n_documents)), -np.inf, dtype=np.float32)
    indices = np.full((rows, min(k, n_documents)), -1, dtype=np.int64)
    for first in range(0, rows, per_chunk):
        end = min(first + per_chunk, rows)
        chunk = np.full((end - first, n_documents), -np.inf, dtype=np.float32)
        for corpus, documents in zip(corpora, row_documents):
            chunk = np.maximum(chunk, sparse_scores(queries[first:end], corpus, np.asarray(documents), n_documents))
        scores[first:end], indices[first:end] = top_k(chunk, k)
    return scores, indices
