"""BM25 with a Snowball stemmer that reduces some words to the empty string.

Such stemmers exist for languages we do not test yet. bm25s always keeps ``""`` in
its vocabulary with an id past the index, so an empty query token used to crash
cross-lingual BM25 ("The maximum token ID in the query ... is higher than the number
of tokens in the index"). The stemmer here is a fault injected around the real one.
"""

from __future__ import annotations

import pytest
import Stemmer

from posir.models.backends.bm25 import Bm25Analyzer, bm25_search

EMPTIED = {"beyond", "tomorrow"}


def bm25_params(**overrides: object) -> dict:
    """A bm25 entry's params with the schema's defaults filled in, as the workflow passes them."""
    from posir.models.declarations.spec import ModelSpec

    return dict(ModelSpec.from_config("bm25", {"backend": "bm25", "params": overrides}).params)


class _EmptyingStemmer:
    """The real Snowball stemmer, except that it returns "" for a few words."""

    def __init__(self, name: str) -> None:
        self._real = _REAL_STEMMER(name)

    def stemWord(self, word: str) -> str:  # noqa: N802 (PyStemmer's name)
        return "" if word in EMPTIED else self._real.stemWord(word)


_REAL_STEMMER = Stemmer.Stemmer


@pytest.fixture
def emptying_stemmer(monkeypatch):
    monkeypatch.setattr(Stemmer, "Stemmer", _EmptyingStemmer)


def test_the_analyzer_never_emits_an_empty_token(emptying_stemmer):
    analyzer = Bm25Analyzer.for_language("eng", bm25_params())
    tokens = analyzer.analyze("Rivers flow beyond the mountains until tomorrow")
    assert "" not in tokens
    assert tokens == ["river", "flow", "mountain", "until"]


def test_a_query_stemmed_to_empty_tokens_is_searched_not_crashed(emptying_stemmer):
    documents = ["The river flows through the valley.", "Mountains rise above the plain."]
    queries = ["river beyond tomorrow", "beyond tomorrow", "mountains"]
    scores, indices = bm25_search(documents, queries, 2, "eng", "eng", bm25_params())
    assert indices[0][0] == 0 and scores[0][0] > 0
    assert (indices[1] == -1).all(), "a query with no indexed token retrieves nothing"
    assert indices[2][0] == 1
