"""A family of controlled-position benchmarks built from one benchmark: one corpus per round, position (and length).

Every variant is a whole benchmark under the usual contract
(:mod:`posir.benchmark`): the source's corpus in which the positive of each
query sampled into that round is replaced by the query's variant at that
position (and, in insert mode, that length), every other document unchanged,
and only that round's queries. So

* every query keeps a single positive (PosIR section 3.3 keeps the single-positive
  setting for position-aware evaluation): its variants never compete with each
  other, each lives in its own corpus, and in insert mode no needle of a corpus
  is another query's filler;
* no corpus holds two sampled queries of one document (rounds, :mod:`posir.controlled.sampling`);
* across the positions of a round, the only thing that changes is where each
  query's evidence unit sits (:mod:`posir.controlled.placement`): the query, the
  other documents, and in move mode the positive's very units and length.

:func:`plan_family` does everything but writing texts (units, sampling, rounds,
filler, slots); :meth:`ControlledFamily.variant` makes one variant's
:class:`posir.benchmark.BuiltBenchmark` when asked, so a workflow can write one
variant per job without holding all of them. The variant's card holds a
``controlled`` block: the design, the overlap measure, and per query the units
moved and the achieved relative position of the span midpoint, plus every
dropped query with its reason; ``controlled.tsv`` holds the same per-query
rows for joining with per-query scores.

The positive keeps its id and title in every variant (in insert mode too, where
its text is the haystack): the title is the same at every position, so it
cannot explain a difference between positions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, Strict

from posir.benchmark import (
    BuiltBenchmark,
    Document,
    Drop,
    Position,
    Query,
    StageCount,
    read_corpus,
    read_positions,
    read_queries,
    read_table,
    stage_count,
)
from posir.builders import BenchmarkSpec
from posir.controlled.filler import (
    Filler,
    FillerPool,
    QueryTermRecall,
    choose_filler,
    filler_query,
    filler_separator,
    visiting_order,
)
from posir.controlled.placement import (
    Placement,
    VariantRefused,
    evidence_unit,
    placed_text,
    plan_placements,
    target_positions,
)
from posir.controlled.sampling import NOT_SAMPLED, STAGE_SAMPLE, Candidate, stratified_sample
from posir.controlled.units import AUTO, PARAGRAPH, SENTENCE, Units, split_units
from posir.metrics.controlled import LENGTH_TARGET, NATURAL_LENGTH_BUCKET, POSITION_INDEX, ROUND, TARGET_POSITION
from posir.metrics.positions import LengthBucket
from posir.schema import Entry, Int, Language, PositiveInt, Str
from posir.text import Span, TokenCounter

MOVE = "move"
INSERT = "insert"
MODES = (MOVE, INSERT)

STAGE_UNITS = "controlled_units"
#: Insert mode: the query's evidence unit is filler that a query already in its round cannot do without.
NEEDLE_IS_NEEDED_FILLER = "needle_is_needed_filler"
STAGE_ROUND = "controlled_round"
IN_ANOTHER_ROUND = "in_another_round"

CONTROLLED_TABLE = "controlled.tsv"
CONTROLLED_FIELDS = (
    "qid",
    "doc_id",
    ROUND,
    POSITION_INDEX,
    TARGET_POSITION,
    LENGTH_TARGET,
    "unit_kind",
    "n_units",
    "evidence_unit",
    "slot",
    "units_moved",
    "span_start",
    "span_end",
    "relative_position",
    "doc_tokens",
    "natural_relative_position",
    "natural_position_bin",
    NATURAL_LENGTH_BUCKET,
    "filler_units",
    "filler_documents",
    "filler_max_overlap",
)


class ControlledParams(Entry):
    """A benchmark's ``controlled`` block: ``{mode: move, unit: paragraph, positions: 5, queries: 400, seed: 13}``.

    ``queries`` is the number sampled over all rounds (null: every query that has a variant). ``rounds`` is the
    number of corpora per position: at most one sampled query per document per corpus, so a document gives at
    most ``rounds`` queries (a few documents holding many queries of a small stratum would otherwise make many
    corpora); the workflow builds exactly these rounds, each a variant per position. ``lengths`` (insert mode)
    are haystack lengths in Qwen3 tokens, filler and needle together; ``overlap_threshold`` bounds filler units'
    query-term recall and ``min_fill`` the share of a length a haystack must reach (:mod:`posir.controlled.filler`).
    """

    mode: Literal["move", "insert"]
    """move: the positive's evidence unit moves among its own units; insert: it is inserted into filler"""
    unit: Literal["auto", "paragraph", "sentence"] = "auto"
    """auto: paragraphs where the source has enough of them, else sentences (language-aware, sentencex)"""
    positions: Annotated[int, Strict(), Field(ge=2)] = 5
    """target relative positions, evenly from start to end"""
    queries: PositiveInt | None = 400
    seed: Int = 13
    rounds: PositiveInt = 1
    lengths: tuple[PositiveInt, ...] = (512, 1024, 2048, 4096)
    overlap_threshold: Annotated[float, Strict(), Field(ge=0, le=1)] = 0.2
    min_fill: Annotated[float, Strict(), Field(gt=0, le=1)] = 0.9

    @property
    def targets(self) -> list[float]:
        return target_positions(self.positions)

    @property
    def length_targets(self) -> tuple[int | None, ...]:
        """The haystack lengths of insert mode; move mode has one, the positive's own (None)."""
        return tuple(sorted(set(self.lengths))) if self.mode == INSERT else (None,)

    def variant_keys(self) -> list[VariantKey]:
        """Every variant the workflow builds: rounds x positions (x lengths), known from the config alone."""
        return [
            VariantKey(r, k, n) for r in range(self.rounds) for n in self.length_targets for k in range(self.positions)
        ]


