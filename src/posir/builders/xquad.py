"""Multilingual benchmarks from XQuAD's professionally translated SQuAD paragraphs.

XQuAD holds 240 SQuAD v1.1 dev paragraphs (5 per article) and their 1190
questions in parallel languages; question ids equal SQuAD ids. Two builders:

* ``cross_lingual_queries``: XQuAD questions in any language against the long
  English SQuAD documents of a base benchmark (PosIR's cross-lingual setting,
  section 5.2). Each question's span is the answer of ``xquad.en.json`` (it
  differs from SQuAD's first answer in 190 cases) shifted into the document
  that holds its paragraph.
* ``parallel_documents``: each language's own paragraphs partitioned into
  documents the same way in every language (the partition is drawn on the
  English token counts), so documents are parallel. Buckets and relative
  positions come from the English counterpart (PosIR section 5.1); each
  language's own span is verified in its own document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import Field

from posir.benchmark import BuiltBenchmark, Document, Drop, Position, Query, stage_count
from posir.builders import BenchmarkSpec
from posir.builders.sampling import LengthAwareSampler
from posir.builders.squad import SquadParams, document_id, paragraph_key, partition_article
from posir.metrics.positions import LengthBucket, bucket_of, relative_position, span_bin
from posir.schema import Language, Str
from posir.text import Span, TokenCounter, join_with_offsets, span_matches

STAGE_ALIGN = "align_questions"
STAGE_LOCATE = "locate_spans"


class ParallelStructureError(ValueError):
    """Two XQuAD files are not parallel (articles, paragraphs or question ids differ)."""


class MultilingualBenchmark(BenchmarkSpec):
    """Keys of the XQuAD builders: one variant ``<name>-<lang>`` per language, each read from its own source."""

    languages: tuple[Language, ...] = Field(min_length=1)
    """query languages; each needs a source of that name (and ``eng``, the reference)"""
    sources: dict[Str, Str] = Field(min_length=1)
    """language -> a ``sources`` entry holding that language's XQuAD-format file"""
    params: SquadParams = SquadParams()

    @property
    def query_languages(self) -> list[str]:
        return list(self.languages)


class CrossLingualBenchmark(MultilingualBenchmark):
    """``builder: xquad_cross_lingual``: XQuAD questions in each language against another benchmark's long English
    documents (PosIR's cross-lingual X->eng setting)."""

    builder: Literal["xquad_cross_lingual"]
    corpus_from: Str
    """the ``squad_long_documents`` benchmark whose documents these queries search"""


class ParallelBenchmark(MultilingualBenchmark):
    """``builder: xquad_parallel``: each language's own XQuAD paragraphs under one partition (parallel documents)."""

    builder: Literal["xquad_parallel"]


def _questions(data: Mapping[str, Any]) -> list[tuple[int, int, Mapping[str, Any]]]:
    return [
        (a, p, qa)
        for a, article in enumerate(data["data"])
        for p, paragraph in enumerate(article["paragraphs"])
        for qa in paragraph["qas"]
    ]


def question_texts(data: Mapping[str, Any]) -> dict[str, str]:
    return {str(qa["id"]): str(qa.get("question", "")).strip() for _, _, qa in _questions(data)}


def check_parallel(reference: Mapping[str, Any], other: Mapping[str, Any], label: str) -> None:
    """Same articles, paragraphs per article and question ids per paragraph as the reference."""
    if len(reference["data"]) != len(other["data"]):
        raise ParallelStructureError(
            f"{label}: {len(other['data'])} articles, the English file has {len(reference['data'])}"
        )
    for a, (ref_article, article) in enumerate(zip(reference["data"], other["data"])):
        if len(ref_article["paragraphs"]) != len(article["paragraphs"]):
            raise ParallelStructureError(
                f"{label}: article {a} has {len(article['paragraphs'])} paragraphs, "
                f"English has {len(ref_article['paragraphs'])}"
            )
        for p, (ref_paragraph, paragraph) in enumerate(zip(ref_article["paragraphs"], article["paragraphs"])):
            if [q["id"] for q in ref_paragraph["qas"]] != [q["id"] for q in paragraph["qas"]]:
                raise ParallelStructureError(
                    f"{label}: article {a}, paragraph {p}: question ids differ from the English file"
                )


def cross_lingual_queries(
    xquad_english: Mapping[str, Any],
    xquad_language: Mapping[str, Any],
    corpus: Sequence[Document],
    paragraph_locations: Mapping[str, tuple[str, int]],
    doc_token_lengths: Mapping[str, int],
    buckets: Sequence[LengthBucket],
    n_bins: int,
) -> BuiltBenchmark:
    """Questions of ``xquad_language`` whose positives and spans are English long documents.

    ``paragraph_locations`` maps a paragraph's text hash to (document id, offset)
    in the base benchmark's corpus.
    """
    by_id = {d.doc_id: d for d in corpus}
    texts = question_texts(xquad_language)
    drops: list[Drop] = []
    queries: list[Query] = []
    positions: list[Position] = []
    evidence: dict[str, str] = {}
    questions = _questions(xquad_english)
    for a, p, qa in questions:
        qid = str(qa["id"])
        context = xquad_english["data"][a]["paragraphs"][p]["context"]
        location = paragraph_locations.get(paragraph_key(context))
        text = texts.get(qid, "")
        if location is None:
            drops.append(Drop(STAGE_ALIGN, qid, "paragraph_not_in_corpus"))
            continue
        if not text:
            drops.append(Drop(STAGE_ALIGN, qid, "question_missing_in_language"))
            continue
        doc_id, offset = location
        answer = qa["answers"][0]
        span = Span(answer["answer_start"], answer["answer_start"] + len(answer["text"])).shifted(offset)
        document = by_id[doc_id]
        if not span_matches(document.text, span, answer["text"]):
            drops.append(Drop(STAGE_ALIGN, qid, "answer_offset_mismatch"))
            continue
        queries.append(Query(qid, text))
        positions.append(
            Position.of_span(
                qid, doc_id, (span.start, span.end), len(document.text), doc_token_lengths[doc_id], n_bins, buckets
            )
        )
        evidence[qid] = answer["text"]
    stages = [stage_count(STAGE_ALIGN, "questions", len(questions), drops)]
    # queries only: the corpus (and its token lengths, which the card counts) is the base benchmark's
    return BuiltBenchmark(None, queries, positions, drops, stages, dict(doc_token_lengths), evidence)


