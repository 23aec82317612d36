"""Expected exposure EE-L, EE-D, EE-R (Diaz et al., CIKM 2020, section 4; diazf/expeval) of a deterministic ranking.

Each document's exposure under a browsing model (RBP, patience 0.5 by default; or gerr, RBP that also stops after
each relevant document with probability ``utility``) against the exposure an ideal ranking gives it (equally
relevant documents share the exposure of their positions). Unnormalised, as ``expeval -U`` prints them: normalised
EE-R is 1 whatever the ranking when a query has one relevance grade, which is every query of a benchmark with one
positive per query. For one deterministic ranking EE-D is the same for every full ranking (4/3 under RBP 0.5), so
paired comparisons leave it out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from posir.metrics.measure import RUN_SCOPE, Display, GroupMeasure, RankedQuery

#: the browsing models of expected exposure, as diazf/expeval names them
BROWSING_MODELS = ("rbp", "gerr")
EE_L, EE_D, EE_R = "ee_l", "ee_d", "ee_r"


@dataclass(frozen=True)
class ExpectedExposureValues:
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
) -> ExpectedExposureValues:
    """EE of one deterministic ranking (every document of it, no cutoff; the browsing model's decay is the cutoff)."""
    if browsing not in BROWSING_MODELS:
        raise ValueError(f"browsing model '{browsing}' is not one of {BROWSING_MODELS}")
    if browsing == "rbp" and len(set(ranking)) == len(ranking):
        return _rbp_expected_exposure(ranking, qrels, patience)
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
    return ExpectedExposureValues(ee_l=ee_l, ee_d=ee_d, ee_r=ee_r)


class _RBPTerms:
    """Per rank i of an RBP ranking, the exposure ``patience**i`` and the two squares the sums add, each computed
    exactly as :func:`expected_exposure` computes it; extended as deeper rankings come."""

    def __init__(self, patience: float) -> None:
        self.patience = patience
        self.exposure: list[float] = []
        self.square: list[float] = []  # e * e: EE-D's term
        self.distance: list[float] = []  # (0.0 - e) ** 2: EE-L's term for a document with no target exposure

    def extend(self, depth: int) -> None:
        for i in range(len(self.exposure), depth):
            e = self.patience**i * 1.0
            self.exposure.append(e)
            self.square.append(e * e)
            self.distance.append((0.0 - e) ** 2)


_RBP: dict[float, _RBPTerms] = {}


@lru_cache(maxsize=4096)
def _rbp_disparity(patience: float, depth: int) -> float:
    return math.fsum(_RBP[patience].square[:depth])


def _rbp_expected_exposure(ranking: Sequence[str], qrels: Mapping[str, int], patience: float) -> ExpectedExposureValues:
    """:func:`expected_exposure` under RBP of a ranking without repeated documents, from the terms of every rank
    computed once: every document but the relevant ones adds a term that depends on its rank alone. The same terms
    summed by ``math.fsum`` (correctly rounded, whatever their order), so the same values to the last bit, in a fifth
    of the time (63,420 rankings of squad-long runs: 1.1 s against 5.8 s)."""
    depth = len(ranking)
    terms = _RBP.setdefault(patience, _RBPTerms(patience))
    terms.extend(depth)
    target = target_exposure(qrels, patience, "rbp")
    ranks = {doc: _rank(ranking, doc) for doc in target}
    exposure = {doc: terms.exposure[rank] if rank is not None else 0.0 for doc, rank in ranks.items()}
    distances = terms.distance[:depth]
    for rank in sorted((rank for rank in ranks.values() if rank is not None), reverse=True):
        del distances[rank]
    distances += [(t - exposure[doc]) ** 2 for doc, t in target.items()]
    ee_r = math.fsum(t * exposure[doc] for doc, t in target.items())
    return ExpectedExposureValues(ee_l=math.fsum(distances), ee_d=_rbp_disparity(patience, depth), ee_r=ee_r)


def _rank(ranking: Sequence[str], doc: str) -> int | None:
    try:
        return ranking.index(doc)
    except ValueError:
        return None


@dataclass(frozen=True)
class ExpectedExposure(GroupMeasure):
    """EE-L, EE-D and EE-R of a ranking under ``browsing`` with ``patience`` (and gerr's ``utility``)."""

    family = "EE"
    stem = "ee"
    display = Display(digits=4)
    bounds: ClassVar[tuple[float, float]] = (-math.inf, math.inf)
    scope = RUN_SCOPE

    browsing: str = "rbp"
    patience: float = 0.5
    utility: float = 0.5

    def __post_init__(self) -> None:
        if self.browsing not in BROWSING_MODELS:
            raise ValueError(f"browsing model '{self.browsing}' is not one of {BROWSING_MODELS}")

    @property
    def columns(self) -> tuple[str, ...]:
        return EE_L, EE_D, EE_R

    @property
    def paired(self) -> tuple[str, ...]:
        return EE_L, EE_R

    def per_query(self, query: RankedQuery) -> dict[tuple[str, str], float]:
        ee = expected_exposure(query.ranking, query.qrels, self.patience, self.browsing, self.utility)
        return {("", EE_L): ee.ee_l, ("", EE_D): ee.ee_d, ("", EE_R): ee.ee_r}
