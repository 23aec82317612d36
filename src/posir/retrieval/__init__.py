"""Exact search: no approximation in the numbers.

Dense vectors by inner product (:mod:`.dense`: a flat faiss index, the best window of a chunked corpus), token
vectors by MaxSim (:mod:`.maxsim`) and sparse vectors by their dot product (:mod:`.sparse`), each over the whole
corpus, top ``k`` per query. docs/late-interaction.md has the memory and time of the last two.
"""

from posir.retrieval.dense import best_window_search, exact_inner_product_search

# maxsim and sparse are imported from their modules: what imports this package for dense search (the generation
# steps' recall check) needs neither torch nor scipy
__all__ = ["best_window_search", "exact_inner_product_search"]