@dataclass(frozen=True)
class Source:
    """The benchmark the family is built from, as its contract files hold it.

    ``separator`` joins the source's paragraphs (None: it has none, units are
    sentences). ``answers`` per query are what filler must not contain; by
    default the text at the query's span.
    """

    documents: Sequence[Document]
    queries: Sequence[Query]
    positions: Sequence[Position]
    doc_token_lengths: Mapping[str, int]
    language: str
    separator: str | None = "\n\n"
    answers: Mapping[str, Sequence[str]] | None = None

    @classmethod
    def from_built(
        cls,
        built: BuiltBenchmark,
        language: str,
        separator: str | None = "\n\n",
        answers: Mapping[str, Sequence[str]] | None = None,
    ) -> Source:
        if built.documents is None:
            raise ValueError("a query-only benchmark has no corpus to vary")
        return cls(
            built.documents, built.queries, built.positions, built.doc_token_lengths, language, separator, answers
        )

    @classmethod
    def read(cls, directory: Path, language: str, separator: str | None = "\n\n") -> Source:
        """A benchmark directory written by :func:`posir.benchmark.finish`; answers are the span texts."""
        directory = Path(directory)
        tokens = {row["doc_id"]: int(row["token_length"]) for row in read_table(directory / "documents.tsv")}
        documents, queries = read_corpus(directory / "corpus.jsonl"), read_queries(directory / "queries.jsonl")
        return cls(documents, queries, read_positions(directory / "positions.tsv"), tokens, language, separator)


@dataclass(frozen=True)
class VariantKey:
    """One benchmark of the family: a round, a position index and, in insert mode, a haystack length."""

    round: int
    position_index: int
    length: int | None = None

    @property
    def slug(self) -> str:
        """``r0-p2`` or ``r0-p2-l1024``: a directory name."""
        return f"r{self.round}-p{self.position_index}" + (f"-l{self.length}" if self.length is not None else "")


@dataclass(frozen=True)
class Layout:
    """The units a query's evidence unit is placed among (the positive's, or a haystack's) and its placements."""

    units: Units
    evidence_index: int
    placements: tuple[Placement, ...]
    filler: Filler | None = None


@dataclass(frozen=True)
class QueryPlan:
    """A sampled query: its round, its natural position row, its positive's units and a layout per length."""

    natural: Position
    round: int
    units: Units
    evidence_index: int
    layouts: Mapping[int | None, Layout]

    @property
    def qid(self) -> str:
        return self.natural.qid


