"""P@k: the share of the first k documents that are relevant (trec_eval's ``P``; a ranking shorter than k counts
the missing ranks as non-relevant, as trec_eval does).

With one relevant document per query, P@k is 1/k when it is among the first k and 0 otherwise: R@k scaled by 1/k.
It is here as the example of a measure added by one file (``metrics.measures: [nDCG@10, R@100, RR@10, P@5]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from posir.metrics.measure import RankingMeasure


@dataclass(frozen=True)
class Precision(RankingMeasure):
    family = "P"
    stem = "precision"
    trec_eval = "P"
    mteb = "precision_at"
