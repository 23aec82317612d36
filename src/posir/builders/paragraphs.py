"""SQuAD-PosQ (Zeng et al., section 3.1): every distinct SQuAD paragraph a document of one corpus, every answerable
question a query whose positive is its paragraph and whose evidence is its first answer.

One or more SQuAD-format files (v1.1 or v2.0; the paper reads v2.0's train and dev) are read in the order given.
Paragraphs are documents by their text: a paragraph whose text another already has (in any file) is that document,
and a paragraph whose questions are all unanswerable stays in the corpus. A question is kept with its first
answer's span (``answer_start`` to ``answer_start + len(text)`` in its paragraph, checked to hold the answer text);
v2.0's unanswerable questions (``is_impossible``, or no answer) are dropped and counted.

Zeng et al.'s code keys a query's paragraph by the question's *text* (``query2passage[question] = context``), so a
question text asked of two paragraphs is judged against the last of them both times. Here every question keeps its
own paragraph; the card counts the question texts that appear more than once and those whose paragraphs differ (2
of SQuAD v1.1 dev's 10,570 questions).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from posir.benchmark import BuiltBenchmark, Document, Drop, Position, Query, stage_count
from posir.builders import BenchmarkSpec, BuilderParams
from posir.builders.squad_format import SquadFormatError
from posir.metrics.positions import LengthBucket
from posir.schema import Language, Str
from posir.text import TokenCounter

STAGE_PARAGRAPHS = "distinct_paragraphs"
STAGE_QUESTIONS = "answerable_questions"
UNANSWERABLE = "unanswerable"
SAME_TEXT = "same_text_as_an_earlier_paragraph"


class ParagraphParams(BuilderParams):
    """A ``squad_paragraphs`` benchmark's ``params``."""

    offset_mismatch: Literal["error", "drop"] = "error"
    """a first answer whose answer_start does not hold its text: stop naming it (error), or drop the question and
    count it (drop)"""


class SquadParagraphsBenchmark(BenchmarkSpec):
    """``builder: squad_paragraphs``: every distinct paragraph of SQuAD-format files a document, every answerable
    question a query with its first answer's span (Zeng et al.'s SQuAD-PosQ, section 3.1)."""

    builder: Literal["squad_paragraphs"]
    language: Language = "eng"
    sources: dict[Str, tuple[Str, ...]] = Field(min_length=1)
    """role -> ``sources`` entries; role ``squad`` lists the SQuAD-format files, read in order (e.g. v2.0 train and
    dev)"""
    params: ParagraphParams = ParagraphParams()


def _document_id(title: str, index: int, taken: Mapping[str, str], text: str) -> str:
    """``<title>-p<index>``, the first paragraph of that text; a title and index two files share get a suffix."""
    safe_title = re.sub(r"\s+", "_", title.strip()) or "untitled"
    base = f"{safe_title}-p{index:03d}"
    doc_id, copy = base, 1
    while doc_id in taken and taken[doc_id] != text:
        copy += 1
        doc_id = f"{base}~{copy}"
    return doc_id


