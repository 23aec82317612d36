"""Planning a controlled family: units, eligibility, sampled queries, rounds and, in insert mode, filler.

:func:`plan_family` does everything but writing texts (units, sampling,
rounds, filler, slots) and returns the :class:`posir.controlled.family.ControlledFamily`
that makes each variant when asked. It is seeded: every variant's job plans the
same family.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from posir.benchmark import Drop, Position, stage_count
from posir.controlled.family import ControlledFamily, Layout, QueryPlan, Source
from posir.controlled.filler import (
    FillerPool,
    QueryTermRecall,
    choose_filler,
    filler_query,
    filler_separator,
    visiting_order,
)
from posir.controlled.placement import VariantRefused, evidence_unit, plan_placements
from posir.controlled.sampling import NOT_SAMPLED, STAGE_SAMPLE, Candidate, stratified_sample
from posir.controlled.spec import INSERT, MOVE, ControlledParams
from posir.metrics.positions import LengthBucket
from posir.text import Span, TokenCounter
from posir.text_units import AUTO, PARAGRAPH, SENTENCE, Units, split_units

STAGE_UNITS = "controlled_units"
#: Insert mode: the query's evidence unit is filler that a query already in its round cannot do without.
NEEDLE_IS_NEEDED_FILLER = "needle_is_needed_filler"


def _insert_unit_kind(unit: str, source: Source) -> str:
    """Insert mode takes one unit kind for needles and filler alike: with AUTO, paragraphs where the source has them."""
    if unit != AUTO:
        return unit
    if source.separator and any(source.separator in d.text for d in source.documents):
        return PARAGRAPH
    return SENTENCE


def plan_family(
    source: Source, params: ControlledParams, count_tokens: TokenCounter, buckets: Sequence[LengthBucket], n_bins: int
) -> ControlledFamily:
    """Units, eligibility, stratified sample, rounds and (insert mode) filler of a controlled family.

    Stages (each counted, every drop with its reason): ``controlled_units``
    (evidence crossing units, too few units) and ``controlled_sample`` (not
    sampled; in insert mode also drawn queries refused for want of filler, too
    few units in a haystack, or a needle another query's filler needs: each is
    replaced by the next query of its stratum).
    """
    targets = params.targets
    documents = {d.doc_id: d for d in source.documents}
    unit_kind = _insert_unit_kind(params.unit, source) if params.mode == INSERT else params.unit
    units_of: dict[str, Units] = {}

    def units_for(doc_id: str) -> Units:
        if doc_id not in units_of:
            units_of[doc_id] = split_units(
                documents[doc_id].text, unit_kind, source.language, source.separator, min_units=params.positions
            )
        return units_of[doc_id]

    drops: list[Drop] = []
    candidates: list[Candidate] = []
    natural: dict[str, tuple[Position, int, Layout | None]] = {}
    for position in source.positions:
        units = units_for(position.doc_id)
        span = Span(position.span_start, position.span_end)
        try:
            index = evidence_unit(units, span)
            layout = None
            if params.mode == MOVE:
                layout = Layout(units, index, tuple(plan_placements(units, index, span, targets)))
        except VariantRefused as refusal:
            drops.append(Drop(STAGE_UNITS, position.qid, refusal.reason, refusal.detail))
            continue
        natural[position.qid] = (position, index, layout)
        candidates.append(Candidate(position.qid, position.doc_id, position.length_bucket, position.position_bin))
    stages = [stage_count(STAGE_UNITS, "questions", len(source.positions), drops)]

    insert = (
        _Inserter(source, params, count_tokens, unit_kind, {d: units_for(d) for d in documents}, natural)
        if params.mode == INSERT
        else None
    )
    sampled, refused = stratified_sample(
        candidates, params.queries, params.seed, insert.accept if insert is not None else None, params.rounds
    )
    drawn = {s.candidate.qid for s in sampled} | {r.candidate.qid for r in refused}
    sample_drops = [Drop(STAGE_SAMPLE, r.candidate.qid, r.error.reason, r.error.detail) for r in refused]
    sample_drops += [Drop(STAGE_SAMPLE, c.qid, NOT_SAMPLED) for c in candidates if c.qid not in drawn]
    drops += sample_drops
    stages.append(stage_count(STAGE_SAMPLE, "questions", len(candidates), sample_drops))

    plans: list[QueryPlan] = []
    if insert is None:
        for s in sampled:
            position, index, layout = natural[s.candidate.qid]
            assert layout is not None
            plans.append(QueryPlan(position, s.round, layout.units, index, {None: layout}))
    else:
        for s in sampled:
            position, index, _ = natural[s.candidate.qid]
            layouts = insert.accepted[s.candidate.qid]
            plans.append(QueryPlan(position, s.round, units_for(position.doc_id), index, layouts))
    return ControlledFamily(
        params,
        source,
        plans,
        drops,
        stages,
        count_tokens,
        buckets,
        n_bins,
        unit_kind,
        insert.separator if insert else None,
        insert.measure.describe(params.overlap_threshold) if insert else None,
    )


class _Inserter:
    """Insert mode's filler and layouts for the queries of one family."""

    def __init__(
        self,
        source: Source,
        params: ControlledParams,
        count_tokens: TokenCounter,
        unit_kind: str,
        units: Mapping[str, Units],
        natural: Mapping[str, tuple[Position, int, Layout | None]],
    ) -> None:
        self.source, self.params, self.unit_kind, self.natural = source, params, unit_kind, natural
        self.measure = QueryTermRecall.for_language(source.language)
        self.documents = {d.doc_id: d for d in source.documents}
        self.pool = FillerPool.of(units, {d.doc_id: d.title for d in source.documents}, count_tokens, self.measure)
        self.units = units
        self.separator = filler_separator(unit_kind, source.language, source.separator)
        self.queries = {q.qid: q for q in source.queries}
        # per round, its queries accepted so far and their needles; per query, its layouts
        self.round_needles: dict[int, set[str]] = {}
        self.round_members: dict[int, list[Candidate]] = {}
        self.accepted: dict[str, dict[int | None, Layout]] = {}

    def needle(self, qid: str) -> tuple[str, Span]:
        """The evidence unit and the span's offsets within it."""
        position, index, _ = self.natural[qid]
        units = self.units[position.doc_id]
        start = units.starts[index]
        return units.units[index], Span(position.span_start - start, position.span_end - start)

    def layouts(
        self, candidate: Candidate, excluded: frozenset[str] = frozenset(), lengths: Sequence[int | None] | None = None
    ) -> dict[int | None, Layout]:
        """A haystack per length (default: every length) with the needle at every target; raises VariantRefused."""
        needle, local = self.needle(candidate.qid)
        answers = (self.source.answers or {}).get(candidate.qid) or [needle[local.start : local.end]]
        query = filler_query(
            candidate.qid,
            self.documents[candidate.doc_id],
            self.queries[candidate.qid].text,
            answers,
            needle,
            self.measure,
        )
        order = visiting_order(len(self.pool), self.params.seed, candidate.qid)
        layouts: dict[int | None, Layout] = {}
        for length in self.params.length_targets if lengths is None else lengths:
            assert length is not None
            filler = choose_filler(
                self.pool,
                query,
                order,
                length,
                self.separator,
                self.unit_kind,
                self.params.overlap_threshold,
                self.params.min_fill,
                excluded,
            )
            last = len(filler.haystack) - 1
            span = local.shifted(filler.haystack.starts[last])
            placements = plan_placements(filler.haystack, last, span, self.params.targets, natural=False)
            layouts[length] = Layout(filler.haystack, last, tuple(placements), filler)
        return layouts

    def accept(self, candidate: Candidate, round_index: int) -> None:
        """Sampling's check: the query's haystacks, keeping every needle of the round in its own positive only.

        A needle in another query's filler would be a second document of the
        corpus holding that query's evidence. So the new query's filler avoids
        the needles already in its round, and earlier queries whose filler holds
        the new needle get that filler rebuilt without it; when one of them cannot
        do without it, the new query is refused (:data:`NEEDLE_IS_NEEDED_FILLER`)
        and the earlier ones stay as they were.
        """
        needles = self.round_needles.setdefault(round_index, set())
        members = self.round_members.setdefault(round_index, [])
        layouts = self.layouts(candidate, frozenset(needles))
        needle = self.needle(candidate.qid)[0]
        excluded = frozenset(needles | {needle})
        rebuilt: dict[str, dict[int | None, Layout]] = {}
        for other in members:
            clashing = [
                length
                for length, layout in self.accepted[other.qid].items()
                if layout.filler and needle in layout.filler.unit_set
            ]
            if not clashing:
                continue
            try:
                rebuilt[other.qid] = {**self.accepted[other.qid], **self.layouts(other, excluded, clashing)}
            except VariantRefused as refusal:
                raise VariantRefused(
                    NEEDLE_IS_NEEDED_FILLER,
                    f"query {other.qid} of round {round_index} has no filler without it ({refusal.detail})",
                ) from refusal
        self.accepted.update(rebuilt)
        self.accepted[candidate.qid] = layouts
        needles.add(needle)
        members.append(candidate)
