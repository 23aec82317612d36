"""Per-query metrics against hand computations and against pytrec_eval itself."""

import math
import random

import pytest
import pytrec_eval

from posir.metrics.per_query import cut_run, score_queries, trec_eval_order


def _one_positive_run(rank_of_positive: int, n: int = 120) -> dict[str, float]:
    docs = {f"d{i:03d}": float(n - i) for i in range(n)}
    docs["pos"] = float(n - rank_of_positive + 1) + 0.5  # between the documents ranked r-1 and r
    return docs


@pytest.mark.parametrize("rank", [1, 2, 3, 10, 11, 100, 101])
def test_single_positive_matches_hand_computation(rank):
    qrels = {"q": {"pos": 1}}
    run = {"q": _one_positive_run(rank)}
    assert trec_eval_order(run["q"]).index("pos") + 1 == rank
    scores = score_queries(qrels, run)["q"]
    expected_ndcg = 1 / math.log2(rank + 1) if rank <= 10 else 0.0
    assert scores["ndcg@10"] == pytest.approx(expected_ndcg)
    assert scores["mrr@10"] == pytest.approx(1 / rank if rank <= 10 else 0.0)
    assert scores["recall@100"] == (1.0 if rank <= 100 else 0.0)


def test_queries_missing_from_the_run_score_zero_and_extra_run_queries_are_ignored():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 2.0, "x": 1.0}, "other": {"b": 1.0}}
    scores = score_queries(qrels, run)
    assert set(scores) == {"q1", "q2"}
    assert scores["q2"] == {"ndcg@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
    assert scores["q1"]["ndcg@10"] == 1.0


def test_ties_are_broken_as_trec_eval_does_by_descending_document_id():
    # all scores equal: trec_eval ranks 'z' first, then 'y', ... so 'a' is last
    run = {"q": {name: 1.0 for name in "abcdefghijklmnopqrstuvwxyz"}}
    assert trec_eval_order(run["q"])[:3] == ["z", "y", "x"]
    scores = score_queries({"q": {"q_pos": 1}}, {"q": {**run["q"], "q_pos": 1.0}})
    # 'q_pos' sorts after 'q' and before 'r' in descending order: ranks z..r (9 docs) then q_pos
    assert scores["q"]["mrr@10"] == pytest.approx(1 / 10)
    ndcg = pytrec_eval.RelevanceEvaluator({"q": {"q_pos": 1}}, {"ndcg_cut.10"}).evaluate(
        {"q": {**run["q"], "q_pos": 1.0}}
    )
    assert scores["q"]["ndcg@10"] == pytest.approx(ndcg["q"]["ndcg_cut_10"])
    assert ndcg["q"]["ndcg_cut_10"] == pytest.approx(1 / math.log2(11))


def test_random_runs_agree_with_pytrec_eval_and_uncut_reciprocal_rank():
    rng = random.Random(3)
    qrels, run = {}, {}
    for q in range(200):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(300)]
        qrels[qid] = {rng.choice(docs): 1}
        run[qid] = {d: round(rng.random(), 2) for d in rng.sample(docs, 150)}  # ties and misses on purpose
    ours = score_queries(qrels, run)
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "recip_rank"}).evaluate(run)
    for qid in qrels:
        assert ours[qid]["ndcg@10"] == pytest.approx(reference[qid]["ndcg_cut_10"])
        assert ours[qid]["recall@100"] == pytest.approx(reference[qid]["recall_100"])
        rr = reference[qid]["recip_rank"]
        assert ours[qid]["mrr@10"] == pytest.approx(rr if rr >= 1 / 10 else 0.0)


def test_cut_run_keeps_the_trec_eval_top():
    run = {"q": {"a": 1.0, "b": 3.0, "c": 3.0, "d": 0.5}}
    assert list(cut_run(run, 2)["q"]) == ["c", "b"]
