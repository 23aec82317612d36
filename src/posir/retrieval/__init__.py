"""Exact search: no approximation in the numbers.

Dense vectors by inner product (:mod:`.dense`: a flat faiss index, the best window of a chunked corpus), token
vectors by MaxSim (:mod:`.maxsim`) and sparse vectors by their dot product (:mod:`.sparse`), each over the whole
corpus, top ``k`` per query. docs/late-interaction.md has the memory and time of the last two.
"""

from posir.retrieval.dense import best_window_search, exact_inner_product_search
from posir.retrieval.maxsim import maxsim_scores, maxsim_search
from posir.retrieval.sparse import sparse_matrix, sparse_search

__all__ = [
    "best_window_search",
    "exact_inner_product_search",
    "maxsim_scores",
    "maxsim_search",
    "sparse_matrix",
    "sparse_search",
]
