"""A spread family: queries resting on k pieces, measured with their pieces together and apart, all else held equal.

The spread mode of a controlled family (``controlled: {mode: spread, pieces: 2, ...}``) varies a benchmark whose
queries rest on several pieces (:mod:`posir.evidence`: built by :mod:`posir.builders.pairs`, or a user's import
that annotates them). Its unit of sampling is an **evidence group**: the k pieces of one positive, the queries that
rest on all of them (the joined and the fused question of a pair, or a user's multi-span query) and the
single-evidence queries whose span is one of the pieces (each question of a pair alone). Every cell
(:mod:`posir.controlled.pieces`) is one corpus per round, as in move mode (:mod:`posir.controlled.family`): the
source corpus in which each sampled group's positive is rearranged for that cell, every other document unchanged.
So the group's queries are measured at every cell of the same document, and its single-evidence queries at the
matching positions of their own piece, in the same corpus.

A round holds one group per document (its positive can be arranged only one way per corpus). The variant's
``controlled.tsv`` holds a row per query (:data:`SPREAD_FIELDS`): its group and form, the cell, the arrangement
(other units before and between the pieces, units moved) and the achieved position and distance; its
``evidence.tsv`` the pieces where they now are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from posir.benchmark import BuiltBenchmark, Drop, Position, StageCount, stage_count
from posir.controlled.family import CONTROLLED_TABLE, Source, controlled_card, round_parts
from posir.controlled.pieces import Arrangement, Cell, plan_arrangements
from posir.controlled.placement import VariantRefused
from posir.controlled.sampling import NOT_SAMPLED, STAGE_SAMPLE, Candidate, stratified_sample
from posir.controlled.spec import ControlledParams, VariantKey
from posir.evidence import SEVERAL, SINGLE, envelope, pieces_of
from posir.metrics.controlled import NATURAL_LENGTH_BUCKET, ROUND, TARGET_POSITION
from posir.metrics.distance import (
    ACHIEVED_DISTANCE,
    ACHIEVED_POSITION,
    ANCHOR,
    CELL,
    EVIDENCE_GROUP,
    FORM,
    N_PIECES,
    PIECE,
    TARGET_DISTANCE,
)
from posir.metrics.positions import LengthBucket
from posir.text import Span, TokenCounter
from posir.text_units import Units, split_units

STAGE_PIECES = "spread_pieces"
STAGE_GROUPS = "spread_groups"
PIECES_NOT_K = "pieces_not_k"

SPREAD_FIELDS = (
    "qid",
    "doc_id",
    EVIDENCE_GROUP,
    FORM,
    PIECE,
    N_PIECES,
    ROUND,
    CELL,
    ANCHOR,
    TARGET_POSITION,
    TARGET_DISTANCE,
    "n_units",
    "before",
    "between",
    "units_moved",
    "span_start",
    "span_end",
    "relative_position",
    ACHIEVED_POSITION,
    ACHIEVED_DISTANCE,
    "doc_tokens",
    "natural_relative_position",
    NATURAL_LENGTH_BUCKET,
)


class PiecesMismatch(ValueError):
    """The family asks for k pieces and its source has no query with k pieces."""


@dataclass(frozen=True)
class GroupPlan:
    """A sampled evidence group: its positive's units, its queries (several pieces: qid -> form; single: qid ->
    piece), the natural row of its first multi-piece query, its round and an arrangement per cell."""

    label: str
    doc_id: str
    spans: tuple[Span, ...]
    several: dict[str, str]
    singles: dict[str, int]
    natural: Position
    units: Units
    round: int
    arrangements: tuple[Arrangement, ...]


@dataclass
class SpreadFamily:
    """The planned spread family (:func:`plan_spread_family`): sampled groups with their arrangements, every drop."""

    params: ControlledParams
    source: Source
    plans: list[GroupPlan]
    drops: list[Drop]
    stages: list[StageCount]
    count_tokens: TokenCounter
    buckets: Sequence[LengthBucket]
    n_bins: int
    unit_kind: str

    @property
    def rounds(self) -> int:
        return max((p.round for p in self.plans), default=-1) + 1

    @property
    def cells(self) -> list[Cell]:
        return self.params.cells()[0]

    def keys(self) -> list[VariantKey]:
        return [VariantKey(r, c.index, cell=True) for r in range(self.rounds) for c in self.cells]

    def evidence_texts(self, plan: GroupPlan) -> tuple[str, ...]:
        """The text at each piece in the group's original positive: what its pieces hold in every variant."""
        text = plan.units.text
        return tuple(text[s.start : s.end] for s in plan.spans)

    def placed(self, plan: GroupPlan, key: VariantKey) -> tuple[str, Arrangement]:
        """A group's positive in variant ``key`` and its arrangement."""
        arrangement = plan.arrangements[key.position_index]
        return plan.units.arrange(arrangement.order), arrangement

    def variant(self, key: VariantKey) -> BuiltBenchmark:
        """The benchmark of one round and cell: the source corpus with this round's positives rearranged."""
        in_round = [p for p in self.plans if p.round == key.round]
        if not in_round or not key.cell or key.position_index >= len(self.cells):
            raise KeyError(f"no variant {key} in this family")
        cell = self.cells[key.position_index]
        texts: dict[str, str] = {}
        tokens = dict(self.source.doc_token_lengths)
        positions: list[Position] = []
        evidence: dict[str, str] = {}
        piece_texts: dict[str, tuple[str, ...]] = {}
        pieces = []
        records: list[dict[str, Any]] = []
        for plan in in_round:
            text, arrangement = self.placed(plan, key)
            texts[plan.doc_id] = text
            tokens[plan.doc_id] = self.count_tokens(text)
            spans = [(s.start, s.end) for s in arrangement.spans]
            start, end = envelope(spans)
            reference = self.evidence_texts(plan)
            located = self._locator(plan.doc_id, len(text), tokens[plan.doc_id])
            for qid, form in plan.several.items():
                positions.append(located(qid, (start, end)))
                evidence[qid] = text[start:end]
                piece_texts[qid] = reference
                pieces += pieces_of(qid, plan.doc_id, spans, len(text))
                records.append(self._record(plan, cell, key, arrangement, qid, form, None, positions[-1]))
            for qid, piece in plan.singles.items():
                positions.append(located(qid, spans[piece]))
                evidence[qid] = reference[piece]
                records.append(self._record(plan, cell, key, arrangement, qid, SINGLE, piece, positions[-1]))
        documents, queries, drops, stages = round_parts(
            self.source,
            texts,
            {r["qid"] for r in records},
            [(p.label, p.round) for p in self.plans],
            key.round,
            "groups",
            self.drops,
            self.stages,
        )
        variant = {"key": key.slug, ROUND: key.round, CELL: cell.index, ANCHOR: cell.anchor,
                   TARGET_POSITION: cell.position, TARGET_DISTANCE: cell.distance}  # fmt: skip
        card = controlled_card(self.design(), variant, records, drops)
        note = (
            f"controlled spread variant {key.slug} of {len(self.plans)} sampled evidence groups of "
            f"{self.params.pieces} pieces: round {key.round}'s {len(in_round)} positives arranged with their pieces' "
            f"centre at {cell.position:.3f} ({cell.anchor}) and distance level {cell.distance:.3f}"
        )
        built = BuiltBenchmark(
            documents,
            queries,
            positions,
            drops,
            stages,
            tokens,
            evidence,
            tables={CONTROLLED_TABLE: (SPREAD_FIELDS, [[r[f] for f in SPREAD_FIELDS] for r in records])},
            card=card,
            notes=[note],
        )
        return replace(built, pieces=pieces, piece_texts=piece_texts)

    def _locator(self, doc_id: str, length: int, tokens: int) -> Any:
        """A query's positions row from its span in the arranged positive (PosIR section 4.1)."""

        def located(qid: str, span: tuple[int, int]) -> Position:
            return Position.of_span(qid, doc_id, span, length, tokens, self.n_bins, self.buckets)

        return located

    def design(self) -> dict[str, Any]:
        """What every card of the family says about how it was made."""
        params = self.params
        cells, series = params.cells()
        return {
            "mode": params.mode,
            "unit": params.unit,
            "unit_kind": self.unit_kind,
            "pieces": params.pieces,
            "positions": params.positions,
            "distances": params.distances,
            "anchors": list(params.anchors),
            "centre": params.centre,
            "cells": [vars(c) for c in cells],
            "series": series,
            "distance_definition": "share of the other units' characters between the first piece and the last",
            "queries_requested": params.queries,
            "groups_sampled": len(self.plans),
            "seed": params.seed,
            "rounds_allowed": params.rounds,
            "rounds": self.rounds,
            "language": self.source.language,
            "separator": self.source.separator,
            "variants": [k.slug for k in self.keys()],
        }

    def _record(
        self,
        plan: GroupPlan,
        cell: Cell,
        key: VariantKey,
        arrangement: Arrangement,
        qid: str,
        form: str,
        piece: int | None,
        position: Position,
    ) -> dict[str, Any]:
        return {
            "qid": qid,
            "doc_id": plan.doc_id,
            EVIDENCE_GROUP: plan.label,
            FORM: form,
            PIECE: "" if piece is None else piece,
            N_PIECES: len(plan.spans),
            ROUND: key.round,
            CELL: cell.index,
            ANCHOR: cell.anchor,
            TARGET_POSITION: cell.position,
            TARGET_DISTANCE: cell.distance,
            "n_units": len(plan.units),
            "before": arrangement.before,
            "between": arrangement.between,
            "units_moved": arrangement.units_moved,
            "span_start": position.span_start,
            "span_end": position.span_end,
            "relative_position": position.relative_position,
            ACHIEVED_POSITION: arrangement.position,
            ACHIEVED_DISTANCE: arrangement.distance,
            "doc_tokens": position.doc_token_length,
            "natural_relative_position": plan.natural.relative_position,
            NATURAL_LENGTH_BUCKET: plan.natural.length_bucket,
        }


