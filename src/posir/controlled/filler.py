"""Filler for insert mode: units of other documents that neither answer nor resemble the query.

The haystack around a needle must not compete with it: a filler unit that
holds the answer, or most of the query's words, would be evidence of its own
and turn a position test into a relevance test. So, per query, a unit of the
same corpus (hence the same language) is filler only if

* it comes from another document than the query's positive, and from none with
  the positive's title (our SQuAD-format documents are parts of one article, titled
  by it: another part of the same article could restate the evidence in other words);
* it does not contain any of the query's answers (NFKC, case-folded, punctuation
  and whitespace unified by :func:`posir.text.normalize_with_offsets`, and matched
  as a plain substring, not on word boundaries: scripts without spaces have no
  word boundaries, and a false "contains" only costs one candidate);
* its **query-term recall** is at most a threshold: the share of the query's
  distinct terms, analysed as BM25 analyses them
  (:class:`posir.models.backends.bm25.Bm25Analyzer`: NFKC, lower case, stopwords
  removed, Snowball stem; character unigrams and bigrams for scripts without
  spaces), that occur in the unit. Recall rather than Jaccard similarity: Jaccard
  shrinks with the unit's length, so a long unit holding every query term could
  pass; recall asks how much of the query the unit could match, whatever its length;
* it is not excluded by the caller (the evidence units of the other queries
  sampled into the same corpus, which would otherwise compete with their own needle).

Units are visited in a seeded random order per query and taken while the
haystack stays within the target length (Qwen3 tokens, PosIR section 3.1).
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from posir.benchmark import Document
from posir.controlled.placement import VariantRefused, haystack
from posir.text import TokenCounter, normalize_with_offsets
from posir.text_units import Units

if TYPE_CHECKING:  # the analyzer's regex and stemmer load only in the jobs that build filler
    from posir.models.backends.bm25 import Bm25Analyzer

NO_FILLER = "no_filler_without_answer"
OVERLAP_MEASURE = "query_term_recall"
#: The analysis of the overlap measure: the workflow's BM25 defaults (config.yaml ``models.bm25.params``).
OVERLAP_ANALYSIS = {"stem": True, "stopwords": True, "min_token_chars": 2}
# Consecutive candidates that do not fit the remaining budget before the haystack counts as full.
MAX_MISFITS = 64


def matching_form(text: str) -> str:
    """The form in which answers are looked for in units (see the module docstring)."""
    return normalize_with_offsets(text)[0]


@dataclass(frozen=True)
class QueryTermRecall:
    """Lexical overlap of a unit with a query: share of the query's distinct analysed terms found in the unit."""

    analyzer: Bm25Analyzer

    @classmethod
    def for_language(cls, language: str) -> QueryTermRecall:
        from posir.models.backends.bm25 import Bm25Analyzer

        return cls(Bm25Analyzer.for_language(language, OVERLAP_ANALYSIS))

    def terms(self, text: str) -> frozenset[str]:
        return frozenset(self.analyzer.analyze(text))

    @staticmethod
    def overlap(query_terms: frozenset[str], unit_terms: frozenset[str]) -> float:
        """0 for a query without terms: nothing of it can be matched."""
        return len(query_terms & unit_terms) / len(query_terms) if query_terms else 0.0

    def describe(self, threshold: float) -> dict[str, Any]:
        """The card's record of the measure."""
        return {
            "name": OVERLAP_MEASURE,
            "threshold": threshold,
            "language": self.analyzer.language,
            "stemmer": self.analyzer.stemmer_name,
            "stopwords": bool(self.analyzer.stopwords),
            "definition": "share of the query's distinct BM25-analysed terms that occur in the unit",
        }


@dataclass
class FillerPool:
    """Every unit of every document, with what filler choice needs of it computed once, when first asked."""

    doc_ids: list[str]
    titles: list[str]
    texts: list[str]
    count_tokens: TokenCounter
    measure: QueryTermRecall
    _tokens: dict[int, int] = field(default_factory=dict)
    _forms: dict[int, str] = field(default_factory=dict)
    _terms: dict[int, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        documents: Mapping[str, Units],
        titles: Mapping[str, str],
        count_tokens: TokenCounter,
        measure: QueryTermRecall,
    ) -> FillerPool:
        """The units of ``documents`` (by id), each with its document's title."""
        doc_ids = [doc_id for doc_id, units in documents.items() for _ in units.units]
        texts = [unit for units in documents.values() for unit in units.units]
        return cls(doc_ids, [titles.get(doc_id, "") for doc_id in doc_ids], texts, count_tokens, measure)

    def __len__(self) -> int:
        return len(self.texts)

    def tokens(self, index: int) -> int:
        if index not in self._tokens:
            self._tokens[index] = self.count_tokens(self.texts[index])
        return self._tokens[index]

    def form(self, index: int) -> str:
        if index not in self._forms:
            self._forms[index] = matching_form(self.texts[index])
        return self._forms[index]

    def terms(self, index: int) -> frozenset[str]:
        if index not in self._terms:
            self._terms[index] = self.measure.terms(self.texts[index])
        return self._terms[index]


