"""Per-query effectiveness with trec_eval semantics (through pytrec_eval).

nDCG@10 and Recall@100 come straight from trec_eval. MRR@10 is trec_eval's
``recip_rank`` on the run cut to its first ten documents, ranked as trec_eval
ranks them: score descending, ties broken by document id descending.
Every query of the qrels gets a row; a query the run lacks scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from posir.metrics.measure import RankingMeasure
from posir.metrics.measures import PER_QUERY

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def trec_eval_order(ranking: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval's order (score descending, then id descending)."""
    return sorted(ranking, key=lambda doc: (ranking[doc], doc), reverse=True)


def cut_run(run: Run, depth: int) -> dict[str, dict[str, float]]:
    return {qid: {doc: ranking[doc] for doc in trec_eval_order(ranking)[:depth]} for qid, ranking in run.items()}


def deepest_cutoff(measures: Sequence[RankingMeasure]) -> int:
    """How deep into a ranking the measures read: each reads its top ``cutoff`` documents in trec_eval's order."""
    return max(measure.cutoff for measure in measures)


def score_queries(
    qrels: Qrels, run: Run, measures: Sequence[RankingMeasure] = PER_QUERY
) -> dict[str, dict[str, float]]:
    """Per qrels query, every measure's value under its column name (0 for a query the run lacks)."""
    import pytrec_eval

    qrels_plain = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()}
    run_plain = {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items() if q in qrels_plain}
    results: dict[RankingMeasure, dict[str, dict[str, float]]] = {}
    for depth in dict.fromkeys(m.cut_run for m in measures):
        group = [m for m in measures if m.cut_run == depth]
        evaluated_run = run_plain if depth is None else cut_run(run_plain, depth)
        evaluated = pytrec_eval.RelevanceEvaluator(qrels_plain, {m.request for m in group}).evaluate(evaluated_run)
        results.update({m: evaluated for m in group})
    return {qid: {m.column: results[m].get(qid, {}).get(m.result, 0.0) for m in measures} for qid in qrels_plain}