@dataclass
class ControlledFamily:
    """The planned family (:func:`plan_family`): sampled queries with their layouts, and every drop."""

    params: ControlledParams
    source: Source
    plans: list[QueryPlan]
    drops: list[Drop]
    stages: list[StageCount]
    count_tokens: TokenCounter
    buckets: Sequence[LengthBucket]
    n_bins: int
    unit_kind: str
    filler_separator: str | None = None
    overlap: dict[str, Any] | None = None
    _documents: dict[str, Document] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._documents = {d.doc_id: d for d in self.source.documents}

    def evidence_text(self, plan: QueryPlan) -> str:
        """The text at the query's span in its original positive: what its span must hold in every variant."""
        return self._documents[plan.natural.doc_id].text[plan.natural.span_start : plan.natural.span_end]

    @property
    def rounds(self) -> int:
        return max((p.round for p in self.plans), default=-1) + 1

    def keys(self) -> list[VariantKey]:
        """Every variant: rounds x positions (x lengths)."""
        return [
            VariantKey(r, k, n)
            for r in range(self.rounds)
            for n in self.params.length_targets
            for k in range(self.params.positions)
        ]

    def placed(self, plan: QueryPlan, key: VariantKey) -> tuple[str, Placement, Layout]:
        """A query's positive text in variant ``key``, with its placement and layout."""
        layout = plan.layouts[key.length]
        placement = layout.placements[key.position_index]
        return placed_text(layout.units, layout.evidence_index, placement.slot), placement, layout

    def variant(self, key: VariantKey) -> BuiltBenchmark:
        """The benchmark of variant ``key``: the source corpus with this round's positives replaced."""
        in_round = [p for p in self.plans if p.round == key.round]
        if not in_round or key.position_index >= self.params.positions or key.length not in self.params.length_targets:
            raise KeyError(f"no variant {key} in this family")
        texts: dict[str, str] = {}
        tokens = dict(self.source.doc_token_lengths)
        positions: list[Position] = []
        evidence: dict[str, str] = {}
        records: list[dict[str, Any]] = []
        for plan in in_round:
            text, placement, layout = self.placed(plan, key)
            doc_id = plan.natural.doc_id
            texts[doc_id] = text
            tokens[doc_id] = self.count_tokens(text)
            span = placement.span
            positions.append(
                Position.of_span(
                    plan.qid, doc_id, (span.start, span.end), len(text), tokens[doc_id], self.n_bins, self.buckets
                )
            )
            # the original span text: finish() validates that the recomputed offsets hold it
            evidence[plan.qid] = self.evidence_text(plan)
            records.append(self._record(plan, key, placement, layout, tokens[doc_id]))
        documents = [replace(d, text=texts[d.doc_id]) if d.doc_id in texts else d for d in self.source.documents]
        kept = {p.qid for p in in_round}
        queries = [q for q in self.source.queries if q.qid in kept]
        round_drops = [
            Drop(STAGE_ROUND, p.qid, IN_ANOTHER_ROUND, f"round {p.round}") for p in self.plans if p.round != key.round
        ]
        drops = [*self.drops, *round_drops]
        stages = [*self.stages, stage_count(STAGE_ROUND, "questions", len(self.plans), round_drops)]
        card = {
            "controlled": {
                **self.design(),
                "variant": {
                    "key": key.slug,
                    ROUND: key.round,
                    POSITION_INDEX: key.position_index,
                    TARGET_POSITION: self.params.targets[key.position_index],
                    LENGTH_TARGET: key.length,
                },
                "queries": records,
                "dropped": [_dropped(d) for d in drops],
            }
        }
        rows = [[r[f] for f in CONTROLLED_FIELDS] for r in records]
        note = (
            f"controlled {self.params.mode} variant {key.slug} of {len(self.plans)} sampled queries: the "
            f"positives of round {key.round}'s {len(in_round)} queries have their evidence {self.unit_kind} "
            f"at target relative position {self.params.targets[key.position_index]:.3f}"
        )
        return BuiltBenchmark(
            documents,
            queries,
            positions,
            drops,
            stages,
            tokens,
            evidence,
            tables={CONTROLLED_TABLE: (CONTROLLED_FIELDS, rows)},
            card=card,
            notes=[note],
        )

    def variants(self) -> Iterator[tuple[VariantKey, BuiltBenchmark]]:
        """Every variant, made one at a time."""
        for key in self.keys():
            yield key, self.variant(key)

    def design(self) -> dict[str, Any]:
        """What every card of the family says about how it was made."""
        params = self.params
        return {
            "mode": params.mode,
            "unit": params.unit,
            "unit_kind": self.unit_kind,
            "positions": params.positions,
            "targets": params.targets,
            "lengths": list(params.length_targets) if params.mode == INSERT else None,
            "queries_requested": params.queries,
            "queries_sampled": len(self.plans),
            "seed": params.seed,
            "rounds_allowed": params.rounds,
            "rounds": self.rounds,
            "language": self.source.language,
            "separator": self.source.separator,
            "filler_separator": self.filler_separator,
            "overlap": self.overlap,
            "min_fill": params.min_fill if params.mode == INSERT else None,
            "variants": [k.slug for k in self.keys()],
        }

    def card(self) -> dict[str, Any]:
        """The family's own card: the design, every sampled query's planned placements, every drop."""
        queries = []
        for plan in self.plans:
            placements = []
            for length, layout in plan.layouts.items():
                for p in layout.placements:
                    placements.append(
                        {
                            POSITION_INDEX: p.position_index,
                            TARGET_POSITION: p.target,
                            LENGTH_TARGET: length,
                            "slot": p.slot,
                            "units_moved": p.units_moved,
                            "span_start": p.span.start,
                            "span_end": p.span.end,
                            "relative_position": p.relative_position,
                            **_filler_fields(layout.filler),
                        }
                    )
            queries.append({**_natural_fields(plan), ROUND: plan.round, "placements": placements})
        return {
            "controlled": {
                **self.design(),
                "queries": queries,
                "dropped": [_dropped(d) for d in self.drops],
                "stages": [vars(s) for s in self.stages],
            }
        }

    def _record(
        self, plan: QueryPlan, key: VariantKey, placement: Placement, layout: Layout, doc_tokens: int
    ) -> dict[str, Any]:
        return {
            **_natural_fields(plan),
            ROUND: plan.round,
            POSITION_INDEX: key.position_index,
            TARGET_POSITION: placement.target,
            LENGTH_TARGET: key.length,
            "slot": placement.slot,
            "units_moved": placement.units_moved,
            "span_start": placement.span.start,
            "span_end": placement.span.end,
            "relative_position": placement.relative_position,
            "doc_tokens": doc_tokens,
            **_filler_fields(layout.filler),
        }