def build_paragraphs(
    files: Sequence[tuple[Path, Mapping[str, Any]]],
    params: ParagraphParams,
    count_tokens: TokenCounter,
    buckets: Sequence[LengthBucket],
    n_bins: int,
) -> BuiltBenchmark:
    """The benchmark of ``files`` (each a path and its parsed, format-checked SQuAD data), in order."""
    documents: list[Document] = []
    by_text: dict[str, str] = {}  # paragraph text -> its document
    texts_by_id: dict[str, str] = {}
    queries: list[Query] = []
    spans: list[tuple[str, str, tuple[int, int]]] = []  # qid, document, evidence span
    evidence: dict[str, str] = {}
    drops: list[Drop] = []
    n_paragraphs = n_questions = 0
    seen_qids: set[str] = set()
    asked: dict[str, set[str]] = {}  # question text -> the documents it is asked of
    question_texts: Counter[str] = Counter()
    for path, data in files:
        for article in data["data"]:
            for p_index, paragraph in enumerate(article["paragraphs"]):
                n_paragraphs += 1
                text = paragraph["context"]
                doc_id = by_text.get(text)
                if doc_id is None:
                    doc_id = _document_id(article.get("title", ""), p_index, texts_by_id, text)
                    by_text[text], texts_by_id[doc_id] = doc_id, text
                    documents.append(Document(doc_id, text, str(article.get("title", "")).replace("_", " ")))
                else:
                    drops.append(Drop(STAGE_PARAGRAPHS, f"{path.name}:{article.get('title')}#{p_index}", SAME_TEXT))
                for qa in paragraph["qas"]:
                    n_questions += 1
                    qid, question = str(qa["id"]), qa["question"].strip()
                    reason = _question_drop(qa, qid, question, seen_qids)
                    span = None if reason else _first_answer(qa, text, path, article, p_index, params)
                    if reason is None and span is None:
                        reason = "answer_offset_mismatch"
                    if reason:
                        drops.append(Drop(STAGE_QUESTIONS, qid, reason))
                        continue
                    assert span is not None
                    seen_qids.add(qid)
                    question_texts[question] += 1
                    asked.setdefault(question, set()).add(doc_id)
                    queries.append(Query(qid, question))
                    spans.append((qid, doc_id, span))
                    evidence[qid] = text[span[0] : span[1]]
    tokens = {d.doc_id: count_tokens(d.text) for d in documents}
    positions = [
        Position.of_span(qid, doc_id, span, len(texts_by_id[doc_id]), tokens[doc_id], n_bins, buckets)
        for qid, doc_id, span in spans
    ]
    stages = [
        stage_count(STAGE_PARAGRAPHS, "paragraphs", n_paragraphs, drops),
        stage_count(STAGE_QUESTIONS, "questions", n_questions, drops),
    ]
    repeated = [q for q, n in question_texts.items() if n > 1]
    built = BuiltBenchmark(documents, queries, positions, drops, stages, tokens, evidence)
    built.card["question_texts"] = {
        "asked_more_than_once": len(repeated),
        "queries_with_a_repeated_text": sum(question_texts[q] for q in repeated),
        "asked_of_different_paragraphs": sum(1 for q in repeated if len(asked[q]) > 1),
    }
    built.notes.append(
        "Every answerable question is a query judged against its own paragraph. Zeng et al.'s code keys the "
        "paragraph by the question's text, so a text asked of several paragraphs is judged against the last of "
        "them each time it is asked; card.question_texts counts such texts."
    )
    return built


def _question_drop(qa: Mapping[str, Any], qid: str, question: str, seen: set[str]) -> str | None:
    if qa.get("is_impossible") or not qa.get("answers"):
        return UNANSWERABLE
    if qid in seen:
        return "duplicate_question_id"
    if not question:
        return "empty_question"
    return None


def _first_answer(
    qa: Mapping[str, Any], text: str, path: Path, article: Mapping[str, Any], p_index: int, params: ParagraphParams
) -> tuple[int, int] | None:
    """The first answer's span, checked to hold its text; None (to be dropped) or an error when it does not."""
    answer = qa["answers"][0]
    start, answer_text = answer["answer_start"], answer["text"]
    end = start + len(answer_text)
    if answer_text and 0 <= start and end <= len(text) and text[start:end] == answer_text:
        return start, end
    if params.offset_mismatch == "drop":
        return None
    found = text[start:end] if 0 <= start < len(text) else "(outside the paragraph)"
    raise SquadFormatError(
        f"{path}: article {article.get('title')!r}, paragraph {p_index}, question {qa['id']}: answer 0's "
        f"answer_start {start} holds {found!r}, not the answer text {answer_text!r}. Fix the offset in the file, "
        f"or set the benchmark's params.offset_mismatch: drop to drop such questions (counted in drops.tsv)"
    )
