"""Bucketed position metrics and the Position Sensitivity Index of one run.

PosIR section 5.2: within each length bucket, mean nDCG@10 per relative position bin; PSI = 1 - min/max over the
bin means (Zeng et al., section 3.3; :mod:`posir.metrics.measures.psi`). A bucket's nDCG@10 is the mean of its
non-empty bin means (PosIR's convention, ``ndcg@10_bin_mean``); the plain mean over the bucket's queries is reported
beside it as ``ndcg@10_query_mean``. PSI uses only bins holding at least ``min_bin_queries`` queries, and says which
bins it skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from posir.metrics.columns import ALL, BIN_END, BIN_START, BUCKET, LENGTH_BUCKET, N_QUERIES, POSITION_BIN
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity

#: Per (bucket or ALL, position bin): the bin's edges, query count and mean nDCG@10 (NaN when empty).
BINS_COLUMNS = (BUCKET, POSITION_BIN, BIN_START, BIN_END, N_QUERIES, POSITION_MEASURE.column)
_PSI = PositionSensitivity()
#: Per bucket (and ALL): what :func:`summarize` computes and published results fill (posir.published).
BUCKET_STATISTICS = (BUCKET, N_QUERIES, _PSI.bin_mean, _PSI.query_mean, _PSI.column, _PSI.bins_used, _PSI.bins_skipped)


def psi(bin_means: Sequence[float]) -> float:
    """1 - min/max of one bucket's bin means; NaN when there is nothing to compare or the best bin scores 0."""
    return float(PositionSensitivity()(np.asarray(bin_means, dtype=float)))


def bin_table(
    per_query: pd.DataFrame, buckets: Sequence[str], n_bins: int, metric: str = POSITION_MEASURE.column
) -> pd.DataFrame:
    """Long table: one row per (bucket or 'all', bin) with the mean metric and query count."""
    rows = []
    groups = [(ALL, per_query)] + [(b, per_query[per_query[LENGTH_BUCKET] == b]) for b in buckets]
    for name, frame in groups:
        grouped = frame.groupby(POSITION_BIN)[metric]
        means, counts = grouped.mean(), grouped.count()
        for b in range(n_bins):
            count = int(counts.get(b, 0))
            mean = float(means.get(b, np.nan)) if count else float("nan")
            rows.append(
                {
                    BUCKET: name,
                    POSITION_BIN: b,
                    BIN_START: b / n_bins,
                    BIN_END: (b + 1) / n_bins,
                    N_QUERIES: count,
                    metric: mean,
                }
            )
    return pd.DataFrame(rows)


def summarize(
    per_query: pd.DataFrame, bins: pd.DataFrame, min_bin_queries: int, metric: str = POSITION_MEASURE.column
) -> pd.DataFrame:
    """One row per bucket (and 'all'): counts, both bucket means, PSI and skipped bins."""
    position = PositionSensitivity(min_bin_queries=min_bin_queries)
    rows = []
    for name, frame in bins.groupby(BUCKET, sort=False):
        filled = frame[frame[N_QUERIES] > 0]
        eligible = filled[filled[N_QUERIES] >= min_bin_queries]
        skipped = filled[filled[N_QUERIES] < min_bin_queries][POSITION_BIN].tolist()
        queries = per_query if name == ALL else per_query[per_query[LENGTH_BUCKET] == name]
        rows.append(
            {
                BUCKET: name,
                N_QUERIES: int(len(queries)),
                f"{metric}_bin_mean": float(filled[metric].mean()) if len(filled) else float("nan"),
                f"{metric}_query_mean": float(queries[metric].mean()) if len(queries) else float("nan"),
                position.column: psi(eligible[metric].tolist()),
                position.bins_used: int(len(eligible)),
                position.bins_skipped: ",".join(str(b) for b in skipped),
            }
        )
    return pd.DataFrame(rows)
