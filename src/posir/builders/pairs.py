"""Queries that rest on several paragraphs: questions of one document joined into one query (``evidence_pairs``).

Every position-bias benchmark so far gives a query one piece of evidence (PosIR section 3.2, SQuAD's answers).
From a benchmark with its own documents and one span per question (``squad-long``, an ``xquad-parallel``
language), this builder makes queries that need k of them (k = 2 by default, LongPiBench's setting of several
relevant pieces, Tian et al. 2025):

* **the joining rule**: k questions whose positive is the same document (so the same article: our SQuAD-format
  documents are consecutive paragraphs of one article) and whose evidence spans lie in k *different* paragraphs
  are one group; the group's query is the k questions in the document order of their evidence, joined by
  ``joiner`` (a space: each keeps its own question mark), so it asks all of them; its positive is the document and
  its k spans are its evidence pieces (:mod:`posir.evidence`);
* every question is in at most one group, a document gives at most ``per_document`` groups (paragraphs with more
  questions left are preferred, so more groups form), and both choices are seeded per document;
* each member question is kept as its own single-evidence query (its span is one piece of its group): the
  comparison a family makes at matching positions (:mod:`posir.metrics.distance`);
* with ``fuse``, an LLM writes one question asking what the group's questions ask (the ``fuse_questions`` prompt),
  kept beside the joined form when relevance grading (PosIR section 3.3, :mod:`posir.builders.quality`) grades the
  document at least ``min_full_grade`` and the document without every piece at least ``min_grade_drop`` lower.

``evidence_groups.tsv`` says which query is which: its group, its form (joined, fused or single) and, for a
single, the piece of its group it answers. Every question left out is a drop with its reason.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import ConfigDict, Field, Strict

from posir.benchmark import BuiltBenchmark, Document, Drop, Position, Query, StageCount, stage_count
from posir.builders import BenchmarkSpec
from posir.builders.quality import GradingParams
from posir.evidence import FUSED, GROUP_FIELDS, GROUPS, JOINED, SINGLE, envelope, pieces_of
from posir.metrics.positions import LengthBucket
from posir.schema import Entry, Int, Language, PositiveInt, Str
from posir.text import Span, remove_span
from posir.text_units import Units, paragraph_units

STAGE_GROUP = "group_questions"
STAGE_FUSE = "fuse_questions"
STAGE_FUSED_GRADE = "grade_fused"
FUSED_SUFFIX = "~fused"

EVIDENCE_CROSSES_PARAGRAPHS = "evidence_crosses_paragraphs"
NO_PARTNER = "no_question_in_another_paragraph"
DOCUMENT_FULL = "per_document_reached"
OVER_MAX_GROUPS = "over_max_groups"


class FusionParams(Entry):
    """``fuse``: an LLM writes one question for each group (the ``fuse_questions`` prompt), graded like a generated
    query (PosIR section 3.3) on the document with and without every piece."""

    max_tokens: PositiveInt | None = None
    """null: llm.max_tokens"""
    grading: GradingParams = GradingParams()


class PairParams(Entry):
    """An ``evidence_pairs`` benchmark's ``params``."""

    seed: Int = 13
    pieces: Annotated[int, Strict(), Field(ge=2)] = 2
    """k: questions (and paragraphs) per group"""
    per_document: PositiveInt | None = 2
    """groups per document at most (null: as many as its questions allow)"""
    max_groups: PositiveInt | None = None
    """groups kept over all documents (a seeded sample; null: all)"""
    joiner: Str = " "
    """what joins the group's questions into its query"""
    fuse: FusionParams | None = None
    """an LLM's fused question beside the joined one (needs the llm section)"""


