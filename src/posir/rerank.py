"""Reranking pipelines: a first stage's ranking reordered by a second-stage scorer (pure functions).

Zeng et al. (position-bias-in-modern-ir-psi, sections 3-4, Table 1) compare whole pipelines,
BM25 or a dense retriever followed by a reranker, by their position sensitivity; PosIR
(Limitations, point 3) leaves cross-encoders to future work. A pipeline entry names a first
stage (a ``models:`` entry), a second stage (a ``scorers:`` entry) and a depth; its run holds
the first stage's top-``depth`` documents in the scorer's order, with the first stage's tail
below them, so nDCG@10, PSI and every table treat it like any other run.

A second stage costs queries x depth scorer calls; a pipeline can score a sample of the
queries, stratified by (length bucket, position bin) so that every filled cell keeps enough
queries for PSI (:func:`stratified_sample`).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import ClassVar, Self

from pydantic import model_validator

from posir.schema import Entry, Int, KeyProblem, NamedEntry, PositiveInt, Str


class SampleSpec(Entry):
    """``pipelines.<name>.sample``: rerank a sample of the queries, stratified by (length bucket, position bin):
    how many queries, at least how many per filled cell, the seed."""

    queries: PositiveInt
    min_per_cell: PositiveInt = 10
    seed: Int = 13

    @model_validator(mode="after")
    def _room_for_one_cell(self) -> Self:
        # the cells are known once the benchmark is built; that the sample can hold even one is known now
        if self.queries < self.min_per_cell:
            raise KeyProblem(
                "queries",
                f"{self.queries} is fewer than min_per_cell ({self.min_per_cell}): no "
                f"(bucket, bin) cell could keep its minimum",
                "raise queries or lower min_per_cell",
            )
        return self


class PipelineSpec(NamedEntry):
    """One ``pipelines.<name>`` entry: a first stage (a ``models:`` entry) reordered by a second stage (a
    ``scorers:`` entry) to a depth; named in evaluation blocks like a model."""

    section: ClassVar[str] = "pipelines"

    first_stage: Str
    """a ``models:`` entry"""
    second_stage: Str
    """a ``scorers:`` entry"""
    depth: PositiveInt = 100
    """the first stage's top documents reranked"""
    sample: SampleSpec | None = None
    """rerank a stratified sample of the queries; absent: all"""


class SampleError(ValueError):
    """The sample cannot keep ``min_per_cell`` queries in every filled cell within ``queries``."""


def _ranked(qids: Sequence[str], seed: int) -> list[str]:
    """A seeded order of ids by hash: the same ids are drawn whatever else is in the cell."""
    return sorted(qids, key=lambda q: hashlib.sha256(f"{seed}:{q}".encode()).hexdigest())


def stratified_sample(cells: Mapping[str, tuple[str, int]], spec: SampleSpec) -> list[str]:
    """``spec.queries`` query ids drawn per (length bucket, position bin) cell, in input order.

    ``cells`` maps a query id to its (bucket, bin). Every filled cell first keeps
    ``min(min_per_cell, its size)`` queries, so PSI has each bin it had; the rest of the
    sample goes to the cells in proportion to what they have left (largest remainders,
    ties by cell). Within a cell queries are drawn by a seeded hash of their id.
    """
    if spec.queries >= len(cells):
        return list(cells)
    members: dict[tuple[str, int], list[str]] = defaultdict(list)
    for qid, cell in cells.items():
        members[cell].append(qid)
    base = {cell: min(spec.min_per_cell, len(qids)) for cell, qids in members.items()}
    if sum(base.values()) > spec.queries:
        raise SampleError(
            f"sample.queries {spec.queries} cannot keep {spec.min_per_cell} queries in each of the "
            f"{len(members)} filled (bucket, bin) cells ({sum(base.values())} needed): raise queries "
            f"or lower min_per_cell"
        )
    spare = {cell: len(qids) - base[cell] for cell, qids in members.items()}
    left = spec.queries - sum(base.values())
    total_spare = sum(spare.values())
    exact = {cell: left * spare[cell] / total_spare if total_spare else 0.0 for cell in members}
    extra = {cell: int(exact[cell]) for cell in members}
    order = sorted(members, key=lambda cell: (-(exact[cell] - extra[cell]), cell))
    for cell in order[: left - sum(extra.values())]:
        extra[cell] += 1
    kept = {q for cell, qids in members.items() for q in _ranked(qids, spec.seed)[: base[cell] + extra[cell]]}
    return [qid for qid in cells if qid in kept]


def rerank(
    first_stage: Sequence[str], scores: Mapping[str, float | None], depth: int
) -> list[tuple[str, float | None]]:
    """The pipeline's ranking of one query: the first stage's top ``depth`` by the scorer, then the rest.

    ``first_stage`` is the first stage's ranking (document ids), best first; ``scores`` the scorer's score of each
    top-``depth`` document (``None``: no score could be had). Scored documents come first, best first
    (ties keep the first stage's order: the sort is stable); unscored ones follow in the first stage's order,
    then the first stage's tail in its order. Each document comes with its scorer score (``None`` for the
    unscored and the tail): the order is the decision, the scores are kept beside the run
    (:func:`posir.results.runs.write_ranked_run` writes the order so that every evaluator reads exactly it).
    """
    head, tail = list(first_stage[:depth]), list(first_stage[depth:])
    for doc in head:
        score = scores.get(doc)
        if score is not None and not math.isfinite(score):
            raise ValueError(f"document {doc}: the second stage scored it {score}; a score must be a finite number")
    scored = sorted(
        ((doc, float(scores[doc])) for doc in head if scores.get(doc) is not None),  # type: ignore[arg-type]
        key=lambda item: -item[1],
    )
    unscored = [(doc, None) for doc in head if scores.get(doc) is None]
    return [*scored, *unscored, *((doc, None) for doc in tail)]
