"""AWRF@k: attention-weighted rank fairness (Sapiezynski et al. 2019), as TREC Fair Ranking 2022 computes it.

As the evaluation code of fair-trec/trec2022-fair-public (``wptrec/metrics/awrf.py``): rank weights
1/log2(max(k, 2)) in float32, documents of no known group dropped with their weight, 1 - the Jensen-Shannon
divergence (natural log) between the groups' exposure and a target distribution. Its range is [1 - ln 2, 1]. TREC
Fair reads the whole ranking; the cutoff here is what a user reads (10, as nDCG@10), set in ``exposure.measures``
(``AWRF@10``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from posir.metrics.measure import ATTRIBUTE_SCOPE, CutoffMeasure, Display, GroupMeasure, RankedQuery


def awrf_weights(n: int) -> np.ndarray:
    """TREC Fair 2022's rank weights 1/log2(max(k, 2)), k = 1..n, computed in float32 as its code does (float64
    weights move AWRF by up to 4e-9)."""
    ranks = np.maximum(np.arange(1, n + 1, dtype=np.float32), np.float32(2))
    return np.reciprocal(np.log2(ranks)).astype(np.float64)


def awrf(ranking: Sequence[str], groups: Mapping[str, str], target: Mapping[str, float], depth: int) -> float:
    """AWRF@depth of one ranking against ``target`` (group -> share; normalised here); NaN when no document of the
    top ``depth`` has a group."""
    from scipy.special import rel_entr

    top = list(ranking[:depth])
    weights = awrf_weights(len(top))
    names = list(target)
    index = {name: i for i, name in enumerate(names)}
    exposure = np.zeros(len(names))
    for doc, weight in zip(top, weights):
        group = groups.get(doc)
        if group is not None:
            if group not in index:
                raise ValueError(f"document '{doc}' is in group '{group}', which the target {names} lacks")
            exposure[index[group]] += weight
    if exposure.sum() <= 0:
        return float("nan")
    p = exposure / exposure.sum()
    q = np.asarray([target[name] for name in names], dtype=np.float64)
    q = q / q.sum()
    m = (p + q) / 2.0
    return float(1.0 - (rel_entr(p, m).sum() + rel_entr(q, m).sum()) / 2.0)


@dataclass(frozen=True)
class AWRF(CutoffMeasure, GroupMeasure):
    """AWRF@``cutoff`` of an attribute's groups against its target (the corpus shares, or ``exposure...targets``)."""

    family = "AWRF"
    stem = "awrf"
    display = Display(digits=4)
    bounds: ClassVar[tuple[float, float]] = (1.0 - math.log(2.0), 1.0)
    scope = ATTRIBUTE_SCOPE

    def per_query(self, query: RankedQuery) -> dict[tuple[str, str], float]:
        return {("", self.column): awrf(query.ranking, query.groups, query.target, self.cutoff)}
