"""PEER@k: pairwise exposure of equally relevant documents (Yang et al., SIGIR 2024; hltcoe/peer_measure).

For documents of several groups that are equally relevant: per relevance grade, a Kruskal-Wallis statistic over the
groups' rank positions in the top ``cutoff`` (relevant documents below it placed after the others), its chi-square
p-value, weighted over the grades. The authors' code has no defaults: the top 10, as AWRF, and grades 0 and 1
weighed equally (``exposure.measures``: ``{PEER@10: {weights: {0: 0.5, 1: 0.5}}}``). A run's PEER is the mean over
the queries whose test is defined; the queries whose test is 0/0 (every value equal to the filler) are counted beside
it, as the authors' mean would be NaN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from posir.metrics.measure import ATTRIBUTE_SCOPE, PEER_TABLE, CutoffMeasure, Display, GroupMeasure, RankedQuery


def positions_kruskal_p(samples: Sequence[Sequence[float]]) -> float:
    """hltcoe/peer_measure's test of one relevance grade: samples are each group's rank positions, NaN for a relevant
    document below the cutoff. NaNs take the position N + (U + 1) / 2 (N values, U of them NaN); H = (N - 1) SSB / SST
    on the positions themselves (no re-ranking), p = chi2.sf(H, groups - 1); 1 when every value is NaN or fewer than
    two groups hold values; NaN when the values are equal (0 / 0), as the authors' code gives. The tail is scipy's
    ``chdtrc``, the function ``chi2.sf`` evaluates, called without ``chi2.sf``'s checks of its arguments (a fortieth
    of the time, the same bits: NaN for NaN, 1 at 0, 0 at infinity)."""
    from scipy.special import chdtrc

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
    return float(chdtrc(len(groups) - 1, statistic))


@dataclass(frozen=True)
class PeerValues:
    """PEER of one query: the weighted sum over its grades, and each grade's p-value."""

    value: float
    by_grade: dict[int, float]


def peer(
    ranking: Sequence[str],
    qrels: Mapping[str, int],
    groups: Mapping[str, str],
    cutoff: int,
    weights: Mapping[int, float],
) -> PeerValues:
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
    return PeerValues(value=float(value), by_grade=by_grade)


def _group_of(doc: str, groups: Mapping[str, str]) -> str:
    try:
        return groups[doc]
    except KeyError:
        raise ValueError(f"document '{doc}' has no group; PEER needs the group of every ranked document") from None


def default_weights() -> dict[int, float]:
    return {0: 0.5, 1: 0.5}


@dataclass(frozen=True)
class PEER(CutoffMeasure, GroupMeasure):
    """PEER@``cutoff`` of an attribute, grades weighed by ``weights``; it has a table of its own (``peer``), and no
    paired differences (a p-value's difference says nothing)."""

    family = "PEER"
    stem = "peer"
    display = Display(digits=4)
    bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)
    scope = ATTRIBUTE_SCOPE
    table = PEER_TABLE

    weights: Mapping[int, float] = field(default_factory=default_weights, hash=False)
    """the weight of each relevance grade, in [0, 1], summing to 1 (the authors' code has no default)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        try:  # a job's plain data (JSON) writes the grades as text; their columns follow the grades' order
            weights = dict(sorted((int(grade), float(weight)) for grade, weight in dict(self.weights).items()))
        except (TypeError, ValueError):
            raise ValueError(f"PEER: weights {self.weights!r} are not {{grade: weight}} numbers") from None
        if any(not 0 <= w <= 1 for w in weights.values()) or abs(sum(weights.values()) - 1.0) > 1e-9:
            raise ValueError(f"PEER: weights {weights} must each lie in [0, 1] and sum to 1")
        object.__setattr__(self, "weights", weights)

    @property
    def column(self) -> str:
        return self.stem

    def grade_column(self, grade: int) -> str:
        """The mean p-value of one grade, in the peer table."""
        return f"p_grade_{grade}"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column, *(f"{self.column}_{self.grade_column(grade)}" for grade in self.weights))

    @property
    def paired(self) -> tuple[str, ...]:
        return ()

    def applies(self, qrels: Mapping[str, Mapping[str, int]], groups: Mapping[str, str]) -> bool:
        """PEER compares groups of equally relevant documents: some query has relevant documents in several."""
        return any(len({groups.get(d) for d, g in docs.items() if g > 0}) > 1 for docs in qrels.values())

    def per_query(self, query: RankedQuery) -> dict[tuple[str, str], float]:
        result = peer(query.ranking, query.qrels, query.groups, self.cutoff, self.weights)
        values = {("", self.column): result.value}
        for grade, column in zip(self.weights, self.columns[1:]):
            values[("", column)] = result.by_grade.get(grade, float("nan"))
        return values
