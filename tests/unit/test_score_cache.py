"""The score cache: keys by content, only real scores stored, chunks and streamed answers kept on a kill.

The scorer under the cache is a query-term recall (a real lexical relevance,
pure Python); faults (a kill midway, a scorer losing pairs, a NaN) are injected
around it.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator, Sequence

import pytest

from posir.scorers import CachedScorer, ScoreCache, ScorerError
from posir.scorers.base import identity_hash
from posir.scorers.cache import text_hash


class TermRecall:
    """Share of the query's words found in the document."""

    def __init__(self, name: str = "recall") -> None:
        self.name = name
        self.pairs_scored = 0

    def identity(self) -> dict:
        return {"backend": "term-recall", "version": 1}

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        self.pairs_scored += len(queries)
        return [len(set(q.split()) & set(d.split())) / len(set(q.split())) for q, d in zip(queries, documents)]


class KilledAfter(TermRecall):
    """Fault: the job dies (KeyboardInterrupt) after ``calls`` score() calls."""

    def __init__(self, calls: int) -> None:
        super().__init__()
        self.calls_left = calls

    def score(self, queries, documents):
        if self.calls_left == 0:
            raise KeyboardInterrupt
        self.calls_left -= 1
        return super().score(queries, documents)


class StreamingRecall(TermRecall):
    """Answers one by one, in reverse order, with a failure (None) for empty documents; dies after ``die_after``."""

    def __init__(self, die_after: int | None = None) -> None:
        super().__init__()
        self.die_after = die_after

    def score_stream(self, queries, documents) -> Iterator[tuple[int, float | None]]:
        for count, index in enumerate(reversed(range(len(queries)))):
            if self.die_after is not None and count == self.die_after:
                raise KeyboardInterrupt
            self.pairs_scored += 1
            yield index, (None if not documents[index] else super().score([queries[index]], [documents[index]])[0])


QUERIES = ["red apple", "red apple", "green pear", "blue sky", "red apple"]
DOCUMENTS = ["a red apple", "a red apple", "a pear", "sky", "an apple"]
EXPECTED = [1.0, 1.0, 0.5, 0.5, 0.5]


def test_scores_are_computed_once_per_distinct_pair_and_then_served(tmp_path):
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        scorer = TermRecall()
        cached = CachedScorer(scorer, cache)
        assert cached.score(QUERIES, DOCUMENTS) == EXPECTED
        assert scorer.pairs_scored == 4 and cached.counts.as_dict() == {"hits": 0, "computed": 4, "failed": 0}
        assert cached.score(QUERIES, DOCUMENTS) == EXPECTED
        assert scorer.pairs_scored == 4 and cached.counts.hits == 4
    with ScoreCache(tmp_path / "scores.sqlite") as cache:  # another process, same file
        again = CachedScorer(TermRecall(), cache)
        assert again.score(QUERIES[::-1], DOCUMENTS[::-1]) == EXPECTED[::-1]
        assert again.counts.as_dict() == {"hits": 4, "computed": 0, "failed": 0}


def test_the_key_is_the_identity_and_the_texts(tmp_path):
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        CachedScorer(TermRecall(), cache).score(["q"], ["q d"])
        rows = sqlite3.connect(tmp_path / "scores.sqlite").execute("SELECT scorer, query, document FROM scores")
        assert list(rows) == [
            (identity_hash({"backend": "term-recall", "version": 1}), text_hash("q"), text_hash("q d"))
        ]

        class Other(TermRecall):
            def identity(self):
                return {"backend": "term-recall", "version": 2}

        other = CachedScorer(Other(), cache)
        other.score(["q"], ["q d"])
        assert other.counts.computed == 1  # another identity never reads these rows


def test_a_killed_job_keeps_its_finished_chunks(tmp_path):
    queries = [f"query {i}" for i in range(10)]
    documents = [f"document {i} query" for i in range(10)]
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        with pytest.raises(KeyboardInterrupt):
            CachedScorer(KilledAfter(calls=2), cache, chunk_size=3).score(queries, documents)
        assert cache.count() == 6  # two chunks of three committed before the kill
        rerun = CachedScorer(TermRecall(), cache, chunk_size=3)
        rerun.score(queries, documents)
        assert rerun.counts.as_dict() == {"hits": 6, "computed": 4, "failed": 0}


def test_streamed_answers_are_kept_as_they_arrive_and_failures_never(tmp_path):
    queries = ["a", "b", "c", "d"]
    documents = ["a", "", "c x", "d"]
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        with pytest.raises(KeyboardInterrupt):
            CachedScorer(StreamingRecall(die_after=2), cache).score(queries, documents)
        assert cache.count() == 2  # "d" and "c": each committed on arrival
        rerun = CachedScorer(StreamingRecall(), cache)
        assert rerun.score(queries, documents) == [1.0, None, 1.0, 1.0]
        assert rerun.counts.as_dict() == {"hits": 2, "computed": 1, "failed": 1}
        assert cache.count() == 3  # the failure (None) was not stored
        again = CachedScorer(StreamingRecall(), cache)
        again.score(queries, documents)
        assert again.counts.as_dict() == {"hits": 3, "computed": 0, "failed": 1}  # asked again, never served


def test_a_scorer_losing_pairs_or_returning_nan_is_an_error(tmp_path):
    class Loses(TermRecall):
        def score(self, queries, documents):
            return super().score(queries, documents)[:-1]

    class NaN(TermRecall):
        def score(self, queries, documents):
            return [math.nan] * len(queries)

    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        with pytest.raises(ScorerError, match="returned 1 scores for 2 pairs"):
            CachedScorer(Loses(), cache).score(["a", "b"], ["a", "b"])
        with pytest.raises(ScorerError, match=r"non-finite score \(nan\).*scorers\.recall\.dtype: float32"):
            CachedScorer(NaN(), cache).score(["a"], ["a"])
        assert cache.count() == 0


def test_mismatched_inputs_and_a_broken_file(tmp_path):
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        with pytest.raises(ValueError, match="2 queries but 1 documents"):
            CachedScorer(TermRecall(), cache).score(["a", "b"], ["a"])
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RuntimeError, match=r"broken\.sqlite: not a usable score cache .* delete it"):
        ScoreCache(broken)


def test_notes_persist(tmp_path):
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        assert cache.get_note("k") is None
        cache.put_note("k", "logprobs")
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        assert cache.get_note("k") == "logprobs"


def test_many_pairs_are_looked_up_in_chunks(tmp_path):
    queries = [f"q{i}" for i in range(1000)]
    with ScoreCache(tmp_path / "scores.sqlite") as cache:
        CachedScorer(TermRecall(), cache, chunk_size=500).score(queries, queries)
        again = CachedScorer(TermRecall(), cache)
        assert again.score(queries, queries) == [1.0] * 1000 and again.counts.hits == 1000
