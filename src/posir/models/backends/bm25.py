"""BM25 with language-aware tokenisation (bm25s for scoring, PyStemmer for stemming).

Multi-EuP (Sec. 5.3) shows that the analyzer itself creates language bias in
BM25, so the analysis is explicit and the same for every language, differing
only where the language requires it:

1. Unicode NFKC normalisation and lower-casing (folds full-width Latin/digits in
   Chinese text and Arabic presentation forms onto their plain letters).
2. Word tokens are maximal runs of letters, digits AND combining marks
   (``[\\p{L}\\p{N}\\p{M}]+``). bm25s' default pattern ``\\w\\w+`` (Python ``re``)
   does not treat combining marks as word characters, so it splits Devanagari
   at every vowel sign and virama (``हिन्दी`` yields no token at all) and Arabic
   at every haraka; keeping marks inside the token fixes Hindi, Arabic, Thai,
   Bengali, Tamil, ... alike. Word tokens shorter than ``min_token_chars``
   code points (default 2, as bm25s) are dropped.
3. Scripts written without spaces between words (Han, Hiragana, Katakana,
   Thai, Lao, Khmer, Myanmar) would otherwise give one "word" per clause. Their
   runs become overlapping character unigrams AND bigrams (a character keeps
   its combining marks). Chosen over per-character tokens, whose matches are
   dominated by frequent characters, and over bigrams only (Lucene's
   CJKAnalyzer), which cannot match one-character words in short queries:
   unigram+bigram indexing is the standard segmenter-free baseline for Chinese
   retrieval and performs on par with dictionary word segmentation, without a
   segmenter whose own errors would differ by domain. It roughly doubles the
   token count of those runs, which BM25's length normalisation sees
   uniformly within a language.
4. Stopwords (bm25s' lists: en, de, nl, fr, es, pt, it, ru, sv, no, zh, tr,
   ko, da) and the Snowball stemmer of the language (PyStemmer: ar, hi, de,
   ru, ...) where they exist; otherwise tokens stay as they are. Stemming
   applies to word tokens, not to the character n-grams of step 3.
   ``stem: false`` and ``stopwords: false`` give the language-independent
   analysis Multi-EuP recommends for comparing languages.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import regex

from posir.languages import language_name
from posir.retrieval.texts import SearchTask

# Scripts without spaces between words; a "character" is a base character with its combining marks.
_NOSPACE_CHAR = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]\p{M}*"
_TOKEN_RE = regex.compile(
    rf"(?P<nospace>(?:{_NOSPACE_CHAR})+)"
    rf"|(?P<word>(?:(?!{_NOSPACE_CHAR})[\p{{L}}\p{{N}}\p{{M}}])+)"
)
_NOSPACE_CHAR_RE = regex.compile(_NOSPACE_CHAR)


def _stopword_list(name: str | None) -> tuple[str, ...]:
    from bm25s.tokenization import _infer_stopwords

    if name is None:
        return ()
    try:
        return tuple(_infer_stopwords(name))
    except ValueError:
        return ()  # bm25s has no list for this language


@dataclass(frozen=True)
class Bm25Analyzer:
    language: str
    stemmer_name: str | None
    stopwords: frozenset[str]
    min_token_chars: int = 2

    @classmethod
    def for_language(cls, code: str, params: Mapping[str, Any]) -> Bm25Analyzer:
        import Stemmer

        name = language_name(code)
        stemmer = name if params["stem"] and name in Stemmer.algorithms() else None
        stopwords = _stopword_list(name) if params["stopwords"] else ()
        # Stopword lists are lower-case; normalise them like the text so NFKC variants still match.
        normalised = frozenset(unicodedata.normalize("NFKC", w).lower() for w in stopwords)
        return cls(code, stemmer, normalised, int(params["min_token_chars"]))

    @cached_property
    def _stemmer(self) -> Any:
        import Stemmer

        return Stemmer.Stemmer(self.stemmer_name) if self.stemmer_name else None

    def raw_tokens(self, text: str) -> list[str]:
        """Steps 1-3: normalised word tokens and character n-grams, before stopwords and stemming."""
        tokens: list[str] = []
        for match in _TOKEN_RE.finditer(unicodedata.normalize("NFKC", text).lower()):
            if match.lastgroup == "word":
                word = match.group()
                if len(word) >= self.min_token_chars:
                    tokens.append(word)
            else:
                chars = _NOSPACE_CHAR_RE.findall(match.group())
                tokens.extend(chars)
                tokens.extend(a + b for a, b in itertools.pairwise(chars))
        return tokens

    def analyze(self, text: str) -> list[str]:
        tokens = [t for t in self.raw_tokens(text) if t not in self.stopwords]
        if self._stemmer is None:
            return tokens
        # n-grams of no-space scripts are never stemmed; Snowball leaves them unchanged anyway, but be explicit.
        stemmed = (t if _NOSPACE_CHAR_RE.match(t) else self._stemmer.stemWord(t) for t in tokens)
        # A Snowball stemmer can reduce a word to "" (seen in languages we do not test); an empty token
        # would match every other empty token and, in a query, can crash bm25s (see indexed_vocabulary).
        return [t for t in stemmed if t]

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        return [self.analyze(t) for t in texts]


def tokenize_by_language(texts: Sequence[str], languages: Sequence[str], params: Mapping[str, Any]) -> list[list[str]]:
    """Each text analysed with its own language's analyzer, order kept."""
    tokens: list[list[str]] = [[] for _ in texts]
    for language in dict.fromkeys(languages):
        indices = [i for i, lang in enumerate(languages) if lang == language]
        analyzed = Bm25Analyzer.for_language(language, params).tokenize([texts[i] for i in indices])
        for i, toks in zip(indices, analyzed):
            tokens[i] = toks
    return tokens