class EvidencePairsBenchmark(BenchmarkSpec):
    """``builder: evidence_pairs``: queries resting on k paragraphs of one document, from another benchmark's
    questions (its documents unchanged), each member question kept alone beside them."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    builder: Literal["evidence_pairs"]
    source_benchmark: Str = Field(alias="from")
    """a benchmark with its own documents and one evidence span per question"""
    source_language: Language = Field("eng", alias="from_language")
    params: PairParams = PairParams()

    @property
    def query_languages(self) -> list[str]:
        return [self.source_language]


@dataclass(frozen=True)
class Group:
    """k questions of one document with their evidence in k paragraphs, in the document order of their spans."""

    doc_id: str
    members: tuple[str, ...]
    spans: tuple[Span, ...]

    @property
    def gid(self) -> str:
        """The joined query's id: the members' ids joined by ``+`` (TREC run files take it)."""
        return "+".join(self.members)


def joining_rule(params: PairParams) -> str:
    """The card's sentence for how a group's query is made."""
    return (
        f"{params.pieces} questions whose positive is the same document (one article) and whose evidence spans lie "
        f"in {params.pieces} different paragraphs, in the document order of their evidence, joined by "
        f"{params.joiner!r}; each question in at most one group, at most {params.per_document or 'any number of'} "
        f"group(s) per document"
    )


def group_document(
    doc_id: str, units: Units, spans: Mapping[str, Span], params: PairParams
) -> tuple[list[Group], list[Drop]]:
    """The groups of one document's questions (``spans``: qid -> evidence span) and why the others are in none.

    Questions are dealt per paragraph in a seeded order; each group takes one question from each of the k
    paragraphs with the most questions left (ties in the seeded order), until fewer than k paragraphs have any or
    the document has ``per_document`` groups.
    """
    rng = np.random.default_rng([params.seed, zlib.crc32(doc_id.encode("utf-8"))])
    drops: list[Drop] = []
    by_unit: dict[int, list[str]] = {}
    for qid in sorted(spans):
        unit = units.unit_of(spans[qid])
        if unit is None:
            drops.append(Drop(STAGE_GROUP, qid, EVIDENCE_CROSSES_PARAGRAPHS, f"document {doc_id}"))
        else:
            by_unit.setdefault(unit, []).append(qid)
    order = [int(u) for u in rng.permutation(sorted(by_unit))] if by_unit else []
    queues = {u: [by_unit[u][int(i)] for i in rng.permutation(len(by_unit[u]))] for u in order}
    groups: list[Group] = []
    while sum(1 for u in order if queues[u]) >= params.pieces:
        if params.per_document is not None and len(groups) >= params.per_document:
            break
        chosen = sorted((u for u in order if queues[u]), key=lambda u: (-len(queues[u]), order.index(u)))
        members = sorted((queues[u].pop(0) for u in chosen[: params.pieces]), key=lambda q: spans[q].start)
        groups.append(Group(doc_id, tuple(members), tuple(spans[q] for q in members)))
    reason = DOCUMENT_FULL if groups and params.per_document == len(groups) else NO_PARTNER
    drops += [Drop(STAGE_GROUP, q, reason, f"document {doc_id}") for u in order for q in queues[u]]
    return groups, drops


def form_groups(
    documents: Sequence[Document], positions: Sequence[Position], separator: str, params: PairParams
) -> tuple[list[Group], list[Drop], StageCount]:
    """Every document's groups (:func:`group_document`), at most ``max_groups`` of them (seeded), and the count of
    questions in and out of grouping."""
    texts = {d.doc_id: d.text for d in documents}
    by_doc: dict[str, dict[str, Span]] = {}
    for p in positions:
        by_doc.setdefault(p.doc_id, {})[p.qid] = Span(p.span_start, p.span_end)
    groups: list[Group] = []
    drops: list[Drop] = []
    for doc_id in sorted(by_doc):
        found, dropped = group_document(doc_id, paragraph_units(texts[doc_id], separator), by_doc[doc_id], params)
        groups += found
        drops += dropped
    if params.max_groups is not None and len(groups) > params.max_groups:
        rng = np.random.default_rng(params.seed)
        keep = {int(i) for i in rng.choice(len(groups), params.max_groups, replace=False)}
        drops += [
            Drop(STAGE_GROUP, q, OVER_MAX_GROUPS) for i, g in enumerate(groups) if i not in keep for q in g.members
        ]
        groups = [g for i, g in enumerate(groups) if i in keep]
    return groups, drops, stage_count(STAGE_GROUP, "questions", len(positions), drops)


def build_pairs(
    documents: Sequence[Document],
    queries: Sequence[Query],
    positions: Sequence[Position],
    doc_token_lengths: Mapping[str, int],
    separator: str,
    params: PairParams,
    buckets: Sequence[LengthBucket],
    n_bins: int,
    fused: Mapping[str, str] | None = None,
    fusion_drops: Sequence[Drop] = (),
    fusion_stages: Sequence[StageCount] = (),
) -> BuiltBenchmark:
    """The benchmark of a source's groups: its documents unchanged, every member question alone, every group's
    joined query (and, where ``fused`` has one, its fused question) with its k pieces; ``fusion_drops`` and
    ``fusion_stages`` are the fusion step's (:func:`fused_question`, relevance grading)."""
    texts = {d.doc_id: d.text for d in documents}
    question = {q.qid: q.text for q in queries}
    natural = {p.qid: p for p in positions}
    groups, drops, grouped = form_groups(documents, positions, separator, params)
    stages = [grouped, *fusion_stages]

    out_queries: list[Query] = []
    out_positions: list[Position] = []
    evidence: dict[str, str] = {}
    piece_texts: dict[str, tuple[str, ...]] = {}
    pieces = []
    rows: list[tuple[str, str, str, Any]] = []
    for group in groups:
        doc = texts[group.doc_id]
        sample = natural[group.members[0]]
        start, end = envelope([(s.start, s.end) for s in group.spans])
        forms = [(group.gid, params.joiner.join(question[q] for q in group.members), JOINED)]
        if fused and group.gid in fused:
            forms.append((group.gid + FUSED_SUFFIX, fused[group.gid], FUSED))
        for qid, text, form in forms:
            out_queries.append(Query(qid, text))
            out_positions.append(
                Position.of_span(qid, group.doc_id, (start, end), len(doc), sample.doc_token_length, n_bins, buckets)
            )
            evidence[qid] = doc[start:end]
            piece_texts[qid] = tuple(doc[s.start : s.end] for s in group.spans)
            pieces += pieces_of(qid, group.doc_id, [(s.start, s.end) for s in group.spans], len(doc))
            rows.append((qid, group.gid, form, ""))
        for index, member in enumerate(group.members):
            out_queries.append(Query(member, question[member]))
            out_positions.append(natural[member])
            span = group.spans[index]
            evidence[member] = doc[span.start : span.end]
            rows.append((member, group.gid, SINGLE, index))
    built = BuiltBenchmark(
        list(documents),
        out_queries,
        out_positions,
        [*drops, *fusion_drops],
        stages,
        dict(doc_token_lengths),
        evidence,
        tables={GROUPS: (GROUP_FIELDS, rows)},
        card={
            "pairs": {
                "rule": joining_rule(params),
                "pieces": params.pieces,
                "joiner": params.joiner,
                "groups": len(groups),
                "fused": sum(1 for r in rows if r[2] == FUSED),
                "single_queries": sum(1 for r in rows if r[2] == SINGLE),
            }
        },
        notes=[f"{len(groups)} queries resting on {params.pieces} paragraphs each, beside their member questions"],
    )
    return replace(built, pieces=pieces, piece_texts=piece_texts)


# --- the fused form (LLM) ------------------------------------------------------------------------------------------


def fusion_input(questions: Sequence[str], language: str) -> dict[str, Any]:
    """The ``fuse_questions`` prompt's fields for one group."""
    return {"language": language, "count": len(questions), "questions": "\n".join(f"- {q}" for q in questions)}


def fused_question(value: Mapping[str, Any], questions: Sequence[str]) -> tuple[str | None, str]:
    """The answer's question, or (None, the drop reason): empty, or one of the members repeated."""
    text = " ".join(str(value.get("question", "")).split())
    if not text:
        return None, "empty_question"
    if text.casefold() in {q.casefold() for q in questions}:
        return None, "repeats_a_member"
    return text, ""


def without_pieces(text: str, spans: Sequence[Span]) -> str:
    """The document with every piece's characters deleted, the last first so the offsets hold (PosIR section 3.3's
    contrast document, for k pieces)."""
    for span in sorted(spans, key=lambda s: s.start, reverse=True):
        text = remove_span(text, span)
    return text