def evidence_groups(source: Source, k: int, where: str) -> tuple[dict[tuple[str, tuple[Span, ...]], dict], list[Drop]]:
    """The source's groups of k pieces: per (positive, pieces), its multi-piece queries with their forms and its
    single-evidence queries with the piece each answers; multi-piece queries of another k are drops.

    Where the source has a groups table (:data:`posir.evidence.GROUPS`), a group's members alone are the queries it
    names; otherwise they are the single-span queries of the positive whose span is one of the pieces. Raises
    :class:`PiecesMismatch` (naming ``where``, the config key) when no query has k pieces."""
    positions = {p.qid: p for p in source.positions}
    drops: list[Drop] = []
    groups: dict[tuple[str, tuple[Span, ...]], dict] = {}
    named: dict[str, tuple[str, tuple[Span, ...]]] = {}  # a groups table's group id -> its key
    counts = Counter(len(spans) for spans in source.pieces.values())
    for qid in sorted(source.pieces):
        spans = tuple(source.pieces[qid])
        if len(spans) != k:
            drops.append(Drop(STAGE_PIECES, qid, PIECES_NOT_K, f"{len(spans)} pieces, the family measures {k}"))
            continue
        key = (positions[qid].doc_id, spans)
        group = groups.setdefault(key, {"several": {}, "singles": {}})
        group_id, form, _ = source.groups.get(qid, (qid, SEVERAL, None))
        group["several"][qid] = form
        named[group_id] = key
    if not groups:
        found = ", ".join(f"{n} with {c} pieces" for c, n in sorted(counts.items())) or "none with several pieces"
        raise PiecesMismatch(
            f"{where}: {k} pieces, but the source's queries are {found} (its evidence.tsv); set pieces to a count "
            f"the source holds, or vary a benchmark with queries of {k} pieces"
        )
    if source.groups:
        for qid, (group_id, form, piece) in source.groups.items():
            if form == SINGLE and group_id in named and piece is not None:
                groups[named[group_id]]["singles"][qid] = piece
        return groups, drops
    by_doc: dict[str, list[tuple[str, tuple[Span, ...]]]] = {}
    for key in groups:
        by_doc.setdefault(key[0], []).append(key)
    for p in source.positions:
        if p.qid in source.pieces:
            continue
        span = Span(p.span_start, p.span_end)
        for key in by_doc.get(p.doc_id, []):
            if span in key[1]:
                groups[key]["singles"][p.qid] = key[1].index(span)
    return groups, drops


