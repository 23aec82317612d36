"""A measure is one file: P@k lives in src/posir/metrics/measures/precision.py and nowhere else, and a config that
names it (or nDCG at another cutoff, which needs no file at all) gets it in every per-query table and in the MTEB
export, computed as trec_eval computes it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval

from posir.metrics.measures import families, parse, parse_ranking
from posir.metrics.measures.precision import Precision
from posir.metrics.params import MetricParams
from posir.metrics.per_query import score_queries
from posir.schema import ConfigError
from tests.conftest import REPO

QRELS = {"q1": {"d3": 1}, "q2": {"d9": 1}, "q3": {"d1": 1, "d2": 1}}
RUN = {
    "q1": {f"d{i}": 10.0 - i for i in range(1, 8)},  # d3 third
    "q2": {f"d{i}": 10.0 - i for i in range(1, 8)},  # d9 not retrieved
    "q3": {"d2": 3.0, "d5": 2.0},  # d2 first, d1 missing: a ranking shorter than 5
}


def test_the_family_is_found_in_its_own_file_and_named_in_no_other() -> None:
    assert families()["P"] is Precision
    assert parse("P@5") == Precision(cutoff=5)
    mentions = [
        path.relative_to(REPO)
        for path in (REPO / "src").rglob("*.py")
        if "Precision" in path.read_text(encoding="utf-8") and path.name != "precision.py"
    ]
    assert mentions == []


def test_precision_at_k_is_trec_evals_and_the_hand_count() -> None:
    measures = [parse_ranking("P@5"), parse_ranking("nDCG@20")]
    ours = score_queries(QRELS, RUN, measures)
    assert {q: v["precision@5"] for q, v in ours.items()} == {"q1": 1 / 5, "q2": 0.0, "q3": 1 / 5}
    reference = pytrec_eval.RelevanceEvaluator(QRELS, {"P.5", "ndcg_cut.20"}).evaluate(RUN)
    for qid in QRELS:
        assert ours[qid]["precision@5"] == reference[qid]["P_5"]
        assert ours[qid]["ndcg@20"] == reference[qid]["ndcg_cut_20"]


def test_the_config_names_measures_and_refuses_unknown_ones() -> None:
    params = MetricParams.from_config({"measures": ["nDCG@10", "R@100", "RR@10", "P@5", "nDCG@20"]})
    assert [m.column for m in params.ranking_measures()][3:] == ["precision@5", "ndcg@20"]
    with pytest.raises(ConfigError, match=r"metrics\.measures: 'Q@5' is not a measure; known: P, R, RR, nDCG"):
        MetricParams.from_config({"measures": ["nDCG@10", "Q@5"]}, "metrics")
    with pytest.raises(ConfigError, match=r"metrics\.measures: lacks nDCG@10"):
        MetricParams.from_config({"measures": ["P@5"]}, "metrics")


def test_a_configured_measure_reaches_the_per_query_table_and_the_mteb_export(tmp_path: Path) -> None:
    from posir.mteb_results import RunFiles, subset_scores
    from posir.steps.evaluation import bin_scores, bootstrap_scores, score_run, summarize_run

    params = MetricParams.from_config({"measures": ["nDCG@10", "R@100", "RR@10", "P@5", "nDCG@20"], "bootstrap": {}})
    measures = params.ranking_measures()
    positions = pd.DataFrame(
        {
            "qid": list(QRELS),
            "doc_id": ["d3", "d9", "d1"],
            "doc_token_length": 100,
            "length_bucket": "Q1",
            "relative_position": [0.1, 0.5, 0.9],
            "position_bin": [1, 9, 17],
            "span_start": 0,
            "span_end": 10,
            "doc_char_length": 100,
        }
    )
    positions.to_csv(tmp_path / "positions.tsv", sep="\t", index=False)
    (tmp_path / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, docs in QRELS.items() for d in docs)
    )
    (tmp_path / "run.trec").write_text(
        "".join(f"{q} Q0 {d} {i + 1} {s} t\n" for q, docs in RUN.items() for i, (d, s) in enumerate(docs.items()))
    )
    files = {name: tmp_path / f"{name}.tsv" for name in ("per_query", "bins", "summary", "bootstrap", "bins_ci")}
    per_query = score_run(
        tmp_path / "qrels.tsv", tmp_path / "positions.tsv", tmp_path / "run.trec", files["per_query"], measures=measures
    )
    assert list(per_query.columns[:6]) == ["qid", "ndcg@10", "recall@100", "mrr@10", "precision@5", "ndcg@20"]
    summarize_run(per_query, bin_scores(per_query, params, files["bins"]), params, files["summary"])
    bootstrap_scores(per_query, params, files["bootstrap"], files["bins_ci"])
    run = RunFiles(files["per_query"], files["summary"], files["bootstrap"], files["bins"])
    scores = subset_scores("eng-eng", run, "scores.tsv", measures)
    assert scores["precision_at_5"] == pytest.approx((1 / 5 + 0 + 1 / 5) / 3)
    assert scores["ndcg_at_20"] == pytest.approx(per_query["ndcg@20"].mean())
    assert scores["main_score"] == scores["ndcg_at_10"]
