"""Long documents with known evidence positions from SQuAD-format QA data.

Each article's paragraphs are partitioned, in file order, into consecutive,
non-overlapping documents whose target lengths follow PosIR's length-aware
sampling (section 3.1). Every paragraph lands in exactly one document, so each
question's evidence exists in exactly one document, and its answer offset,
shifted into the document, is the reference span (PosIR section 3.2 locates
spans with an LLM; SQuAD gives them by annotation).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field
from tqdm import tqdm

from posir.benchmark import PARAGRAPHS, BuiltBenchmark, Document, Drop, Position, Query, stage_count
from posir.builders import BenchmarkSpec
from posir.builders.sampling import LengthAwareSampler
from posir.metrics.positions import LengthBucket
from posir.schema import Entry, Int, Language, PositiveInt, Str, Weight
from posir.text import Span, TokenCounter, join_with_offsets, span_matches

STAGE_PARAGRAPHS = "partition_paragraphs"
STAGE_ANSWERS = "validate_answers"
STAGE_QUESTIONS = "attach_questions"


class SquadParams(Entry):
    """A benchmark's ``params`` as the SQuAD-format builders read them."""

    seed: Int = 13
    bucket_width: PositiveInt = 256
    """PosIR 3.1 length-aware sampling, width of a sampling bucket in Qwen3 tokens"""
    ratio: tuple[Weight, ...] = Field((3, 3, 3, 3, 2, 2, 2, 2), min_length=1)
    """PosIR 3.1 sampling ratio of the buckets (8 buckets of 256 tokens over 0-2048)"""
    separator: Str = "\n\n"
    """text between joined paragraphs"""
    max_articles: PositiveInt | None = None
    question_id_pattern: Str | None = None
    """drop questions whose id does not fully match (translations may rename ids: SQuAD-it renames 714, which
    no longer align with SQuAD and XQuAD)"""
    max_queries: PositiveInt | None = None
    """keep a seeded sample of this many queries (a quick run); null keeps all"""


class SquadBenchmark(BenchmarkSpec):
    """``builder: squad_long_documents``: long documents from SQuAD-format QA data, partitioned with PosIR's
    length-aware sampling (section 3.1)."""

    builder: Literal["squad_long_documents"]
    language: Language = "eng"
    sources: dict[Str, Str] = Field(min_length=1)
    """role -> a ``sources`` entry (the SQuAD-format file under role ``squad``)"""
    params: SquadParams = SquadParams()


PARAGRAPH_FIELDS = ("paragraph_sha256", "doc_id", "char_offset", "article", "paragraph")


