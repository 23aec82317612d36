"""Exact dense search (a flat inner-product index: no approximation in the numbers)."""

from __future__ import annotations

import numpy as np


def exact_inner_product_search(queries: np.ndarray, documents: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, indices) by inner product with a flat (exact) faiss index."""
    import faiss

    if queries.shape[1] != documents.shape[1]:
        raise ValueError(f"query vectors have {queries.shape[1]} dimensions, documents {documents.shape[1]}")
    index = faiss.IndexFlatIP(documents.shape[1])
    index.add(np.ascontiguousarray(documents, dtype=np.float32))
    scores, indices = index.search(np.ascontiguousarray(queries, dtype=np.float32), min(k, documents.shape[0]))
    return scores, indices


def best_window_search(
    queries: np.ndarray, windows: np.ndarray, window_documents: np.ndarray, n_documents: int, k: int, batch: int = 256
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` documents per query where a document scores as its best window (exact, MaxP over windows).

    ``window_documents[i]`` is the document of window ``i``; windows of a document need not be adjacent.
    Rows are padded with index -1 when fewer than ``k`` documents exist. Every inner product is computed:
    a top-``k`` over windows could miss a document whose best window ranks below ``k`` other windows.
    """
    if queries.shape[1] != windows.shape[1]:
        raise ValueError(f"query vectors have {queries.shape[1]} dimensions, windows {windows.shape[1]}")
    order = np.argsort(window_documents, kind="stable")
    sorted_docs = window_documents[order]
    starts = np.flatnonzero(np.r_[True, sorted_docs[1:] != sorted_docs[:-1]])
    present = sorted_docs[starts]
    k = min(k, n_documents)
    scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    indices = np.full((len(queries), k), -1, dtype=np.int64)
    grouped = np.ascontiguousarray(windows[order], dtype=np.float32)
    for first in range(0, len(queries), batch):
        block = np.ascontiguousarray(queries[first : first + batch], dtype=np.float32) @ grouped.T
        best = np.maximum.reduceat(block, starts, axis=1)  # one column per document that has windows
        top = min(k, best.shape[1])
        part = np.argpartition(-best, top - 1, axis=1)[:, :top]
        part_scores = np.take_along_axis(best, part, axis=1)
        ranked = np.argsort(-part_scores, axis=1, kind="stable")
        scores[first : first + len(block), :top] = np.take_along_axis(part_scores, ranked, axis=1)
        indices[first : first + len(block), :top] = present[np.take_along_axis(part, ranked, axis=1)]
    return scores, indices