def plan_spread_family(
    source: Source,
    params: ControlledParams,
    count_tokens: TokenCounter,
    buckets: Sequence[LengthBucket],
    n_bins: int,
    where: str = "controlled.pieces",
) -> SpreadFamily:
    """Groups, arrangements per cell, stratified sample and rounds of a spread family (seeded: every variant's job
    plans the same family). Stages: ``spread_pieces`` (multi-piece queries of another k), ``spread_groups`` (a piece
    crossing units, two pieces in one unit, too few units for distinct levels) and ``controlled_sample``."""
    cells, series = params.cells()
    documents = {d.doc_id: d for d in source.documents}
    positions = {p.qid: p for p in source.positions}
    groups, drops = evidence_groups(source, params.pieces, where)
    stages = [stage_count(STAGE_PIECES, "queries", len(source.pieces), drops)]
    unit_kinds: Counter[str] = Counter()
    candidates: list[Candidate] = []
    planned: dict[str, tuple[dict, Position, Units, tuple[Arrangement, ...]]] = {}
    group_drops: list[Drop] = []
    for (doc_id, spans), group in groups.items():
        label = min(group["several"])
        natural = positions[label]
        units = split_units(
            documents[doc_id].text, params.unit, source.language, source.separator, min_units=params.pieces + 1
        )
        try:
            arrangements = tuple(plan_arrangements(units, spans, cells, series))
        except VariantRefused as refusal:
            group_drops.append(Drop(STAGE_GROUPS, label, refusal.reason, refusal.detail))
            continue
        unit_kinds[units.kind] += 1
        planned[label] = (group, natural, units, arrangements)
        candidates.append(Candidate(label, doc_id, natural.length_bucket, natural.position_bin))
    drops += group_drops
    stages.append(stage_count(STAGE_GROUPS, "groups", len(groups), group_drops))
    sampled, _ = stratified_sample(candidates, params.queries, params.seed, None, params.rounds)
    drawn = {s.candidate.qid for s in sampled}
    sample_drops = [Drop(STAGE_SAMPLE, c.qid, NOT_SAMPLED) for c in candidates if c.qid not in drawn]
    drops += sample_drops
    stages.append(stage_count(STAGE_SAMPLE, "groups", len(candidates), sample_drops))
    plans = []
    for s in sampled:
        group, natural, units, arrangements = planned[s.candidate.qid]
        spans = next(key[1] for key, g in groups.items() if g is group)
        plans.append(
            GroupPlan(
                s.candidate.qid,
                s.candidate.doc_id,
                spans,
                dict(sorted(group["several"].items())),
                dict(sorted(group["singles"].items())),
                natural,
                units,
                s.round,
                arrangements,
            )
        )
    unit_kind = unit_kinds.most_common(1)[0][0] if unit_kinds else params.unit
    return SpreadFamily(params, source, plans, drops, stages, count_tokens, buckets, n_bins, unit_kind)
