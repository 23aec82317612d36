"""Who gets seen in a run: the exposure measures of every query over the groups of the corpus's documents.

Groups come from the documents of a setting's corpus (:class:`DocumentGroups`: per attribute, each document's group:
a column of ``documents.tsv`` such as ``length_bucket``, the ``language`` of the directory a document comes from,
or its ``provenance``). Per query of a run, each group measure (:mod:`posir.metrics.measures`: exposure shares, AWRF,
expected exposure, PEER) gives its values by attribute and group; :func:`per_query_values` lays them out one row per
judged query, its columns keyed (attribute, group, column), "" where a value is of the attribute or of the run.
The tables of those values (means per group, PEER per attribute, paired differences of two runs) are
:mod:`posir.tables.exposure`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import Field, Strict, field_validator, model_validator

from posir.metrics.columns import QID
from posir.metrics.measure import RUN_SCOPE, GroupMeasure, RankedQuery
from posir.metrics.measures.awrf import AWRF
from posir.metrics.measures.expected_exposure import BROWSING_MODELS, ExpectedExposure
from posir.metrics.measures.exposure_share import ExposureShare
from posir.metrics.measures.peer import PEER, default_weights
from posir.schema import Entry, Int, KeyProblem, PositiveInt, Probability, Str

if TYPE_CHECKING:
    import pandas as pd

#: an attribute with more groups than this is a number, not a group (a length in tokens): bucket it first
MAX_GROUPS = 50
CORPUS_SHARE, RELEVANT_SHARE = "corpus_share", "relevant_share"


def exposure_measures(
    depths: Sequence[int],
    awrf_depth: int,
    browsing: str,
    patience: float,
    utility: float,
    peer_cutoff: int,
    peer_weights: Mapping[int, float],
) -> list[GroupMeasure]:
    """The exposure measures of every run (the ``exposure`` section's parameters), in the order of their per-query
    columns: expected exposure (of the run), AWRF, the shares at each depth, PEER (of each attribute)."""
    return [
        ExpectedExposure(browsing=browsing, patience=patience, utility=utility),
        AWRF(cutoff=awrf_depth),
        *(ExposureShare(cutoff=depth) for depth in depths),
        PEER(cutoff=peer_cutoff, weights=dict(peer_weights)),
    ]


# --- the exposure section of the config -------------------------------------------------------------------------

#: Attributes every benchmark's documents have without a column for them: the language of the corpus variant a
#: document comes from (a one-vs-many corpus holds every language's copy) and that variant's provenance
#: (its card's, e.g. "professional translation (XQuAD)", else its builder).
LANGUAGE_ATTRIBUTE, PROVENANCE_ATTRIBUTE = "language", "provenance"
DERIVED_ATTRIBUTES = (LANGUAGE_ATTRIBUTE, PROVENANCE_ATTRIBUTE)


class PeerParams(Entry):
    """``exposure.peer``: PEER's cutoff and the weight of each relevance grade (Yang et al. 2024; the authors' code
    has no defaults: the top 10, as AWRF, and grades 0 and 1 weighed equally)."""

    cutoff: PositiveInt = PEER.cutoff
    weights: dict[Int, Annotated[float, Strict(), Field(ge=0, le=1)]] = Field(default_factory=default_weights)

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> Self:
        if abs(sum(self.weights.values()) - 1.0) > 1e-9:
            raise KeyProblem("weights", f"sum to {sum(self.weights.values())}", "give weights that sum to 1")
        return self


class ExposureBenchmark(Entry):
    """``exposure.benchmarks.<benchmark>``: the document attributes whose groups are compared, and what with."""

    attributes: Annotated[tuple[Str, ...], Field(min_length=1)]
    """columns of the benchmark's documents.tsv (length_bucket, a builder's or a user's own), or language, provenance"""
    targets: dict[Str, dict[Str, Annotated[float, Strict(), Field(ge=0)]]] = Field(default_factory=dict)
    """AWRF's target per attribute, {group: share} (normalised); by default each group's share of the corpus"""
    compare: tuple[tuple[Str, Str], ...] = ()
    """model pairs [a, b] of the benchmark's evaluation: paired bootstrap intervals of a - b per measure"""

    @model_validator(mode="after")
    def _targets_have_mass(self) -> Self:
        for attribute, shares in self.targets.items():
            if sum(shares.values()) <= 0:
                raise KeyProblem(f"targets.{attribute}", "all shares are 0", "give at least one group a share")
        return self


