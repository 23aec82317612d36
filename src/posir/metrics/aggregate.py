"""Bucketed position metrics and the Position Sensitivity Index.

PosIR section 5.2: within each length bucket, mean nDCG@10 per relative
position bin; PSI = 1 - min/max over the bin means (Zeng et al., section 3.3).
A bucket's nDCG@10 is the mean of its non-empty bin means (PosIR's convention,
``ndcg@10_bin_mean``); the plain mean over the bucket's queries is reported
beside it as ``ndcg@10_query_mean``. PSI uses only bins holding at least
``min_bin_queries`` queries, and says which bins it skipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from posir.metrics.measures import POSITION_MEASURE
from posir.results import ALL


def psi(bin_means: Sequence[float]) -> float:
    """1 - min/max; NaN when there is nothing to compare or the best bin scores 0."""
    values = [v for v in bin_means if not math.isnan(v)]
    if not values or max(values) <= 0:
        return float("nan")
    return 1.0 - min(values) / max(values)


def bin_table(
    per_query: pd.DataFrame, buckets: Sequence[str], n_bins: int, metric: str = POSITION_MEASURE.column
) -> pd.DataFrame:
    """Long table: one row per (bucket or 'all', bin) with the mean metric and query count."""
    rows = []
    groups = [(ALL, per_query)] + [(b, per_query[per_query["length_bucket"] == b]) for b in buckets]
    for name, frame in groups:
        grouped = frame.groupby("position_bin")[metric].agg(["mean", "count"])
        for b in range(n_bins):
            count = int(grouped["count"].get(b, 0))
            mean = float(grouped["mean"].get(b, np.nan)) if count else float("nan")
            rows.append(
                {
                    "bucket": name,
                    "position_bin": b,
                    "bin_start": b / n_bins,
                    "bin_end": (b + 1) / n_bins,
                    "n_queries": count,
                    metric: mean,
                }
            )
    return pd.DataFrame(rows)


def summarize(
    per_query: pd.DataFrame, bins: pd.DataFrame, min_bin_queries: int, metric: str = POSITION_MEASURE.column
) -> pd.DataFrame:
    """One row per bucket (and 'all'): counts, both bucket means, PSI and skipped bins."""
    rows = []
    for name, frame in bins.groupby("bucket", sort=False):
        filled = frame[frame["n_queries"] > 0]
        eligible = filled[filled["n_queries"] >= min_bin_queries]
        skipped = filled[filled["n_queries"] < min_bin_queries]["position_bin"].tolist()
        queries = per_query if name == ALL else per_query[per_query["length_bucket"] == name]
        rows.append(
            {
                "bucket": name,
                "n_queries": int(len(queries)),
                f"{metric}_bin_mean": float(filled[metric].mean()) if len(filled) else float("nan"),
                f"{metric}_query_mean": float(queries[metric].mean()) if len(queries) else float("nan"),
                "psi": psi(eligible[metric].tolist()),
                "psi_bins_used": int(len(eligible)),
                "psi_bins_skipped": ",".join(str(b) for b in skipped),
            }
        )
    return pd.DataFrame(rows)
