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
