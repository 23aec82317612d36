"""LLM benchmark generation: sampling, position-constrained questions, located spans (PosIR sections 3.1-3.2).

Pure functions only; :mod:`posir.steps.generation` does the reading, the LLM
calls and the writing.  Stage names here are the ``stage`` column of every
drop report and the keys of the card's ``stages`` and ``llm_usage``.
"""

from __future__ import annotations

import copy
import hashlib
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import Field

from posir.benchmark import BenchmarkError, BuiltBenchmark, Document, Drop, Position, Query, StageCount
from posir.builders import BenchmarkSpec, BuilderParams
from posir.builders.quality import GradingParams
from posir.builders.raw_corpus import RawCorpusSpec
from posir.builders.sampling import LengthAwareSampler
from posir.metrics.positions import LengthBucket, relative_position
from posir.schema import Entry, Float, Int, Language, PositiveInt, Str, Weight
from posir.text import Span, SpanMatch, locate_reference

STAGE_SAMPLE = "sample_documents"
STAGE_GENERATE = "generate_queries"
STAGE_QUESTIONS = "parse_questions"
STAGE_LOCATE = "locate_spans"

#: The three position constraints of PosIR Appendix D.1, in document order.
CONSTRAINTS: tuple[str, ...] = ("first", "middle", "final")


class SamplingParams(Entry):
    """Length-aware sampling of the corpus (PosIR section 3.1)."""

    seed: Int = 13
    documents_per_domain: PositiveInt = 1000
    bucket_width: PositiveInt = 256
    ratio: tuple[Weight, ...] = Field((3, 3, 3, 3, 2, 2, 2, 2), min_length=1)
    positives_per_domain: PositiveInt | None = None


class QueryParams(Entry):
    """Position-constrained question generation (PosIR section 3.2 step 2, Appendix D.1)."""

    questions_per_document: PositiveInt = 3
    max_tokens: PositiveInt | None = None
    """null: llm.max_tokens"""
    language_name: Str | None = None
    """null: from the benchmark's language"""


class SpanParams(Entry):
    """Reference-span location (PosIR section 3.2 steps 3-4, Appendix D.2)."""

    max_tokens: PositiveInt | None = None
    require_constraint: bool = False


class ContrastParams(Entry):
    """Span necessity by relevance contrast (PosIR section 3.3): the scorers, cheapest first."""

    scorers: tuple[Str, ...] = ()


class FalseNegativeParams(Entry):
    """Removing false negatives (PosIR section 3.3): recall with a dense model, score with the scorers."""

    recall_model: Str | None = None
    top_k: PositiveInt = 1000
    scorers: tuple[Str, ...] = ()
    margin: Float = 0.0


class GenerationBlock(Entry):
    """LLM benchmark generation from a raw corpus (PosIR section 3): one block per stage."""

    corpus: RawCorpusSpec
    sampling: SamplingParams = SamplingParams()
    queries: QueryParams = QueryParams()
    spans: SpanParams = SpanParams()
    contrast: ContrastParams = ContrastParams()
    grading: GradingParams = GradingParams()
    false_negatives: FalseNegativeParams = FalseNegativeParams()


class GenerationBenchmark(BenchmarkSpec):
    """``builder: llm_generation``: LLM-generated queries and spans over a raw corpus with quality control."""

    builder: Literal["llm_generation"]
    language: Language = "eng"
    generation: GenerationBlock
    params: BuilderParams = BuilderParams()

    @property
    def corpus(self) -> RawCorpusSpec:
        """The raw corpus block, read in the benchmark's language."""
        return self.generation.corpus.in_language(self.language)


# --- sampling ------------------------------------------------------------------


@dataclass
class Sample:
    chosen: list[int]  # indices into the input documents, sorted
    positives: list[int]  # subset of chosen: documents questions are generated for
    drops: list[Drop] = field(default_factory=list)


def domain_rng(seed: int, domain: str) -> np.random.Generator:
    """A generator per (seed, domain): adding a domain does not change another domain's sample."""
    return np.random.default_rng([seed, zlib.crc32(domain.encode("utf-8"))])


