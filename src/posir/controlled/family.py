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

:func:`posir.controlled.planning.plan_family` does everything but writing texts
(units, sampling, rounds, filler, slots); :meth:`ControlledFamily.variant` makes
one variant's :class:`posir.benchmark.BuiltBenchmark` when asked, so a workflow
can write one variant per job without holding all of them. The variant's card holds a
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
from typing import Any

from posir.benchmark import (
    CORPUS,
    DOCUMENTS,
    POSITIONS,
    QUERIES,
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
from posir.controlled.filler import Filler
from posir.controlled.placement import Placement, placed_text
from posir.controlled.spec import INSERT, ControlledParams, VariantKey
from posir.evidence import EVIDENCE, GROUPS, by_query, check_pieces, read_evidence
from posir.metrics.controlled import LENGTH_TARGET, NATURAL_LENGTH_BUCKET, POSITION_INDEX, ROUND, TARGET_POSITION
from posir.metrics.positions import LengthBucket
from posir.text import Span, TokenCounter
from posir.text_units import Units

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


@dataclass(frozen=True)
class Source:
    """The benchmark the family is built from, as its contract files hold it.

    ``separator`` joins the source's paragraphs (None: it has none, units are
    sentences). ``answers`` per query are what filler must not contain; by
    default the text at the query's span. ``pieces`` are the evidence spans of
    queries resting on several (:mod:`posir.evidence`), ``groups`` each grouped
    query's group, form and (a member alone) piece where the source's groups table
    says them (spread mode, :mod:`posir.controlled.spread`).
    """

    documents: Sequence[Document]
    queries: Sequence[Query]
    positions: Sequence[Position]
    doc_token_lengths: Mapping[str, int]
    language: str
    separator: str | None = "\n\n"
    answers: Mapping[str, Sequence[str]] | None = None
    pieces: Mapping[str, tuple[Span, ...]] = field(default_factory=dict)
    groups: Mapping[str, tuple[str, str, int | None]] = field(default_factory=dict)

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
        pieces = {
            qid: tuple(Span(p.span_start, p.span_end) for p in rows) for qid, rows in by_query(built.pieces).items()
        }
        groups = {row[0]: _grouped(row[1], row[2], row[3]) for row in built.tables.get(GROUPS, ((), []))[1]}
        return cls(
            built.documents,
            built.queries,
            built.positions,
            built.doc_token_lengths,
            language,
            separator,
            answers,
            pieces,
            groups,
        )

    @classmethod
    def read(cls, directory: Path, language: str, separator: str | None = "\n\n") -> Source:
        """A benchmark directory written by :func:`posir.benchmark.finish`; answers are the span texts."""
        directory = Path(directory)
        tokens = {row["doc_id"]: int(row["token_length"]) for row in read_table(directory / DOCUMENTS)}
        documents, queries = read_corpus(directory / CORPUS), read_queries(directory / QUERIES)
        positions = read_positions(directory / POSITIONS)
        pieces: dict[str, tuple[Span, ...]] = {}
        groups: dict[str, tuple[str, str, int | None]] = {}
        if (directory / EVIDENCE).is_file():
            rows = read_evidence(directory / EVIDENCE)
            check_pieces(
                rows,
                {d.doc_id: d.text for d in documents},
                {p.qid: (p.doc_id, p.span_start, p.span_end) for p in positions},
                where=str(directory / EVIDENCE),
            )
            pieces = {q: tuple(Span(p.span_start, p.span_end) for p in ps) for q, ps in by_query(rows).items()}
        if (directory / GROUPS).is_file():
            groups = {r["qid"]: _grouped(r["group"], r["form"], r["piece"]) for r in read_table(directory / GROUPS)}
        return cls(documents, queries, positions, tokens, language, separator, None, pieces, groups)


def _grouped(group: str, form: str, piece: object) -> tuple[str, str, int | None]:
    """A groups table's row: the group, the form, and a member's piece (none for a query resting on every piece)."""
    return str(group), str(form), None if piece in ("", None) else int(str(piece))


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
    """The planned family (:func:`posir.controlled.planning.plan_family`): sampled queries with their layouts, and
    every drop."""

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
        documents, queries, drops, stages = round_parts(
            self.source,
            texts,
            {p.qid for p in in_round},
            [(p.qid, p.round) for p in self.plans],
            key.round,
            "questions",
            self.drops,
            self.stages,
        )
        variant = {
            "key": key.slug,
            ROUND: key.round,
            POSITION_INDEX: key.position_index,
            TARGET_POSITION: self.params.targets[key.position_index],
            LENGTH_TARGET: key.length,
        }
        card = controlled_card(self.design(), variant, records, drops)
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


def round_parts(
    source: Source,
    texts: Mapping[str, str],
    kept: set[str],
    planned: Sequence[tuple[str, int]],
    round_: int,
    counted: str,
    drops: Sequence[Drop],
    stages: Sequence[StageCount],
) -> tuple[list[Document], list[Query], list[Drop], list[StageCount]]:
    """A variant of one round: the source's documents with the placed ``texts``, the ``kept`` queries, and every
    drop and stage count so far with the round's own (each ``(label, round)`` of ``planned`` outside ``round_`` is
    in another round's variants, counted among the ``counted``)."""
    documents = [replace(d, text=texts[d.doc_id]) if d.doc_id in texts else d for d in source.documents]
    queries = [q for q in source.queries if q.qid in kept]
    elsewhere = [
        Drop(STAGE_ROUND, label, IN_ANOTHER_ROUND, f"round {other}") for label, other in planned if other != round_
    ]
    return (
        documents,
        queries,
        [*drops, *elsewhere],
        [*stages, stage_count(STAGE_ROUND, counted, len(planned), elsewhere)],
    )


def controlled_card(
    design: Mapping[str, Any], variant: Mapping[str, Any], records: list[dict[str, Any]], drops: Sequence[Drop]
) -> dict[str, Any]:
    """The card section of a controlled variant: the family's design, the variant, its queries and every drop."""
    return {
        "controlled": {**design, "variant": dict(variant), "queries": records, "dropped": [_dropped(d) for d in drops]}
    }


def _dropped(drop: Drop) -> dict[str, str]:
    return {"qid": drop.record, "stage": drop.stage, "reason": drop.reason, "detail": drop.detail}
