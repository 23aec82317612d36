"""Our bucket nDCG@10 and PSI against PosIR's own pandas recipe, on a real per-query table.

The recipe is written here from PosIR's published analysis (``ndcg_PSI_analysis.py``,
PosIR sections 4.1 and 5.2): relative position = span midpoint / document length,
``pd.cut(relpos, bins=np.linspace(0, 1, 21), include_lowest=True)``; length buckets
``pd.cut(tokens, [0, 512, 1024, 1536, inf])``; a bucket's nDCG@10 is the mean of its
non-empty bin means; PSI = 1 - min/max of those bin means, with no minimum count.
Our PSI skips bins holding fewer than ``min_bin_queries`` queries, so the two must agree
exactly wherever our rule skipped no bin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posir.config import MetricParams
from posir.metrics import aggregate
from tests._realdata import squad_bm25_per_query


def posir_recipe(per_query: pd.DataFrame) -> pd.DataFrame:
    """Per bucket: PosIR's bucket nDCG@10 (mean of non-empty bin means) and PSI (no minimum count)."""
    frame = per_query.copy()
    frame["relpos"] = (frame["span_start"] + frame["span_end"]) / 2 / frame["doc_char_length"]
    frame["pos_bin"] = pd.cut(frame["relpos"], bins=np.linspace(0, 1, 21), include_lowest=True)
    frame["bucket"] = pd.cut(
        frame["doc_token_length"], bins=[0, 512, 1024, 1536, np.inf], labels=["Q1", "Q2", "Q3", "Q4"]
    )
    rows = []
    for bucket, group in frame.groupby("bucket", observed=True):
        bin_means = group.groupby("pos_bin", observed=True)["ndcg@10"].mean()
        rows.append(
            {
                "bucket": str(bucket),
                "ndcg": bin_means.mean(),
                "psi": 1 - bin_means.min() / bin_means.max(),
                "bins": len(bin_means),
            }
        )
    return pd.DataFrame(rows).set_index("bucket")


@pytest.mark.parametrize("max_articles", [6, 12])
def test_bucket_ndcg_and_psi_equal_posir_recipe_where_no_bin_was_skipped(max_articles):
    per_query = squad_bm25_per_query(max_articles)
    metrics = MetricParams.from_config({})
    bins = aggregate.bin_table(per_query, metrics.bucket_names, metrics.n_bins)
    ours = aggregate.summarize(per_query, bins, metrics.min_bin_queries).set_index("bucket")
    reference = posir_recipe(per_query)
    compared = 0
    for bucket, expected in reference.iterrows():
        assert ours.loc[bucket, "ndcg@10_bin_mean"] == pytest.approx(expected["ndcg"], abs=1e-12)
        if ours.loc[bucket, "psi_bins_skipped"] == "":
            assert ours.loc[bucket, "psi_bins_used"] == expected["bins"]
            assert ours.loc[bucket, "psi"] == pytest.approx(expected["psi"], abs=1e-12)
            compared += 1
    assert compared >= 1, "no bucket without skipped bins: the comparison would be empty"


def test_our_bins_are_posir_bins_query_by_query():
    per_query = squad_bm25_per_query(12)
    relpos = (per_query["span_start"] + per_query["span_end"]) / 2 / per_query["doc_char_length"]
    cut = pd.cut(relpos, bins=np.linspace(0, 1, 21), include_lowest=True, labels=False)
    assert (cut.to_numpy() == per_query["position_bin"].to_numpy()).all()
