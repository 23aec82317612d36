"""Exposure share@k: each group's share of the exposure of a ranking's first k documents.

The exposure of rank i is nDCG's discount 1/log2(i + 1). Multi-EuP (section 5) counts each language's share of the
top 100; this weighs the top more, as a reader does. Documents of no group count in the total, under no group: a
share is of everything the reader sees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from posir.metrics.measure import GROUP_SCOPE, PERCENT_SHARE, CutoffMeasure, GroupMeasure, RankedQuery


def discount(rank: np.ndarray | int) -> np.ndarray | float:
    """nDCG's discount of a 1-based rank: the exposure of that rank."""
    return 1.0 / np.log2(np.asarray(rank, dtype=np.float64) + 1.0)


def exposure_shares(ranking: Sequence[str], groups: Mapping[str, str], depth: int) -> dict[str, float]:
    """Each group's share of the exposure of the top ``depth`` documents."""
    top = list(ranking[:depth])
    if not top:
        return {}
    weights = discount(np.arange(1, len(top) + 1))
    total = float(weights.sum())
    shares: dict[str, float] = {}
    for doc, weight in zip(top, weights):
        group = groups.get(doc)
        if group is not None:
            shares[group] = shares.get(group, 0.0) + float(weight) / total
    return shares


@dataclass(frozen=True)
class ExposureShare(CutoffMeasure, GroupMeasure):
    """A group's share of the top ``cutoff``'s exposure (a group absent from the top has share 0)."""

    family = "exposure_share"
    stem = "exposure_share"
    display = PERCENT_SHARE
    scope = GROUP_SCOPE

    def per_query(self, query: RankedQuery) -> dict[tuple[str, str], float]:
        shares = exposure_shares(query.ranking, query.groups, self.cutoff)
        return {(group, self.column): shares.get(group, 0.0) for group in query.names}
