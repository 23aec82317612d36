"""Language bias in one-vs-many retrieval (Multi-EuP, sections 3-5).

In a corpus holding the parallel documents of every language, a
language-neutral retriever would spread its top results over all languages;
the share of each document language among the top-``depth`` results, pooled
over the queries of one query language, shows which languages it prefers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

LANGUAGE_SEPARATOR = ":"


def document_language(doc_id: str) -> str:
    language, separator, _ = doc_id.partition(LANGUAGE_SEPARATOR)
    if not separator:
        raise ValueError(f"document id '{doc_id}' has no '<language>:' prefix; one-vs-many runs prefix every id")
    return language


def language_shares(rankings: Iterable[tuple[str, Sequence[str]]], depth: int = 100) -> dict[str, float]:
    """Share of each document language among the top-``depth`` documents of all queries (``rankings``: each query's
    document ids in trec_eval's order, as :func:`posir.results.runs.iter_rankings` reads them)."""
    counts: Counter[str] = Counter()
    for _, ranking in rankings:
        counts.update(document_language(doc) for doc in ranking[:depth])
    total = sum(counts.values())
    return {language: n / total for language, n in sorted(counts.items())} if total else {}


def expand_qrels(qrels: Mapping[str, Mapping[str, int]], prefixes: list[str]) -> dict[str, dict[str, int]]:
    """Every parallel copy of a positive is relevant in a one-vs-many corpus."""
    return {
        qid: {f"{p}{LANGUAGE_SEPARATOR}{doc}": rel for p in prefixes for doc, rel in docs.items()}
        for qid, docs in qrels.items()
    }
