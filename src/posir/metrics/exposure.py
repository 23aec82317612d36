"""Who gets seen: how a ranking spreads attention over groups of documents.

Per-query measures of one ranking (document ids best first), each as its authors' public code computes it
(tests/data/exposure holds their values on their examples and on our runs; tests/unit/test_exposure.py checks ours
against them at 1e-9):

- :func:`exposure_shares`: each group's share of the ranking's exposure in the top ``depth``, the exposure of
  rank i being nDCG's discount 1/log2(i+1). Multi-EuP (section 5) counts each language's share of the top 100; this
  weighs the top more, as a reader does.
- :func:`awrf`: attention-weighted rank fairness (Sapiezynski et al. 2019) as the TREC Fair Ranking 2022 evaluation
  code (fair-trec/trec2022-fair-public, ``wptrec/metrics/awrf.py``) computes it: rank weights 1/log2(max(k, 2)) in
  float32, documents of no known group dropped with their weight, 1 - the Jensen-Shannon divergence (natural log)
  between the groups' exposure and a target distribution. Its range is [1 - ln 2, 1].
- :func:`expected_exposure`: EE-L, EE-D and EE-R of Diaz et al. (CIKM 2020, section 4; diazf/expeval) for a
  deterministic ranking: each document's exposure under a browsing model (RBP, patience 0.5 by default) against
  the exposure an ideal ranking gives it (equally relevant documents share the exposure of their positions).
  Unnormalised, as ``expeval -U`` prints them: normalised EE-R is 1 whatever the ranking when a query has one
  relevance grade, which is every query of a benchmark with one positive per query.
- :func:`peer`: PEER (Yang et al., SIGIR 2024; hltcoe/peer_measure) for documents of several groups that are equally
  relevant: per relevance grade, a Kruskal-Wallis statistic over the groups' rank positions in the top ``cutoff``
  (relevant documents below it placed after the others), its chi-square p-value, weighted over the grades.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: the browsing models of expected exposure: RBP (exposure p^i at 0-based rank i) and gerr (RBP that also stops
#: after each relevant document with probability ``utility``), as diazf/expeval names them
BROWSING_MODELS = ("rbp", "gerr")


def discount(rank: np.ndarray | int) -> np.ndarray | float:
    """nDCG's discount of a 1-based rank: the exposure of that rank."""
    return 1.0 / np.log2(np.asarray(rank, dtype=np.float64) + 1.0)


def exposure_shares(ranking: Sequence[str], groups: Mapping[str, str], depth: int) -> dict[str, float]:
    """Each group's share of the exposure of the top ``depth`` documents (documents of no group count in the total,
    under no group: a share is of everything the reader sees)."""
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
class ExpectedExposure:
    """Diaz et al.'s three measures of one query: EE-L = ||t - e||^2 (lower is better), EE-D = ||e||^2 (the
    disparity: how unequally the ranking spreads exposure), EE-R = t . e (relevance)."""

    ee_l: float
    ee_d: float
    ee_r: float


def target_exposure(
    qrels: Mapping[str, int], patience: float = 0.5, browsing: str = "rbp", utility: float = 0.5
) -> dict[str, float]:
    """The exposure an ideal ranking gives each relevant document: a grade's documents share the exposure of the
    positions they fill below every document of a higher grade (expeval's ``exposure.py``, retrieval setting:
    grades <= 0 are left out)."""
    decay = patience * (1.0 - utility) if browsing == "gerr" else patience
    levels = Counter(grade for grade in qrels.values() if grade > 0)
    shares: dict[int, float] = {}
    above = 0
    for grade in sorted(levels, reverse=True):
        count = levels[grade]
        shares[grade] = (decay**above - decay ** (above + count)) / (count * (1.0 - decay))
        above += count
    return {doc: shares[grade] for doc, grade in qrels.items() if grade > 0}


