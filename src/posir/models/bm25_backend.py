"""BM25 with language-aware tokenisation (bm25s + PyStemmer).

Stemmer and stopwords follow the text's language where PyStemmer and bm25s
have them, and fall back to plain lower-cased word tokens otherwise:
Multi-EuP (section 5.3) shows the tokenizer choice itself creates language bias.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from posir.languages import language_name


@dataclass(frozen=True)
class Bm25Analyzer:
    language: str
    stemmer_name: str | None
    stopwords: tuple[str, ...]

    @classmethod
    def for_language(cls, code: str, params: Mapping[str, Any]) -> "Bm25Analyzer":
        import Stemmer
        from bm25s.tokenization import _infer_stopwords

        name = language_name(code)
        stemmer = name if params.get("stem", True) and name in Stemmer.algorithms() else None
        stopwords: tuple[str, ...] = ()
        if params.get("stopwords", True) and name is not None:
            try:
                stopwords = tuple(_infer_stopwords(name))
            except ValueError:
                stopwords = ()
        return cls(code, stemmer, stopwords)

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s
        import Stemmer

        stemmer = Stemmer.Stemmer(self.stemmer_name) if self.stemmer_name else None
        tokens = bm25s.tokenize(
            list(texts), lower=True, stopwords=list(self.stopwords), stemmer=stemmer, return_ids=False, show_progress=False
        )
        return [list(t) for t in tokens]


def tokenize_by_language(texts: Sequence[str], languages: Sequence[str], params: Mapping[str, Any]) -> list[list[str]]:
    """Each text analysed with its own language's analyzer, order kept."""
    tokens: list[list[str]] = [[] for _ in texts]
    for language in dict.fromkeys(languages):
        indices = [i for i, lang in enumerate(languages) if lang == language]
        analyzed = Bm25Analyzer.for_language(language, params).tokenize([texts[i] for i in indices])
        for i, toks in zip(indices, analyzed):
            tokens[i] = toks
    return tokens


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
    (one-vs-many corpora mix languages; each document keeps its own analyzer).
    """
    import bm25s

    if isinstance(document_languages, str):
        document_languages = [document_languages] * len(documents)
    query_analyzer = Bm25Analyzer.for_language(query_language, params)
    retriever = bm25s.BM25(k1=float(params.get("k1", 1.5)), b=float(params.get("b", 0.75)))
    retriever.index(tokenize_by_language(documents, document_languages, params), show_progress=True)
    k = min(k, len(documents))
    query_tokens = query_analyzer.tokenize(queries)
    indices, scores = retriever.retrieve(query_tokens, k=k, show_progress=True, n_threads=1)
    indices = np.asarray(indices)
    scores = np.asarray(scores, dtype=np.float32)
    # bm25s fills a query with no matching term with arbitrary zero-score documents; they are not retrieved.
    indices = np.where(scores > 0, indices, -1)
    return scores, indices