def indexed_vocabulary(retriever: Any) -> frozenset[str]:
    """Tokens the index really holds.

    bm25s always keeps ``""`` in ``vocab_dict``, with an id past the index when no
    document contains it; a query holding such a token makes ``retrieve`` fail
    ("maximum token ID in the query ... is higher than the number of tokens in the
    index"), so query tokens are filtered against the ids the index has rows for.
    """
    indexed = len(retriever.scores["indptr"]) - 1
    return frozenset(token for token, token_id in retriever.vocab_dict.items() if token_id < indexed)


def bm25_search(
    documents: Sequence[str],
    queries: Sequence[str],
    k: int,
    document_languages: str | Sequence[str],
    query_language: str,
    params: Mapping[str, Any],
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, document indices) per query; rows padded with -1 when a query matches nothing.

    ``document_languages`` is one language for the whole corpus or one per document
    (a one-vs-many corpus mixes languages; each document keeps its own analyzer).
    """
    import bm25s

    if isinstance(document_languages, str):
        document_languages = [document_languages] * len(documents)
    query_analyzer = Bm25Analyzer.for_language(query_language, params)
    retriever = bm25s.BM25(k1=float(params["k1"]), b=float(params["b"]))
    retriever.index(tokenize_by_language(documents, document_languages, params), show_progress=len(documents) > 1000)
    k = min(k, len(documents))
    query_tokens = query_analyzer.tokenize(queries)
    # bm25s cannot score a query whose tokens are all unknown to the index; give it an empty row instead.
    vocabulary = indexed_vocabulary(retriever)
    query_tokens = [[t for t in q if t in vocabulary] for q in query_tokens]
    scores = np.zeros((len(queries), k), dtype=np.float32)
    indices = np.full((len(queries), k), -1, dtype=np.int64)
    answerable = [i for i, q in enumerate(query_tokens) if q]
    if answerable and k > 0:
        found, found_scores = retriever.retrieve(
            [query_tokens[i] for i in answerable], k=k, show_progress=len(answerable) > 1000, n_threads=1
        )
        scores[answerable] = np.asarray(found_scores, dtype=np.float32)
        indices[answerable] = np.asarray(found)
    # bm25s fills a query's unmatched slots with arbitrary zero-score documents; they are not retrieved.
    indices = np.where(scores > 0, indices, -1)
    return scores, indices


def rank(spec: Any, task: SearchTask) -> tuple[np.ndarray, np.ndarray]:
    """BM25 as a model kind that ranks the corpus itself: each document analysed in its own language, each query in the
    setting's query language."""
    return bm25_search(
        task.documents, task.queries, task.top_k, task.document_languages, task.setting.query_language, spec.params
    )
