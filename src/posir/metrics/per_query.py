"""Per-query effectiveness with trec_eval semantics (through pytrec_eval).

nDCG@10 and Recall@100 come straight from trec_eval. MRR@10 is trec_eval's
``recip_rank`` on the run cut to its first ten documents, ranked as trec_eval
ranks them: score descending, ties broken by document id descending.
Every query of the qrels gets a row; a query the run lacks scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping

MEASURES: tuple[str, ...] = ("ndcg@10", "recall@100", "mrr@10")

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def trec_eval_order(ranking: Mapping[str, float]) -> list[str]:
    """Document ids in trec_eval's order (score descending, then id descending)."""
    return sorted(ranking, key=lambda doc: (ranking[doc], doc), reverse=True)


def cut_run(run: Run, depth: int) -> dict[str, dict[str, float]]:
    return {qid: {doc: ranking[doc] for doc in trec_eval_order(ranking)[:depth]} for qid, ranking in run.items()}


def score_queries(qrels: Qrels, run: Run) -> dict[str, dict[str, float]]:
    import pytrec_eval

    qrels_plain = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()}
    run_plain = {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items() if q in qrels_plain}
    full = pytrec_eval.RelevanceEvaluator(qrels_plain, {"ndcg_cut.10", "recall.100"}).evaluate(run_plain)
    top10 = pytrec_eval.RelevanceEvaluator(qrels_plain, {"recip_rank"}).evaluate(cut_run(run_plain, 10))
    scores: dict[str, dict[str, float]] = {}
    for qid in qrels_plain:
        scores[qid] = {
            "ndcg@10": full.get(qid, {}).get("ndcg_cut_10", 0.0),
            "recall@100": full.get(qid, {}).get("recall_100", 0.0),
            "mrr@10": top10.get(qid, {}).get("recip_rank", 0.0),
        }
    return scores