@dataclass(frozen=True)
class FillerQuery:
    """What filler is chosen for: the query, its positive (id and title), its answers and the needle it surrounds."""

    qid: str
    doc_id: str
    title: str
    terms: frozenset[str]
    answer_forms: tuple[str, ...]
    needle: str


@dataclass(frozen=True)
class Filler:
    """Filler units (pool indices, in haystack order) and the haystack they make with the needle."""

    indices: tuple[int, ...]
    units: tuple[str, ...]
    source_documents: tuple[str, ...]
    max_overlap: float
    haystack: Units
    tokens: int

    @cached_property
    def unit_set(self) -> frozenset[str]:
        """The filler units as a set, for asking whether a unit is among them."""
        return frozenset(self.units)


def visiting_order(pool_size: int, seed: int, qid: str) -> np.ndarray:
    """The order in which a query's filler candidates are visited: fixed by the seed and the query id only."""
    return np.random.default_rng([seed, zlib.crc32(qid.encode("utf-8"))]).permutation(pool_size)


def is_filler(pool: FillerPool, index: int, query: FillerQuery, threshold: float, excluded: Collection[str]) -> bool:
    """Whether unit ``index`` may surround ``query``'s needle (module docstring)."""
    if pool.doc_ids[index] == query.doc_id or (query.title and pool.titles[index] == query.title):
        return False
    if pool.texts[index] in excluded:
        return False
    form = pool.form(index)
    if any(answer in form for answer in query.answer_forms):
        return False
    return QueryTermRecall.overlap(query.terms, pool.terms(index)) <= threshold


def choose_filler(
    pool: FillerPool,
    query: FillerQuery,
    order: Iterable[int],
    target_tokens: int,
    separator: str,
    kind: str,
    threshold: float,
    min_fill: float,
    excluded: Collection[str] = (),
) -> Filler:
    """Filler in ``order`` for a haystack (filler and needle) of at most ``target_tokens`` Qwen3 tokens.

    Units are summed by their own token counts (plus the separator's) while they
    fit; the assembled haystack is then counted whole and trimmed from the end
    while over the target, since tokens can merge across a join. Raises
    :class:`posir.controlled.placement.VariantRefused` when it reaches less than ``min_fill`` of the target.
    """
    count = pool.count_tokens
    separator_tokens = count(separator) if separator else 0
    total = count(query.needle)
    chosen: list[int] = []
    misfits = 0
    for index in order:
        index = int(index)
        if not is_filler(pool, index, query, threshold, excluded):
            continue
        cost = pool.tokens(index) + separator_tokens
        if total + cost <= target_tokens:
            chosen.append(index)
            total += cost
            misfits = 0
        else:
            misfits += 1
            if misfits >= MAX_MISFITS or target_tokens - total <= separator_tokens:
                break

    def assemble(indices: Sequence[int]) -> Units:
        return haystack([pool.texts[i] for i in indices], query.needle, separator, kind)

    units = assemble(chosen)
    tokens = count(units.text)
    while tokens > target_tokens and chosen:
        chosen.pop()
        units = assemble(chosen)
        tokens = count(units.text)
    if tokens < min_fill * target_tokens:
        raise VariantRefused(
            NO_FILLER,
            f"{tokens} of {target_tokens} tokens from units of other documents without "
            f"the answer and with {OVERLAP_MEASURE} <= {threshold}",
        )
    overlaps = [QueryTermRecall.overlap(query.terms, pool.terms(i)) for i in chosen]
    return Filler(
        tuple(chosen),
        tuple(pool.texts[i] for i in chosen),
        tuple(pool.doc_ids[i] for i in chosen),
        max(overlaps, default=0.0),
        units,
        tokens,
    )


#: Languages written without spaces between words or sentences (ISO 639-3).
NO_SPACE_LANGUAGES = frozenset({"zho", "cmn", "jpn", "tha", "lao", "khm", "mya"})


def filler_separator(kind: str, language: str, paragraph_separator: str | None) -> str:
    """How filler units are joined: paragraphs by the source's separator, sentences by a space.

    Scripts written without spaces join sentences with nothing, as their own texts do.
    """
    if kind == "paragraph" and paragraph_separator:
        return paragraph_separator
    return "" if language in NO_SPACE_LANGUAGES else " "


def answer_forms(answers: Sequence[str]) -> tuple[str, ...]:
    """The matching forms of a query's answers, empty ones left out."""
    return tuple(dict.fromkeys(f for f in (matching_form(a) for a in answers) if f))


def filler_query(
    qid: str, document: Document, query_text: str, answers: Sequence[str], needle: str, measure: QueryTermRecall
) -> FillerQuery:
    """What :func:`choose_filler` needs of a query whose positive is ``document``."""
    return FillerQuery(qid, document.doc_id, document.title, measure.terms(query_text), answer_forms(answers), needle)
