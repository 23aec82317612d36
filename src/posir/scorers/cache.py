"""The score cache: one sqlite file (WAL) of (scorer identity, query, document) -> score.

Quality control and reranking score the same pairs again and again (every
rerun, every config that shares a benchmark, the false-negative step scoring a
positive that the contrast step already scored), and an LLM or API pair costs
money and time.  Like the embedding cache (:mod:`posir.embedding_cache`), scores
are looked up by content: the key is the sha256 of the scorer's identity
(:func:`posir.scorers.base.identity_hash`), of the query text and of the
document text, so a text shared by several benchmarks is scored once.

Only real scores are stored: ``None`` (an outage, a failed answer) never is, so
a later run asks again.  :class:`CachedScorer` writes every chunk of local
scores in one transaction and every remote answer the moment it arrives
(:class:`~posir.scorers.base.StreamingScorer`), so a killed job keeps all it
finished and its rerun repeats none of it.  The file is a
:class:`posir.cache_store.CacheStore`: parallel jobs share it, and a stored score
that fails its checksum or is not finite is dropped and scored again.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posir.cache_store import CacheError, CacheFacade, CacheKind, CacheStore, Table, first_value
from posir.scorers.base import PairScorer, ScorerError, StreamingScorer, check_pairs, identity_hash

DEFAULT_CHUNK = 256


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _score(values: tuple[Any, ...]) -> float:
    score = float(values[0])
    if not math.isfinite(score):
        raise ValueError(f"a non-finite score ({score})")
    return score


def _json(values: tuple[Any, ...]) -> tuple[str, Any]:
    return values[0], json.loads(values[1])


SCORE_CACHE = CacheKind(
    name="score",
    holds="scores",
    tables=(
        Table(
            "scores",
            ("scorer", "query", "document"),
            ("score REAL NOT NULL", "created REAL NOT NULL"),
            _score,
            without_rowid=True,
        ),
        # What each identity hash stands for, so a person can tell the rows of two configs apart.
        Table("scorers", ("scorer",), ("name TEXT NOT NULL", "identity TEXT NOT NULL"), _json),
        # Small facts learnt from endpoints (e.g. whether one returns logprobs), so a rerun need not ask again.
        Table("notes", ("key",), ("value TEXT NOT NULL",), first_value),
    ),
    legacy_tables=frozenset({"scores", "scorers", "notes"}),
)

# Every failure of the score cache is a CacheError whose message names the file and the fix; the old name stays.
ScoreCacheError = CacheError


class ScoreCache(CacheFacade):
    """Scores by (scorer identity hash, query hash, document hash) in one :class:`~posir.cache_store.CacheStore`.

    Safe for one process's threads and for several processes; a stored score that fails its checksum
    or is not finite is dropped and counted in :attr:`counts`, so it is scored again.
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 120.0) -> None:
        self.path = Path(path)
        self._store = CacheStore(self.path, SCORE_CACHE, busy_timeout_s=busy_timeout_s)

    def __repr__(self) -> str:
        return f"ScoreCache({str(self.path)!r})"

    def register(self, scorer: str, name: str, identity: Mapping[str, Any]) -> None:
        self._store.put("scorers", (scorer,), (name, json.dumps(identity, sort_keys=True, default=str)))

    def get_many(self, scorer: str, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Cached scores of (query hash, document hash) keys; missing keys are absent."""
        found = self._store.get_many("scores", [(scorer, query, document) for query, document in keys])
        return {(query, document): score for (_, query, document), score in found.items()}

    def put_many(self, scorer: str, rows: Sequence[tuple[str, str, float]]) -> None:
        """Store (query hash, document hash, score) rows in one transaction (committed on return)."""
        now = time.time()
        self._store.put_many("scores", [((scorer, q, d), (s, now)) for q, d, s in rows])

    def count(self, scorer: str | None = None) -> int:
        return self._store.count("scores") if scorer is None else self._store.count("scores", scorer=scorer)

    def get_note(self, key: str) -> str | None:
        return self._store.get("notes", (key,))

    def put_note(self, key: str, value: str) -> None:
        self._store.put("notes", (key,), (value,))


@dataclass
class ScoreCounts:
    """Pairs answered by the cache, computed now, and left without a score, over a scorer's lifetime.

    Pairs repeated within one call count once (they are looked up and computed once).
    """

    hits: int = 0
    computed: int = 0
    failed: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class _Lookup:
    """One call's pairs: their texts, their hash keys and the scores known so far (cached or just computed)."""

    queries: Sequence[str]
    documents: Sequence[str]
    pairs: list[tuple[str, str]]
    known: dict[tuple[str, str], float | None]

    def texts(self, indices: Sequence[int]) -> tuple[list[str], list[str]]:
        return [self.queries[i] for i in indices], [self.documents[i] for i in indices]


class CachedScorer:
    """Any :class:`PairScorer` behind a :class:`ScoreCache`; itself a :class:`PairScorer`.

    ``chunk_size`` pairs are computed and committed at a time for a local
    scorer; a :class:`StreamingScorer` has each answer committed on arrival.
    """

    def __init__(self, scorer: PairScorer, cache: ScoreCache, *, chunk_size: int = DEFAULT_CHUNK) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be positive, got {chunk_size}")
        self.scorer = scorer
        self.cache = cache
        self.chunk_size = chunk_size
        self.name = scorer.name
        self.counts = ScoreCounts()
        self._key: str | None = None

    def __repr__(self) -> str:
        return f"CachedScorer({self.scorer!r}, {self.cache!r})"

    def identity(self) -> Mapping[str, Any]:
        return self.scorer.identity()

    @property
    def key(self) -> str:
        """The identity hash, computed once (asking an LLM scorer's identity may need one probe call)."""
        if self._key is None:
            identity = self.scorer.identity()
            self._key = identity_hash(identity)
            self.cache.register(self._key, self.name, identity)
        return self._key

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        pairs = [(text_hash(q), text_hash(d)) for q, d in zip(queries, documents)]
        known: dict[tuple[str, str], float | None] = dict(self.cache.get_many(self.key, pairs))
        self.counts.hits += len({p for p in pairs if p in known})
        todo: dict[tuple[str, str], int] = {}
        for index, pair in enumerate(pairs):
            if pair not in known and pair not in todo:
                todo[pair] = index
        misses = list(todo.values())
        lookup = _Lookup(queries, documents, pairs, known)
        if isinstance(self.scorer, StreamingScorer):
            self._stream(lookup, misses)
        else:
            for start in range(0, len(misses), self.chunk_size):
                self._chunk(lookup, misses[start : start + self.chunk_size])
        return [known[p] for p in pairs]

    def _chunk(self, lookup: _Lookup, chunk: list[int]) -> None:
        values = self.scorer.score(*lookup.texts(chunk))
        if len(values) != len(chunk):
            raise ScorerError(f"scorer {self.name} returned {len(values)} scores for {len(chunk)} pairs")
        rows = [row for i, value in zip(chunk, values) if (row := self._record(lookup, i, value)) is not None]
        self.cache.put_many(self.key, rows)
        self._count(values)
        # the chunk's answers are kept first: an endpoint found down fails the job without losing them
        self.check_failures()

    def _stream(self, lookup: _Lookup, misses: list[int]) -> None:
        if not misses:
            return
        assert isinstance(self.scorer, StreamingScorer)
        stream = self.scorer.score_stream(*lookup.texts(misses))
        seen: set[int] = set()
        for position, value in stream:
            seen.add(position)
            row = self._record(lookup, misses[position], value)
            if row is not None:
                self.cache.put_many(self.key, [row])
            self._count([value])
        if len(seen) != len(misses):
            raise ScorerError(f"scorer {self.name} answered {len(seen)} of {len(misses)} pairs")

    def _record(self, lookup: _Lookup, index: int, value: float | None) -> tuple[str, str, float] | None:
        """Pair ``index``'s checked score into ``lookup``; the cache row to write, None for an unscored pair."""
        lookup.known[lookup.pairs[index]] = self._checked(value, lookup.queries[index], lookup.documents[index])
        return None if value is None else (*lookup.pairs[index], float(value))

    def _checked(self, value: float | None, query: str, document: str) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ScorerError(
                f"scorer {self.name} returned a non-finite score ({value}) for the pair (query {query[:80]!r}, "
                f"document {document[:80]!r}); it is not cached. With a half-precision dtype use "
                f"scorers.{self.name}.dtype: float32"
            )
        return None if value is None else float(value)

    def check_failures(self, final: bool = False) -> None:
        """The wrapped remote scorer's failure budget (posir.remote.FailureBudget); local scorers have none."""
        check = getattr(self.scorer, "check_failures", None)
        if check is not None:
            check(final)

    def _count(self, values: Sequence[float | None]) -> None:
        failed = sum(v is None for v in values)
        self.counts.failed += failed
        self.counts.computed += len(values) - failed
