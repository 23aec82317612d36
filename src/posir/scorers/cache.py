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
finished and its rerun repeats none of it.  WAL and a busy timeout let parallel
jobs share the file.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posir.scorers.base import PairScorer, ScorerError, StreamingScorer, check_pairs, identity_hash

_LOOKUP_CHUNK = 400  # three bound parameters per pair; far below sqlite's limit on every build
DEFAULT_CHUNK = 256

_TABLES = (
    "CREATE TABLE IF NOT EXISTS scores (scorer TEXT NOT NULL, query TEXT NOT NULL, document TEXT NOT NULL, "
    "score REAL NOT NULL, created REAL NOT NULL, PRIMARY KEY (scorer, query, document)) WITHOUT ROWID",
    # What each identity hash stands for, so a person can tell the rows of two configs apart.
    "CREATE TABLE IF NOT EXISTS scorers (scorer TEXT PRIMARY KEY, name TEXT NOT NULL, identity TEXT NOT NULL)",
    # Small facts learnt from endpoints (e.g. whether one returns logprobs), so a rerun need not ask again.
    "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ScoreCacheError(RuntimeError):
    """The cache file cannot be used; the message names it and how to recover."""


class ScoreCache:
    """sqlite store of scores; safe for one process's threads and for several processes."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 120.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            with self._db:
                for statement in _TABLES:
                    self._db.execute(statement)
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise ScoreCacheError(
                f"{self.path}: not a usable score cache ({error}); delete it (it only holds scores that will be "
                f"recomputed) or point the score cache setting at another file"
            ) from error

    def __repr__(self) -> str:
        return f"ScoreCache({str(self.path)!r})"

    def register(self, scorer: str, name: str, identity: Mapping[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO scorers VALUES (?, ?, ?)",
                             (scorer, name, json.dumps(identity, sort_keys=True, default=str)))

    def get_many(self, scorer: str, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Cached scores of (query hash, document hash) keys; missing keys are absent."""
        wanted = list(dict.fromkeys(keys))
        found: dict[tuple[str, str], float] = {}
        with self._lock:
            for start in range(0, len(wanted), _LOOKUP_CHUNK):
                chunk = wanted[start:start + _LOOKUP_CHUNK]
                values = ", ".join("(?, ?)" for _ in chunk)
                rows = self._db.execute(
                    f"SELECT query, document, score FROM scores WHERE scorer = ? AND (query, document) IN "
                    f"(VALUES {values})", [scorer, *[h for pair in chunk for h in pair]])
                for query, document, score in rows:
                    found[(query, document)] = float(score)
        return found

    def put_many(self, scorer: str, rows: Sequence[tuple[str, str, float]]) -> None:
        """Store (query hash, document hash, score) rows in one transaction (committed on return)."""
        if not rows:
            return
        now = time.time()
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?)",
                                 [(scorer, q, d, float(s), now) for q, d, s in rows])

    def count(self, scorer: str | None = None) -> int:
        with self._lock:
            if scorer is None:
                return int(self._db.execute("SELECT COUNT(*) FROM scores").fetchone()[0])
            return int(self._db.execute("SELECT COUNT(*) FROM scores WHERE scorer = ?", (scorer,)).fetchone()[0])

    def get_note(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM notes WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_note(self, key: str, value: str) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO notes VALUES (?, ?)", (key, value))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
        if isinstance(self.scorer, StreamingScorer):
            self._stream(queries, documents, pairs, misses, known)
        else:
            for start in range(0, len(misses), self.chunk_size):
                self._chunk(queries, documents, pairs, misses[start:start + self.chunk_size], known)
        return [known[p] for p in pairs]

    def _chunk(self, queries: Sequence[str], documents: Sequence[str], pairs: list[tuple[str, str]],
               chunk: list[int], known: dict[tuple[str, str], float | None]) -> None:
        values = self.scorer.score([queries[i] for i in chunk], [documents[i] for i in chunk])
        if len(values) != len(chunk):
            raise ScorerError(f"scorer {self.name} returned {len(values)} scores for {len(chunk)} pairs")
        rows = []
        for i, value in zip(chunk, values):
            known[pairs[i]] = self._checked(value)
            if value is not None:
                rows.append((*pairs[i], float(value)))
        self.cache.put_many(self.key, rows)
        self._count(values)

    def _stream(self, queries: Sequence[str], documents: Sequence[str], pairs: list[tuple[str, str]],
                misses: list[int], known: dict[tuple[str, str], float | None]) -> None:
        if not misses:
            return
        assert isinstance(self.scorer, StreamingScorer)
        stream = self.scorer.score_stream([queries[i] for i in misses], [documents[i] for i in misses])
        seen: set[int] = set()
        for position, value in stream:
            index = misses[position]
            seen.add(position)
            known[pairs[index]] = self._checked(value)
            if value is not None:
                self.cache.put_many(self.key, [(*pairs[index], float(value))])
            self._count([value])
        if len(seen) != len(misses):
            raise ScorerError(f"scorer {self.name} answered {len(seen)} of {len(misses)} pairs")

    def _checked(self, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ScorerError(
                f"scorer {self.name} returned a non-finite score ({value}); with a half-precision dtype use "
                f"scorers.{self.name}.dtype: float32"
            )
        return None if value is None else float(value)

    def _count(self, values: Sequence[float | None]) -> None:
        failed = sum(v is None for v in values)
        self.counts.failed += failed
        self.counts.computed += len(values) - failed