def expected_exposure(
    ranking: Sequence[str],
    qrels: Mapping[str, int],
    patience: float = 0.5,
    browsing: str = "rbp",
    utility: float = 0.5,
) -> ExpectedExposure:
    """EE of one deterministic ranking (every document of it, no cutoff; the browsing model's decay is the cutoff)."""
    if browsing not in BROWSING_MODELS:
        raise ValueError(f"browsing model '{browsing}' is not one of {BROWSING_MODELS}")
    exposure: dict[str, float] = {}
    relevant_above = 0
    for i, doc in enumerate(ranking):
        stop = (1.0 - utility) ** relevant_above if browsing == "gerr" else 1.0
        exposure[doc] = patience**i * stop
        if qrels.get(doc, 0) > 0:
            relevant_above += 1
    target = target_exposure(qrels, patience, browsing, utility)
    ee_d = math.fsum(e * e for e in exposure.values())
    ee_r = math.fsum(t * exposure.get(doc, 0.0) for doc, t in target.items())
    ee_l = math.fsum((target.get(doc, 0.0) - exposure.get(doc, 0.0)) ** 2 for doc in set(target) | set(exposure))
    return ExpectedExposure(ee_l=ee_l, ee_d=ee_d, ee_r=ee_r)


def positions_kruskal_p(samples: Sequence[Sequence[float]]) -> float:
    """hltcoe/peer_measure's test of one relevance grade: samples are each group's rank positions, NaN for a relevant
    document below the cutoff. NaNs take the position N + (U + 1) / 2 (N values, U of them NaN); H = (N - 1) SSB / SST
    on the positions themselves (no re-ranking), p = chi2.sf(H, groups - 1); 1 when every value is NaN or fewer than
    two groups hold values; NaN when the values are equal (0 / 0), as the authors' code gives."""
    from scipy.stats import chi2

    values = [np.asarray(s, dtype=np.float64) for s in samples]
    pooled = np.concatenate(values) if values else np.zeros(0)
    if pooled.size == 0 or np.isnan(pooled).all():
        return 1.0
    missing = int(np.isnan(pooled).sum())
    filler = (2 * pooled.size + missing + 1) / 2
    groups = [np.where(np.isnan(v), filler, v) for v in values if v.size]
    if len(groups) < 2:
        return 1.0
    pooled = np.concatenate(groups)
    mean = pooled.mean()
    sizes = np.array([g.size for g in groups], dtype=np.float64)
    between = (np.array([g.sum() / g.size for g in groups]) - mean) ** 2 @ sizes
    total = ((pooled - mean) ** 2).sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = (pooled.size - 1) * between / total
    return float(chi2.sf(statistic, len(groups) - 1))


@dataclass(frozen=True)
class Peer:
    """PEER of one query: the weighted sum over its grades, and each grade's p-value."""

    value: float
    by_grade: dict[int, float]


def peer(
    ranking: Sequence[str],
    qrels: Mapping[str, int],
    groups: Mapping[str, str],
    cutoff: int,
    weights: Mapping[int, float],
) -> Peer:
    """PEER@cutoff of one query (hltcoe/peer_measure's ``_iter_calc``): the grade levels are the grades its judgements
    hold and 0 (an unjudged document in the top ``cutoff`` is non-relevant, as the authors' code counts it once the
    unjudged documents are judged 0); every group of ``groups`` is a sample."""
    names = sorted(set(groups.values()))
    grades = list(dict.fromkeys([*qrels.values(), 0]))
    samples: dict[int, dict[str, list[float]]] = {g: {name: [] for name in names} for g in grades}
    top = list(ranking[:cutoff])
    for position, doc in enumerate(top, start=1):
        samples[qrels.get(doc, 0)][_group_of(doc, groups)].append(float(position))
    retrieved = set(top)
    for doc, grade in qrels.items():
        if grade > 0 and doc not in retrieved:
            samples[grade][_group_of(doc, groups)].append(float("nan"))
    by_grade = {grade: positions_kruskal_p(list(samples[grade].values())) for grade in grades}
    # a grade's weight times NaN is NaN even when the weight is 0, as in the authors' sum
    value = sum(by_grade[grade] * weights.get(grade, 0.0) for grade in grades)
    return Peer(value=float(value), by_grade=by_grade)


def _group_of(doc: str, groups: Mapping[str, str]) -> str:
    try:
        return groups[doc]
    except KeyError:
        raise ValueError(f"document '{doc}' has no group; PEER needs the group of every ranked document") from None