def sample_corpus(
    doc_ids: Sequence[str],
    domains: Sequence[str],
    token_lengths: Sequence[int],
    params: SamplingParams,
) -> Sample:
    """Per domain, ``documents_per_domain`` documents in the bucket ratio; then the positives among them.

    Documents over the last bucket (2048 tokens by default) are dropped as
    ``over_max_tokens``; those the quota left out as ``not_sampled``.  When
    ``positives_per_domain`` is set, that many sampled documents (seeded) get
    questions; the others stay in the corpus as distractors.
    """
    sampler = LengthAwareSampler(params.bucket_width, params.ratio)
    drops: list[Drop] = []
    chosen: list[int] = []
    positives: list[int] = []
    by_domain: dict[str, list[int]] = {}
    for index, domain in enumerate(domains):
        by_domain.setdefault(domain, []).append(index)
    for domain in sorted(by_domain):
        members = by_domain[domain]
        rng = domain_rng(params.seed, domain)
        lengths = [token_lengths[i] for i in members]
        picked = {members[i] for i in sampler.sample_documents(lengths, params.documents_per_domain, rng)}
        for index in members:
            if index in picked:
                continue
            tokens = token_lengths[index]
            reason = "over_max_tokens" if sampler.bucket_index(tokens) is None else "not_sampled"
            drops.append(Drop(STAGE_SAMPLE, doc_ids[index], reason, f"{tokens} tokens, domain {domain}"))
        domain_chosen = sorted(picked)
        chosen.extend(domain_chosen)
        if params.positives_per_domain is None or params.positives_per_domain >= len(domain_chosen):
            positives.extend(domain_chosen)
        else:
            positives.extend(
                sorted(int(i) for i in rng.choice(domain_chosen, params.positives_per_domain, replace=False))
            )
    return Sample(sorted(chosen), sorted(positives), drops)


# --- position-constrained generation --------------------------------------------


def draw_constraint(seed: int, doc_id: str) -> str:
    """One of first/middle/final for a document, uniformly, seeded by (seed, id) so it is stable per document."""
    digest = hashlib.sha256(f"{seed}\x00{doc_id}".encode("utf-8")).digest()
    return CONSTRAINTS[int.from_bytes(digest[:8], "big") % len(CONSTRAINTS)]


def questions_schema(base: Mapping[str, Any], n: int) -> dict[str, Any]:
    """The prompt's answer schema with 1..n questions: servers that enforce schemas stop after n."""
    schema = copy.deepcopy(dict(base))
    schema["properties"]["questions"]["minItems"] = 1
    schema["properties"]["questions"]["maxItems"] = n
    return schema


@dataclass(frozen=True)
class Candidate:
    """A generated question with its positive document and the constraint it was asked under."""

    qid: str
    doc_id: str
    constraint: str
    question: str
    answer: str
    qtype: str

    def as_record(self) -> dict[str, Any]:
        """The candidates.jsonl record: every field, ``qtype`` written as ``type``."""
        record = asdict(self)
        record["type"] = record.pop("qtype")
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "Candidate":
        return cls(
            record["qid"],
            record["doc_id"],
            record["constraint"],
            record["question"],
            record.get("answer", ""),
            record.get("type", ""),
        )


def query_id(doc_id: str, index: int) -> str:
    return f"{doc_id}::q{index}"


def parse_questions(
    doc_id: str, constraint: str, value: Mapping[str, Any], limit: int
) -> tuple[list[Candidate], list[Drop]]:
    """Questions of one answer; empty, repeated (case-insensitively) or surplus ones are drops."""
    kept: list[Candidate] = []
    drops: list[Drop] = []
    seen: set[str] = set()
    for index, item in enumerate(value.get("questions", [])):
        qid = query_id(doc_id, index)
        question = " ".join(str(item.get("question", "")).split())
        key = question.casefold()
        if not question:
            drops.append(Drop(STAGE_QUESTIONS, qid, "empty_question"))
        elif key in seen:
            drops.append(Drop(STAGE_QUESTIONS, qid, "duplicate_question", question[:200]))
        elif len(kept) >= limit:
            drops.append(Drop(STAGE_QUESTIONS, qid, "too_many_questions", f"limit {limit}"))
        else:
            seen.add(key)
            kept.append(
                Candidate(
                    qid,
                    doc_id,
                    constraint,
                    question,
                    str(item.get("answer", "")).strip(),
                    str(item.get("type", "")).strip(),
                )
            )
    return kept, drops


# --- located spans -----------------------------------------------------------------


