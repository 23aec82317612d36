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
from typing import TYPE_CHECKING, Annotated, Any, Self

from pydantic import Field, Strict, field_validator, model_validator

from posir.metrics.columns import QID
from posir.metrics.measure import GROUP_SCOPE, RUN_SCOPE, GroupMeasure, RankedQuery
from posir.metrics.measures import parse_group
from posir.schema import Entry, KeyProblem, Str

if TYPE_CHECKING:
    import pandas as pd

#: an attribute with more groups than this is a number, not a group (a length in tokens): bucket it first
MAX_GROUPS = 50
CORPUS_SHARE, RELEVANT_SHARE = "corpus_share", "relevant_share"
#: A group measure as the config writes it: its name, or {name: {parameter: value}} (posir.metrics.measures).
GroupMeasureEntry = Str | dict[Str, dict[Str, Any]]
#: The group measures of every run unless ``exposure.measures`` names others: expected exposure (of the run), AWRF, the
#: shares of the top 10 (what a user reads) and of the top 100 (Multi-EuP's), PEER (of each attribute).
DEFAULT_GROUP_MEASURES: tuple[GroupMeasureEntry, ...] = (
    "EE",
    "AWRF@10",
    "exposure_share@10",
    "exposure_share@100",
    "PEER@10",
)
#: The section's keys of before the measures declared their own parameters, and where each went.
MOVED_KEYS = {
    "depths": "[exposure_share@10, exposure_share@100]",
    "awrf_depth": "AWRF@10",
    "browsing": "{EE: {browsing: rbp}}",
    "patience": "{EE: {patience: 0.5}}",
    "utility": "{EE: {browsing: gerr, utility: 0.5}}",
    "peer": "{PEER@10: {weights: {0: 0.5, 1: 0.5}}}",
}


# --- the exposure section of the config -------------------------------------------------------------------------

#: Attributes every benchmark's documents have without a column for them: the language of the corpus variant a
#: document comes from (a one-vs-many corpus holds every language's copy) and that variant's provenance
#: (its card's, e.g. "professional translation (XQuAD)", else its builder).
LANGUAGE_ATTRIBUTE, PROVENANCE_ATTRIBUTE = "language", "provenance"
DERIVED_ATTRIBUTES = (LANGUAGE_ATTRIBUTE, PROVENANCE_ATTRIBUTE)


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
    measures: Annotated[tuple[GroupMeasureEntry, ...], Field(min_length=1)] = DEFAULT_GROUP_MEASURES
    """the group measures of every run (posir.metrics.measures), as names (AWRF@10, exposure_share@100) or one name
    with its other parameters ({EE: {browsing: gerr, patience: 0.8}}, {PEER@10: {weights: {0: 0.5, 1: 0.5}}})"""

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        moved = sorted(set(data) & set(MOVED_KEYS)) if isinstance(data, Mapping) else []
        if moved:
            raise KeyProblem(
                moved[0],
                "is a parameter of a measure now",
                f"write it under exposure.measures, e.g. {MOVED_KEYS[moved[0]]}",
            )
        return data

    @model_validator(mode="after")
    def _known_measures(self) -> Self:
        for i, entry in enumerate(self.measures):
            try:
                parse_group(entry)
            except ValueError as error:
                raise KeyProblem(
                    f"measures[{i}]", str(error), "name a group measure of posir.metrics.measures"
                ) from None
        parsed = [parse_group(entry) for entry in self.measures]
        if len({m.name for m in parsed}) != len(parsed):
            raise KeyProblem("measures", "names a measure twice", "name each once")
        if not any(m.scope == GROUP_SCOPE for m in parsed):
            raise KeyProblem(
                "measures", "has no measure of each group", "keep one, e.g. exposure_share@10: the figure draws it"
            )
        return self

    def group_measures(self) -> list[GroupMeasure]:
        """The group measures of every run, in the order of their per-query columns."""
        return [parse_group(entry) for entry in self.measures]

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
    applies = {(a, m): m.applies(corpus.qrels, corpus.groups[a]) for a in compared for m in of_attribute}
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
