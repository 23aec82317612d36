"""nDCG@k: normalised discounted cumulative gain at depth k, with trec_eval's gains and discounts (``ndcg_cut``).

PosIR (section 5.1) reports nDCG@10 per query; every position statistic of the workflow is computed on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from posir.metrics.measure import RankingMeasure


@dataclass(frozen=True)
class NDCG(RankingMeasure):
    family = "nDCG"
    stem = "ndcg"
    trec_eval = "ndcg_cut"
    mteb = "ndcg_at"