class ExposureParams(Entry):
    """``exposure``: who gets seen (posir.metrics.exposure), per benchmark; expected exposure's browsing model."""

    benchmarks: dict[Str, ExposureBenchmark] = Field(default_factory=dict)
    """{benchmark: entry}; entries of benchmarks a config does not evaluate are skipped; null clears them"""
    depths: Annotated[tuple[PositiveInt, ...], Field(min_length=1)] = (10, 100)
    """the depths whose exposure share each group row gives (the top 10 a user reads, the top 100 Multi-EuP counts)"""
    awrf_depth: PositiveInt = AWRF.cutoff
    """AWRF's depth (TREC Fair reads the whole ranking; the top 10 is what a user reads, as nDCG@10)"""
    browsing: Literal[BROWSING_MODELS] = ExpectedExposure.browsing  # type: ignore[valid-type]
    patience: Probability = ExpectedExposure.patience
    utility: Probability = ExpectedExposure.utility
    """gerr only: the chance of stopping after each relevant document"""
    peer: PeerParams = PeerParams()

    def measures(self) -> list[GroupMeasure]:
        """The exposure measures of every run (posir.metrics.exposure.exposure_measures)."""
        return exposure_measures(
            self.depths,
            self.awrf_depth,
            self.browsing,
            self.patience,
            self.utility,
            self.peer.cutoff,
            self.peer.weights,
        )

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _cleared(cls, benchmarks: Any) -> Any:
        return {} if benchmarks is None else benchmarks


# --- a setting's documents by group ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentGroups:
    """One setting's documents: each attribute's group per document id, and the queries' relevant documents."""

    setting: str
    groups: dict[str, dict[str, str]]  # attribute -> doc id -> group
    qrels: dict[str, dict[str, int]]

    def shares(self, attribute: str) -> dict[str, float]:
        counts = Counter(self.groups[attribute].values())
        return {group: n / sum(counts.values()) for group, n in sorted(counts.items())}

    def relevant_shares(self, attribute: str) -> dict[str, float]:
        groups = self.groups[attribute]
        counts = Counter(groups[doc] for docs in self.qrels.values() for doc, grade in docs.items() if grade > 0)
        total = sum(counts.values())
        return {group: n / total for group, n in sorted(counts.items())} if total else {}

    def compared(self, attribute: str) -> bool:
        """A corpus of one group has nothing to compare (a monolingual corpus by language)."""
        return len(set(self.groups[attribute].values())) > 1


def awrf_target(
    corpus: DocumentGroups, attribute: str, given: Mapping[str, float] | None, where: str
) -> dict[str, float]:
    """AWRF's target for an attribute: ``given`` (the configured one, ``where`` its config key), which must give
    every group of the corpus a share, or each group's share of the corpus."""
    groups = corpus.shares(attribute)
    if len(groups) > MAX_GROUPS:
        raise ValueError(
            f"{where}.attributes: '{attribute}' has {len(groups)} groups in the corpus of {corpus.setting}; it looks "
            "like a number (a length): group it first, e.g. length_bucket"
        )
    if not given:
        return groups
    if set(given) != set(groups):
        raise ValueError(
            f"{where}.targets.{attribute}: gives {sorted(given)}, but the corpus of {corpus.setting} has the groups "
            f"{sorted(groups)}; give each a share (0 allowed)"
        )
    return {group: given[group] for group in groups}


def per_query_values(
    rankings: Iterable[tuple[str, Sequence[str]]],
    corpus: DocumentGroups,
    measures: Sequence[GroupMeasure],
    attributes: Sequence[str],
    targets: Mapping[str, Mapping[str, float]],
) -> tuple[pd.DataFrame, int]:
    """One row per judged query of a run (``rankings``: qid and document ids, in trec_eval's order), sorted by qid:
    the run's measures, then per attribute its measures, each column keyed (attribute, group, column); and how many
    queries had no judgements (no target exposure: left out). ``targets`` are AWRF's, per compared attribute."""
    compared = [a for a in attributes if corpus.compared(a)]
    of_run = [m for m in measures if m.scope == RUN_SCOPE]
    of_attribute = [m for m in measures if m.scope != RUN_SCOPE]
    applies = {
        (a, m): not isinstance(m, PEER) or m.applies(corpus.qrels, corpus.groups[a])
        for a in compared
        for m in of_attribute
    }
    import pandas as pd

    names = {a: list(corpus.shares(a)) for a in compared}
    rows, unjudged = [], 0
    for qid, ranking in rankings:
        qrels = corpus.qrels.get(qid)
        if not qrels:
            unjudged += 1
            continue
        row: dict[object, object] = {QID: qid}
        for measure in of_run:
            values = measure.per_query(RankedQuery(ranking, qrels, {}))
            row.update({("", group, column): value for (group, column), value in values.items()})
        for attribute in compared:
            query = RankedQuery(ranking, qrels, corpus.groups[attribute], names[attribute], targets[attribute])
            for measure in of_attribute:
                if applies[(attribute, measure)]:
                    values = measure.per_query(query)
                    row.update({(attribute, group, column): value for (group, column), value in values.items()})
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame, unjudged
    frame = frame.set_index(QID).sort_index()
    frame.columns = pd.MultiIndex.from_tuples(list(frame.columns))
    return frame, unjudged
