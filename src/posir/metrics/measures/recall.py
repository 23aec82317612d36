"""R@k: the share of a query's relevant documents among the first k (trec_eval's ``recall``)."""

from __future__ import annotations

from dataclasses import dataclass

from posir.metrics.measure import RankingMeasure


@dataclass(frozen=True)
class Recall(RankingMeasure):
    family = "R"
    stem = "recall"
    trec_eval = "recall"
    mteb = "recall_at"