def _natural_fields(plan: QueryPlan) -> dict[str, Any]:
    return {
        "qid": plan.qid,
        "doc_id": plan.natural.doc_id,
        "unit_kind": plan.units.kind,
        "n_units": len(plan.units),
        "evidence_unit": plan.evidence_index,
        "natural_relative_position": plan.natural.relative_position,
        "natural_position_bin": plan.natural.position_bin,
        NATURAL_LENGTH_BUCKET: plan.natural.length_bucket,
    }


def _filler_fields(filler: Filler | None) -> dict[str, Any]:
    if filler is None:
        return {"filler_units": None, "filler_documents": None, "filler_max_overlap": None}
    return {
        "filler_units": len(filler.units),
        "filler_documents": " ".join(sorted(set(filler.source_documents))),
        "filler_max_overlap": filler.max_overlap,
    }


def _dropped(drop: Drop) -> dict[str, str]:
    return {"qid": drop.record, "stage": drop.stage, "reason": drop.reason, "detail": drop.detail}


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


class ControlledBenchmark(BenchmarkSpec):
    """``builder: controlled``: controlled-position variants of another benchmark (every query measured at every
    position, everything else held equal): a family of benchmarks ``<name>-r<round>-p<position>[-l<length>]``,
    each with the usual contract, evaluated like any benchmark by the models named for ``<name>``."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    builder: Literal["controlled"] = "controlled"  # a 'controlled' block alone says it (posir.config)
    source_benchmark: Str = Field(alias="from")
    """the benchmark varied: any benchmark with its own documents and evidence spans"""
    source_language: Language = Field("eng", alias="from_language")
    """its language variant that is varied"""
    controlled: ControlledParams

    def variant_names(self) -> list[str]:
        return [f"{self.name}-{key.slug}" for key in self.controlled.variant_keys()]

    def key_of(self, variant: str) -> VariantKey:
        for key in self.controlled.variant_keys():
            if f"{self.name}-{key.slug}" == variant:
                return key
        raise KeyError(f"{variant} is not a variant of the controlled benchmark {self.name}")
