"""The measures this workflow reports, as named objects (in the manner of ``ir_measures``: ``nDCG@10``).

A :class:`Measure` knows its display name, the column it fills in per-query and
summary tables, and how pytrec_eval computes it. Everything downstream names
columns through these objects, never through string literals.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    """A per-query effectiveness measure with trec_eval semantics.

    ``trec_eval`` is the pytrec_eval measure to request and ``result`` the key it
    answers under; ``cut_run`` is the depth the run is cut to first (trec_eval's
    ``recip_rank`` has no cutoff of its own, so MRR@10 is computed on the top ten).
    """

    name: str
    column: str
    trec_eval: str
    result: str
    cut_run: int | None = None

    def __str__(self) -> str:
        return self.name

    def of(self, suffix: str) -> str:
        """A derived column: ``NDCG_10.of("bin_mean")`` is ``ndcg@10_bin_mean``."""
        return f"{self.column}_{suffix}"


NDCG_10 = Measure("nDCG@10", "ndcg@10", "ndcg_cut.10", "ndcg_cut_10")
RECALL_100 = Measure("R@100", "recall@100", "recall.100", "recall_100")
MRR_10 = Measure("RR@10", "mrr@10", "recip_rank", "recip_rank", cut_run=10)

#: Every per-query table holds these, in this order.
PER_QUERY: tuple[Measure, ...] = (NDCG_10, RECALL_100, MRR_10)
#: The measure bins, buckets, PSI and every table are computed on (PosIR section 5.2).
POSITION_MEASURE = NDCG_10
