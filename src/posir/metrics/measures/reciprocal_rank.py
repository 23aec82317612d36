"""RR@k: the reciprocal rank of the first relevant document among the first k, 0 when none is there.

trec_eval's ``recip_rank`` has no cutoff of its own, so the run is cut to its first k documents (in trec_eval's
order) first; the mean over queries is MRR@k, the column's name (``mrr@10``) and MTEB's (``mrr_at_10``).
"""

from __future__ import annotations

from dataclasses import dataclass

from posir.metrics.measure import RankingMeasure


@dataclass(frozen=True)
class ReciprocalRank(RankingMeasure):
    family = "RR"
    stem = "mrr"
    trec_eval = "recip_rank"
    mteb = "mrr_at"
    cuts_run = True