def parallel_partition(
    xquad_english: Mapping[str, Any], params: SquadParams, count_tokens: TokenCounter
) -> list[list[list[int]]]:
    """Per article, groups of paragraph indices drawn on the English token counts."""
    sampler = LengthAwareSampler(params.bucket_width, params.ratio)
    rng = np.random.default_rng(params.seed)
    return [
        partition_article([p["context"] for p in article["paragraphs"]], sampler, rng, count_tokens, params.separator)
        for article in xquad_english["data"]
    ]


def parallel_documents(
    xquad_english: Mapping[str, Any],
    xquad_language: Mapping[str, Any],
    language: str,
    params: SquadParams,
    count_tokens: TokenCounter,
    buckets: Sequence[LengthBucket],
    n_bins: int,
) -> BuiltBenchmark:
    """``language``'s documents and queries under the English partition.

    ``doc_token_length``, ``relative_position``, bin and bucket are the English
    counterpart's; ``span_start/end`` and ``doc_char_length`` are verified in
    this language's own document, and its own relative position is kept aside.
    """
    check_parallel(xquad_english, xquad_language, f"XQuAD '{language}'")
    if params.max_articles is not None:
        xquad_english = {"data": xquad_english["data"][: params.max_articles]}
        xquad_language = {"data": xquad_language["data"][: params.max_articles]}
    partition = parallel_partition(xquad_english, params, count_tokens)
    english_docs: dict[str, tuple[str, list[int]]] = {}
    documents: list[Document] = []
    doc_tokens: dict[str, int] = {}
    locations: dict[tuple[int, int], tuple[str, int, int]] = {}  # -> doc id, own offset, English offset
    for a, (groups, article) in enumerate(zip(partition, xquad_language["data"])):
        english_article = xquad_english["data"][a]
        title = english_article.get("title") or f"article{a:02d}"
        for d, group in enumerate(groups):
            doc_id = document_id(title, d)
            text, offsets = join_with_offsets([article["paragraphs"][i]["context"] for i in group], params.separator)
            english_text, english_offsets = join_with_offsets(
                [english_article["paragraphs"][i]["context"] for i in group], params.separator
            )
            documents.append(Document(doc_id, text, title.replace("_", " ")))
            doc_tokens[doc_id] = count_tokens(english_text)
            english_docs[doc_id] = (english_text, english_offsets)
            for i, own, eng in zip(group, offsets, english_offsets):
                locations[(a, i)] = (doc_id, own, eng)

    by_id = {doc.doc_id: doc for doc in documents}
    drops: list[Drop] = []
    queries: list[Query] = []
    positions: list[Position] = []
    evidence: dict[str, str] = {}
    english_questions = {str(qa["id"]): qa for _, _, qa in _questions(xquad_english)}
    questions = _questions(xquad_language)
    for a, p, qa in questions:
        qid = str(qa["id"])
        if (a, p) not in locations:
            drops.append(Drop(STAGE_LOCATE, qid, "paragraph_exceeds_max_tokens"))
            continue
        doc_id, own_offset, english_offset = locations[(a, p)]
        answer = qa["answers"][0]
        span = Span(answer["answer_start"], answer["answer_start"] + len(answer["text"])).shifted(own_offset)
        english_answer = english_questions[qid]["answers"][0]
        english_span = Span(
            english_answer["answer_start"], english_answer["answer_start"] + len(english_answer["text"])
        ).shifted(english_offset)
        document = by_id[doc_id]
        english_text, _ = english_docs[doc_id]
        if not str(qa.get("question", "")).strip():
            drops.append(Drop(STAGE_LOCATE, qid, "empty_question"))
            continue
        if not span_matches(document.text, span, answer["text"]) or not answer["text"]:
            drops.append(
                Drop(
                    STAGE_LOCATE,
                    qid,
                    "answer_offset_mismatch",
                    f"offset {answer['answer_start']} does not hold {answer['text']!r}",
                )
            )
            continue
        if not span_matches(english_text, english_span, english_answer["text"]):
            drops.append(Drop(STAGE_LOCATE, qid, "english_answer_offset_mismatch"))
            continue
        relative = relative_position(english_span.start, english_span.end, len(english_text))
        tokens = doc_tokens[doc_id]
        queries.append(Query(qid, str(qa["question"]).strip()))
        own = relative_position(span.start, span.end, len(document.text))
        positions.append(
            Position(
                qid,
                doc_id,
                span.start,
                span.end,
                len(document.text),
                tokens,
                relative,
                span_bin(english_span.start, english_span.end, len(english_text), n_bins),
                bucket_of(tokens, buckets),
                own,
            )
        )
        evidence[qid] = answer["text"]
    stages = [stage_count(STAGE_LOCATE, "questions", len(questions), drops)]
    return BuiltBenchmark(documents, queries, positions, drops, stages, doc_tokens, evidence)