def paragraph_key(text: str) -> str:
    """How a paragraph is found again in another file of the same data (XQuAD holds SQuAD's paragraphs)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_id(title: str, index: int, prefix: str = "") -> str:
    """Ids go into TREC run files, which split on whitespace."""
    safe_title = re.sub(r"\s+", "_", title.strip())
    return f"{prefix}{safe_title}-{index:02d}"


def partition_article(
    paragraphs: Sequence[str],
    sampler: LengthAwareSampler,
    rng: np.random.Generator,
    count_tokens: TokenCounter,
    separator: str,
) -> list[list[int]]:
    """Group consecutive paragraph indices into documents of sampled target length.

    A document takes paragraphs while the joined text stays within its target;
    it always takes at least one paragraph and never exceeds ``sampler.max_tokens``.
    Paragraphs longer than that on their own are left out (the caller reports them).
    """
    groups: list[list[int]] = []
    index = 0
    while index < len(paragraphs):
        if count_tokens(paragraphs[index]) > sampler.max_tokens:
            index += 1
            continue
        target = sampler.draw_target(rng)
        group = [index]
        index += 1
        while index < len(paragraphs):
            candidate = separator.join(paragraphs[i] for i in [*group, index])
            if count_tokens(candidate) > min(target, sampler.max_tokens):
                break
            group.append(index)
            index += 1
        groups.append(group)
    return groups


def build_squad_long(
    squad: Mapping[str, Any],
    params: SquadParams,
    count_tokens: TokenCounter,
    buckets: Sequence[LengthBucket],
    n_bins: int,
    id_prefix: str = "",
) -> BuiltBenchmark:
    sampler = LengthAwareSampler(params.bucket_width, params.ratio)
    rng = np.random.default_rng(params.seed)
    articles = list(squad["data"])
    if params.max_articles is not None:
        articles = articles[: params.max_articles]

    documents: list[Document] = []
    doc_tokens: dict[str, int] = {}
    paragraph_to_doc: dict[tuple[int, int], str] = {}
    paragraph_offset: dict[tuple[int, int], int] = {}
    drops: list[Drop] = []
    n_paragraphs = 0
    for a_index, article in enumerate(tqdm(articles, desc="partition articles", unit="article")):
        paragraphs = [p["context"] for p in article["paragraphs"]]
        n_paragraphs += len(paragraphs)
        groups = partition_article(paragraphs, sampler, rng, count_tokens, params.separator)
        placed = {i for g in groups for i in g}
        for p_index in range(len(paragraphs)):
            if p_index not in placed:
                drops.append(Drop(STAGE_PARAGRAPHS, f"{article['title']}#{p_index}", "paragraph_exceeds_max_tokens"))
        for d_index, group in enumerate(groups):
            doc_id = document_id(article["title"], d_index, id_prefix)
            text, offsets = join_with_offsets([paragraphs[i] for i in group], params.separator)
            documents.append(Document(doc_id, text, article["title"].replace("_", " ")))
            doc_tokens[doc_id] = count_tokens(text)
            for p_index, offset in zip(group, offsets):
                paragraph_to_doc[(a_index, p_index)] = doc_id
                paragraph_offset[(a_index, p_index)] = offset
    stages = [stage_count(STAGE_PARAGRAPHS, "paragraphs", n_paragraphs, drops)]

    # Identical paragraph text in two documents would make a question's evidence ambiguous.
    paragraph_counts = Counter(articles[a]["paragraphs"][p]["context"] for (a, p) in paragraph_to_doc)
    id_pattern = re.compile(params.question_id_pattern) if params.question_id_pattern else None

    by_id = {d.doc_id: d for d in documents}
    queries: list[Query] = []
    positions: list[Position] = []
    evidence: dict[str, str] = {}
    seen_qids: set[str] = set()
    n_questions = n_answers = 0
    for a_index, article in enumerate(articles):
        for p_index, paragraph in enumerate(article["paragraphs"]):
            doc_id = paragraph_to_doc.get((a_index, p_index))
            for qa in paragraph["qas"]:
                n_questions += 1
                qid = str(qa["id"])
                answers = list(qa.get("answers", []))
                n_answers += len(answers)
                valid = []
                for k, answer in enumerate(answers):
                    local = Span(answer["answer_start"], answer["answer_start"] + len(answer["text"]))
                    if not answer["text"].strip():
                        drops.append(Drop(STAGE_ANSWERS, f"{qid}#{k}", "empty_answer"))
                    elif span_matches(paragraph["context"], local, answer["text"]):
                        valid.append((local, answer["text"]))
                    else:
                        drops.append(
                            Drop(
                                STAGE_ANSWERS,
                                f"{qid}#{k}",
                                "answer_offset_mismatch",
                                f"offset {answer['answer_start']} does not hold {answer['text']!r}",
                            )
                        )
                reason = _question_drop(qa, qid, seen_qids, doc_id, paragraph_counts[paragraph["context"]], id_pattern)
                if reason is None and not valid:
                    reason = "no_valid_answer"
                if reason:
                    drops.append(Drop(STAGE_QUESTIONS, qid, reason))
                    continue
                assert doc_id is not None
                seen_qids.add(qid)
                document = by_id[doc_id]
                local, answer_text = valid[0]
                span = local.shifted(paragraph_offset[(a_index, p_index)])
                queries.append(Query(qid, qa["question"].strip()))
                positions.append(
                    Position.of_span(
                        qid, doc_id, (span.start, span.end), len(document.text), doc_tokens[doc_id], n_bins, buckets
                    )
                )
                evidence[qid] = answer_text
    stages.append(stage_count(STAGE_ANSWERS, "answers", n_answers, drops))
    stages.append(stage_count(STAGE_QUESTIONS, "questions", n_questions, drops))
    # where every paragraph went: the cross-lingual builder places XQuAD's questions with it
    paragraphs = [
        (paragraph_key(articles[a]["paragraphs"][p]["context"]), doc_id, paragraph_offset[(a, p)], a, p)
        for (a, p), doc_id in paragraph_to_doc.items()
    ]
    built = BuiltBenchmark(documents, queries, positions, drops, stages, doc_tokens, evidence)
    built.tables[PARAGRAPHS] = (PARAGRAPH_FIELDS, paragraphs)
    return built


def _question_drop(
    qa: Mapping[str, Any],
    qid: str,
    seen: set[str],
    doc_id: str | None,
    paragraph_copies: int,
    id_pattern: re.Pattern[str] | None,
) -> str | None:
    if doc_id is None:
        return "paragraph_not_placed"
    if qid in seen:
        return "duplicate_question_id"
    if id_pattern is not None and not id_pattern.fullmatch(qid):
        return "question_id_not_original"
    if not str(qa.get("question", "")).strip():
        return "empty_question"
    if paragraph_copies > 1:
        return "evidence_in_several_documents"
    return None