def region_of(span: Span, doc_length: int) -> str:
    """The third of the document holding the span's midpoint (PosIR's relative position, cut in three)."""
    position = relative_position(span.start, span.end, doc_length)
    return CONSTRAINTS[min(int(position * 3), 2)]


@dataclass(frozen=True)
class LocatedSpan:
    candidate: Candidate
    reference: str
    span: Span
    match: str
    region: str

    @property
    def honours_constraint(self) -> bool:
        return self.region == self.candidate.constraint

    def as_record(self) -> dict[str, Any]:
        return {
            **self.candidate.as_record(),
            "reference": self.reference,
            "span_start": self.span.start,
            "span_end": self.span.end,
            "match": self.match,
            "region": self.region,
            "honours_constraint": self.honours_constraint,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "LocatedSpan":
        return cls(
            Candidate.from_record(record),
            record["reference"],
            Span(record["span_start"], record["span_end"]),
            record["match"],
            record["region"],
        )


def span_decision(
    candidate: Candidate, document: str, status: str, reference: str, match: SpanMatch | None, require_constraint: bool
) -> LocatedSpan | Drop:
    """Keep a question whose reference sits exactly once in its document (PosIR section 3.2 step 4)."""
    if status != "found":
        return Drop(STAGE_LOCATE, candidate.qid, f"llm_{status}", "the model reported no single supporting passage")
    if match is None or not reference.strip():
        return Drop(STAGE_LOCATE, candidate.qid, "empty_reference")
    if match.status == "multiple":
        return Drop(
            STAGE_LOCATE, candidate.qid, "reference_multiple_matches", f"{match.count} matches: {reference[:200]!r}"
        )
    if match.span is None:
        return Drop(STAGE_LOCATE, candidate.qid, "reference_not_in_document", reference[:200])
    located = LocatedSpan(candidate, reference, match.span, match.status, region_of(match.span, len(document)))
    if require_constraint and not located.honours_constraint:
        return Drop(
            STAGE_LOCATE,
            candidate.qid,
            "span_off_constraint",
            f"asked for the {candidate.constraint} third, span in the {located.region} third",
        )
    return located


def constraints_honoured(spans: Iterable[tuple[str, bool]]) -> dict[str, dict[str, int]]:
    """Per position constraint, how many of the ``(constraint, honours_constraint)`` pairs lie in the third asked
    for and how many do not (PosIR section 3.2 reports how well the model keeps the constraint)."""
    honours = Counter(spans)
    return {c: {"honoured": honours[(c, True)], "not_honoured": honours[(c, False)]} for c in CONSTRAINTS}


# --- the benchmark ---------------------------------------------------------------------------------


def assemble_benchmark(
    documents: Sequence[Document],
    token_lengths: Mapping[str, int],
    kept: Sequence[LocatedSpan],
    drops: Sequence[Drop],
    stages: Sequence[StageCount],
    buckets: Sequence[LengthBucket],
    n_bins: int,
) -> BuiltBenchmark:
    """The generated benchmark: the sampled documents left after false-negative removal, each kept question with
    its located span as position (PosIR section 3), and every stage's drops and counts."""
    by_id = {d.doc_id: d for d in documents}
    queries: list[Query] = []
    positions: list[Position] = []
    evidence: dict[str, str] = {}
    for located in kept:
        doc = by_id[located.candidate.doc_id]
        span, tokens = located.span, token_lengths[doc.doc_id]
        queries.append(Query(located.candidate.qid, located.candidate.question))
        positions.append(
            Position.of_span(
                located.candidate.qid, doc.doc_id, (span.start, span.end), len(doc.text), tokens, n_bins, buckets
            )
        )
        evidence[located.candidate.qid] = doc.text[span.start : span.end]
    return BuiltBenchmark(
        list(documents),
        queries,
        positions,
        list(drops),
        list(stages),
        {d.doc_id: token_lengths[d.doc_id] for d in documents},
        evidence,
    )


def verify_span(doc: Document, located: LocatedSpan) -> None:
    """Re-locate the model's reference in the final document text: it must give the recorded span."""
    again = locate_reference(doc.text, located.reference)
    if again.span != located.span or again.status != located.match:
        raise BenchmarkError(
            f"query {located.candidate.qid}: reference no longer locates to [{located.span.start}, {located.span.end}) "
            f"in {doc.doc_id} (got {again}); the intermediate files are stale: delete results/generation/ and rerun"
        )
