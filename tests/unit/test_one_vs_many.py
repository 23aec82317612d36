import pytest

from posir.metrics.language_bias import document_language, expand_qrels, language_shares
from posir.metrics.per_query import score_queries, trec_eval_order


def test_every_parallel_copy_of_the_positive_is_relevant():
    qrels = expand_qrels({"q": {"d1": 1}}, ["eng", "deu"])
    assert qrels == {"q": {"eng:d1": 1, "deu:d1": 1}}
    # retrieving both copies first is perfect; one copy alone is not
    assert score_queries(qrels, {"q": {"deu:d1": 2.0, "eng:d1": 1.0}})["q"]["ndcg@10"] == pytest.approx(1.0)
    assert score_queries(qrels, {"q": {"deu:d1": 2.0}})["q"]["ndcg@10"] == pytest.approx(
        1 / (1 + 1 / __import__("math").log2(3))
    )


def test_language_shares_sum_to_one_and_count_the_top_only():
    run = {
        "q1": {"eng:a": 3.0, "eng:b": 2.0, "deu:a": 1.0, "zho:a": 0.5},
        "q2": {"deu:b": 3.0, "eng:c": 2.0, "zho:b": 1.0, "zho:c": 0.1},
    }
    shares = language_shares(((q, trec_eval_order(r)) for q, r in run.items()), depth=3)
    assert shares == pytest.approx({"eng": 3 / 6, "deu": 2 / 6, "zho": 1 / 6})
    assert sum(shares.values()) == pytest.approx(1.0)


def test_unprefixed_ids_are_an_error():
    with pytest.raises(ValueError, match="prefix"):
        document_language("Super_Bowl_50-00")
