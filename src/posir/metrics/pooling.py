"""Pooling or encoder: the position bias of one set of weights read two ways (not reported by PosIR).

A dense entry pools its encoder's token vectors into one; its ``token_vectors: unpooled`` sibling
(:mod:`posir.models.declarations.readings`) scores the same token vectors by MaxSim. Both answer the same queries, so
their difference is paired. ``pooled - unpooled`` of PSI (Zeng et al., section 3.3) says how much of the model's
position bias comes from the pooling rather than from what the encoder reads: positive, the pooled reading is the more
position-sensitive (the pooling adds bias); negative, the token vectors are (the encoder's own reading is biased, and
pooling dampens it); an interval across 0, no difference the queries can tell.

* **natural benchmarks** (PosIR section 5.2's bins): :func:`posir.metrics.significance.psi_differences` on the pair,
  per bucket: PSI and PosIR's bucket nDCG@10 of each and their paired stratified-bootstrap differences;
* **controlled families** (:mod:`posir.metrics.controlled`: every query at every position): the controlled PSI
  and the mean over positions of each, per length and pooled over lengths, and their paired differences; a resampled
  query brings both entries' scores at every position (:func:`posir.metrics.resampling.resampled_means`), drawn
  from the same seed and label as the family's own tables (the group's label without the model): where both entries
  have the same complete queries, each entry's resamples are the ones its row of the family's tables is read from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from posir.metrics.bootstrap import BootstrapParams
from posir.metrics.columns import (
    ALL,
    CONFIDENCE,
    INTERVAL,
    MEAN,
    MODEL,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    N_RESAMPLES,
    QID,
    SETTING,
)
from posir.metrics.controlled import LENGTH, POSITION_INDEX, pooled_over_lengths, position_matrix
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity, psi
from posir.metrics.resampling import generator, interval, resampled_means
from posir.metrics.significance import PSI_DIFFERENCE_COLUMNS, align_scores, paired_columns, psi_differences

_PSI = PositionSensitivity()
#: Per (setting, bucket, pair) of a natural benchmark: model_a is the pooled entry, model_b the unpooled one.
POOLING_COLUMNS = (SETTING, *PSI_DIFFERENCE_COLUMNS)
UNPAIRED_QUERIES = "unpaired_queries"  # queries complete at every position for one entry of the pair only
#: Per (setting, length, pair) of a controlled family.
CONTROLLED_POOLING_COLUMNS = (
    SETTING,
    LENGTH,
    MODEL_A,
    MODEL_B,
    N_QUERIES,
    UNPAIRED_QUERIES,
    *paired_columns(_PSI.column),
    *paired_columns(MEAN),
    N_RESAMPLES,
    CONFIDENCE,
    INTERVAL,
)
REASON = "reason"
#: Per unpooled entry and setting that has no pair in the table, and why (no record dropped silently).
UNPAIRED_COLUMNS = (MODEL, SETTING, REASON)


def _paired_values(
    point_a: float, point_b: float, boot_a: np.ndarray, boot_b: np.ndarray, params: BootstrapParams, bounds: tuple
) -> tuple[float, ...]:
    """a, b, a - b with its interval and bias, the share of resamples where both are defined and where a's is the
    higher (the order of :func:`posir.metrics.significance.paired_columns`)."""
    point = point_a - point_b
    replicates = boot_a - boot_b
    defined = np.isfinite(replicates)
    low, high, _ = interval(replicates, np.asarray(point), params, bounds)
    bias = float(replicates[defined].mean() - point) if defined.any() else math.nan
    higher = float((replicates[defined] > 0).mean()) if defined.any() else math.nan
    return (point_a, point_b, point, float(low), float(high), bias, float(defined.mean()), higher)


def controlled_pair(
    per_query: pd.DataFrame,
    pooled: str,
    unpooled: str,
    params: BootstrapParams,
    label: str,
    metric: str = POSITION_MEASURE.column,
) -> dict[str, object]:
    """One group's paired comparison: ``per_query`` is long (``model``, ``qid``, ``position_index``, ``metric``) for
    one setting and length; the queries complete at every position for both entries are compared, the others counted
    (``unpaired_queries``). ``label`` seeds the resamples (the family's label of the group, without the model)."""
    a = position_matrix(per_query[per_query[MODEL] == pooled], metric)
    b = position_matrix(per_query[per_query[MODEL] == unpooled], metric)
    if a.positions != b.positions:
        raise ValueError(f"{label}: '{pooled}' is scored at positions {a.positions}, '{unpooled}' at {b.positions}")
    common = sorted(set(a.qids) & set(b.qids))
    unpaired = len(set(a.qids) ^ set(b.qids))
    rows_a = a.scores[[a.qids.index(q) for q in common]]
    rows_b = b.scores[[b.qids.index(q) for q in common]]
    row: dict[str, object] = {MODEL_A: pooled, MODEL_B: unpooled, N_QUERIES: len(common), UNPAIRED_QUERIES: unpaired}
    if not common:
        row.update(dict.fromkeys((*paired_columns(_PSI.column), *paired_columns(MEAN)), math.nan))
    else:
        # one draw of queries brings both entries' scores at every position: paired across entries and positions
        boot = resampled_means(np.stack([rows_a, rows_b], axis=1), params.resamples, generator(params.seed, label))
        point_a, point_b = rows_a.mean(axis=0), rows_b.mean(axis=0)
        psis = _paired_values(
            float(psi(point_a)), float(psi(point_b)), psi(boot[:, 0]), psi(boot[:, 1]), params, _PSI.difference_bounds
        )
        means = _paired_values(
            float(point_a.mean()),
            float(point_b.mean()),
            boot[:, 0].mean(axis=1),
            boot[:, 1].mean(axis=1),
            params,
            POSITION_MEASURE.difference_bounds,
        )
        row.update(zip(paired_columns(_PSI.column), psis))
        row.update(zip(paired_columns(MEAN), means))
    row.update({N_RESAMPLES: params.resamples, CONFIDENCE: params.confidence, INTERVAL: params.interval})
    return row


def controlled_pooling(
    per_query: pd.DataFrame,
    pairs: Sequence[tuple[str, str]],
    params: BootstrapParams,
    metric: str = POSITION_MEASURE.column,
) -> pd.DataFrame:
    """Per setting and pair: the lengths pooled (``all``, each query's score at a position averaged over its
    lengths, as :func:`posir.metrics.controlled.family_statistics`) and each length. ``per_query`` holds the family's
    rows of both entries of every pair (``model``, ``setting``, ``qid``, ``position_index``, ``length``, ``metric``):
    :func:`posir.metrics.controlled.with_positions` of every variant."""
    rows = []
    grouped = pd.concat([pooled_over_lengths(per_query, metric), per_query], ignore_index=True)
    groups = grouped.groupby([SETTING, LENGTH], sort=False)
    # per setting, the lengths pooled first, then each length in order
    for (setting, length), frame in sorted(groups, key=lambda group: (group[0][0], group[0][1] != ALL, group[0][1])):
        # the family's tables label a group by its columns other than the model (posir.metrics.controlled)
        label = f"{SETTING}={setting}|{LENGTH}={length}"
        for pooled, unpooled in pairs:
            both = frame[frame[MODEL].isin([pooled, unpooled])][[MODEL, POSITION_INDEX, QID, metric]]
            if set(both[MODEL]) != {pooled, unpooled}:
                continue
            row = controlled_pair(both, pooled, unpooled, params, label, metric)
            rows.append({SETTING: setting, LENGTH: str(length), **row})
    return pd.DataFrame(rows, columns=list(CONTROLLED_POOLING_COLUMNS))


def natural_pooling(
    tables: Mapping[str, pd.DataFrame],
    pairs: Sequence[tuple[str, str]],
    buckets: Sequence[str],
    n_bins: int,
    min_bin_queries: int,
    params: BootstrapParams,
    metric: str = POSITION_MEASURE.column,
) -> pd.DataFrame:
    """Per pair (pooled, unpooled) of one setting's per-query ``tables`` (by model), overall and per bucket: the
    paired PSI and bucket nDCG@10 differences of :func:`posir.metrics.significance.psi_differences` (model_a the
    pooled entry)."""
    frames = [
        psi_differences(
            align_scores({pooled: tables[pooled], unpooled: tables[unpooled]}, metric),
            [pooled, unpooled],
            buckets,
            n_bins,
            min_bin_queries,
            params,
            metric,
        )
        for pooled, unpooled in pairs
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(PSI_DIFFERENCE_COLUMNS))
