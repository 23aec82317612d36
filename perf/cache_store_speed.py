"""The cache store's candidates side by side on the workflow's access pattern: posir's sqlite layer and diskcache.

Not a test: run it by hand (under ``nice`` on a shared machine) and copy the table into docs/caches.md.

    python perf/cache_store_speed.py [--embeddings 30000] [--stored-pairs 250000] [--lookups 1000000] \
        [--candidates posir diskcache]

diskcache is not a dependency of the workflow; give it a throwaway environment that also sees the
workflow's packages (``python -m venv --system-site-packages /tmp/venv-cache && /tmp/venv-cache/bin/pip
install diskcache``) and run this file with that interpreter and ``PYTHONPATH=src``. Without
diskcache only the sqlite layer is measured.

Each candidate stores the same bytes and makes the same checks on every read (a CRC-32 of key and
value, float32 of the right length and finite for vectors, finite for scores), so the figures compare
storage and locking, not validation. The workloads:

1. embeddings (an encode job): two processes put overlapping 60 % shares of ``--embeddings`` 384-d
   float32 vectors at once, in batches of 4096 (one transaction each); then one process looks all of
   them up, plus 20 % unknown keys, in batches of 500, and checks every vector it gets back;
2. scores (reranking and quality control): ``--stored-pairs`` (query, document) scores put in
   chunks of 256 pairs, then ``--lookups`` pairs (80 % stored) looked up in chunks of 2048;
3. LLM answers (the client's thread pool): 4 threads each get a new key (a miss), put its answer
   (committed at once) and get it again, ``--answers`` times.

ops/s counts keys (vectors, pairs, answers) per wall-clock second.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import os
import random
import sqlite3
import struct
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from posir.embedding_cache import EmbeddingCache
from posir.llm.cache import AnswerCache, CachedAnswer
from posir.scorers.cache import ScoreCache

DIM = 384
PUT_BATCH, GET_BATCH = 4096, 500
SCORE_PUT, SCORE_GET = 256, 2048
THREADS = 4
SCORER = hashlib.sha256(b"scorer").hexdigest()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# --- the candidates: the same three caches on each store ------------------------------------------------------


class PosirStore:
    """The workflow's own facades over posir.cache_store."""

    name = "posir sqlite store"

    @staticmethod
    def embeddings(path: Path) -> Any:
        return EmbeddingCache(path / "embeddings.sqlite")

    @staticmethod
    def scores(path: Path) -> Any:
        return ScoreCache(path / "scores.sqlite")

    @staticmethod
    def answers(path: Path) -> Any:
        return AnswerCache(path / "answers.sqlite")


def _sealed(key: str, payload: bytes) -> bytes:
    return struct.pack("<I", zlib.crc32(key.encode() + payload)) + payload


def _opened(key: str, stored: Any) -> bytes | None:
    """The payload of a sealed value, or None (a miss) when it is absent or its checksum fails."""
    if not isinstance(stored, bytes) or len(stored) < 4:
        return None
    payload = stored[4:]
    return payload if struct.unpack("<I", stored[:4])[0] == zlib.crc32(key.encode() + payload) else None


class DiskcacheEmbeddings:
    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def get_many(self, keys: Iterable[str], *, dim: int | None = DIM) -> dict[str, tuple[np.ndarray, int]]:
        found = {}
        for key in dict.fromkeys(keys):  # diskcache has no batched read: one SELECT per key
            payload = _opened(key, self.cache.get(key))
            if payload is None:
                continue
            vector = np.frombuffer(payload[4:], dtype=np.float32)
            if len(vector) == dim and np.isfinite(vector).all():
                found[key] = (vector, struct.unpack("<i", payload[:4])[0])
        return found

    def put_many(self, keys: Sequence[str], vectors: np.ndarray, tokens: Sequence[int]) -> None:
        with self.cache.transact():
            for key, vector, count in zip(keys, vectors, tokens):
                self.cache.set(key, _sealed(key, struct.pack("<i", int(count)) + vector.astype(np.float32).tobytes()))

    def close(self) -> None:
        self.cache.close()


class DiskcacheScores:
    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def get_many(self, scorer: str, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
        found = {}
        for query, document in dict.fromkeys(pairs):
            key = f"{scorer}:{query}:{document}"
            payload = _opened(key, self.cache.get(key))
            if payload is not None and math.isfinite(score := struct.unpack("<d", payload)[0]):
                found[(query, document)] = score
        return found

    def put_many(self, scorer: str, rows: Sequence[tuple[str, str, float]]) -> None:
        with self.cache.transact():
            for query, document, score in rows:
                key = f"{scorer}:{query}:{document}"
                self.cache.set(key, _sealed(key, struct.pack("<d", score)))

    def close(self) -> None:
        self.cache.close()


class DiskcacheAnswers:
    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def get(self, key: str) -> CachedAnswer | None:
        payload = _opened(key, self.cache.get(key))
        return None if payload is None else CachedAnswer(payload.decode(), "", None, None)

    def put(self, key: str, *, answer: CachedAnswer, **_: Any) -> None:
        self.cache.add(key, _sealed(key, str(answer.value).encode()))  # add: first writer wins

    def close(self) -> None:
        self.cache.close()


class Diskcache:
    """diskcache.Cache (sqlite index, values inline below 32 KiB), never culled, one directory per cache."""

    name = "diskcache"

    @staticmethod
    def _open(path: Path) -> Any:
        import diskcache

        return diskcache.Cache(str(path), size_limit=2**62, eviction_policy="none", timeout=120)

    @classmethod
    def embeddings(cls, path: Path) -> Any:
        return DiskcacheEmbeddings(cls._open(path / "embeddings"))

    @classmethod
    def scores(cls, path: Path) -> Any:
        return DiskcacheScores(cls._open(path / "scores"))

    @classmethod
    def answers(cls, path: Path) -> Any:
        return DiskcacheAnswers(cls._open(path / "answers"))


CANDIDATES: dict[str, Any] = {"posir": PosirStore, "diskcache": Diskcache}


# --- the workloads ---------------------------------------------------------------------------------------------


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def _write_embeddings(candidate: str, path: Path, keys: Sequence[str], vectors: np.ndarray, rows: range) -> None:
    cache = CANDIDATES[candidate].embeddings(path)
    for start in range(rows.start, rows.stop, PUT_BATCH):
        stop = min(start + PUT_BATCH, rows.stop)
        cache.put_many(keys[start:stop], vectors[start:stop], [17] * (stop - start))
    cache.close()


def embeddings(candidate: str, path: Path, n: int) -> dict[str, float]:
    keys = [sha(f"text {i}") for i in range(n)]
    vectors = np.random.default_rng(0).standard_normal((n, DIM), dtype=np.float32)
    shares = (range(int(n * 0.6)), range(int(n * 0.4), n))  # two jobs whose text sets overlap by a fifth
    fork = multiprocessing.get_context("fork")
    writers = [fork.Process(target=_write_embeddings, args=(candidate, path, keys, vectors, share)) for share in shares]
    elapsed, _ = timed(lambda: ([w.start() for w in writers], [w.join() for w in writers]))
    if any(w.exitcode for w in writers):
        raise SystemExit(f"{candidate}: an embedding writer failed")
    written = sum(len(share) for share in shares)
    wanted = keys + [sha(f"unknown {i}") for i in range(n // 5)]
    cache = CANDIDATES[candidate].embeddings(path)
    found: dict[str, Any] = {}
    read, _ = timed(
        lambda: [
            found.update(cache.get_many(wanted[s : s + GET_BATCH], dim=DIM)) for s in range(0, len(wanted), GET_BATCH)
        ]
    )
    cache.close()
    if len(found) != n or any(not np.array_equal(found[k][0], vectors[i]) for i, k in enumerate(keys)):
        raise SystemExit(f"{candidate}: the embeddings read back are not the ones written")
    return {
        "embeddings: put, 2 processes at once": written / elapsed,
        "embeddings: get, batches of 500": len(wanted) / read,
    }


def scores(candidate: str, path: Path, stored: int, lookups: int) -> dict[str, float]:
    queries = [sha(f"q{i}") for i in range(max(stored // 100, 1))]
    universe = [(queries[i % len(queries)], sha(f"d{i}")) for i in range(int(stored * 1.25))]
    value = {pair: (i % 1000) / 1000 for i, pair in enumerate(universe)}
    cache = CANDIDATES[candidate].scores(path)
    rows = [(q, d, value[(q, d)]) for q, d in universe[:stored]]
    put, _ = timed(lambda: [cache.put_many(SCORER, rows[s : s + SCORE_PUT]) for s in range(0, len(rows), SCORE_PUT)])
    asked = random.Random(0).choices(universe, k=lookups)
    found: dict[tuple[str, str], float] = {}
    get, _ = timed(
        lambda: [
            found.update(cache.get_many(SCORER, asked[s : s + SCORE_GET])) for s in range(0, len(asked), SCORE_GET)
        ]
    )
    cache.close()
    written = set(universe[:stored])
    if len(found) != len(set(asked) & written) or any(found[p] != value[p] for p in found):
        raise SystemExit(f"{candidate}: the scores read back are not the ones written")
    return {"scores: put, chunks of 256": stored / put, "scores: get, chunks of 2048": lookups / get}


def answers(candidate: str, path: Path, per_thread: int) -> dict[str, float]:
    cache = CANDIDATES[candidate].answers(path)
    errors: list[BaseException] = []

    def worker(thread: int) -> None:
        try:
            for i in range(per_thread):
                key = sha(f"prompt {thread} {i}")
                if cache.get(key) is not None:
                    raise RuntimeError(f"{key} found before it was put")
                cache.put(key, stage="grade", template="t", model="m", answer=CachedAnswer({"grade": i % 5}, "x", 9, 3))
                if cache.get(key) is None:
                    raise RuntimeError(f"{key} lost after it was put")
        except BaseException as error:  # noqa: BLE001 - reported below, the run fails
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    elapsed, _ = timed(lambda: ([t.start() for t in threads], [t.join() for t in threads]))
    cache.close()
    if errors:
        raise SystemExit(f"{candidate}: an answer thread failed: {errors[0]!r}")
    return {"answers: get/put/get, 4 threads": 3 * THREADS * per_thread / elapsed}


# --- the run ---------------------------------------------------------------------------------------------------


def available() -> list[str]:
    try:
        import diskcache  # noqa: F401
    except ImportError:
        print("diskcache is not installed here: only the sqlite layer is measured", file=sys.stderr)
        return ["posir"]
    return list(CANDIDATES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embeddings", type=int, default=30_000)
    parser.add_argument("--stored-pairs", type=int, default=250_000)
    parser.add_argument("--lookups", type=int, default=1_000_000)
    parser.add_argument("--answers", type=int, default=1_000, help="keys per thread")
    parser.add_argument(
        "--candidates",
        nargs="+",
        choices=sorted(CANDIDATES),
        default=list(CANDIDATES),
        help="measured in this order (swap it to see whether the order matters)",
    )
    args = parser.parse_args()
    names = [n for n in args.candidates if n in available()]
    load = os.getloadavg()
    figures: dict[str, dict[str, float]] = {}
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"cache-perf-{name}-") as tmp:
            path = Path(tmp)
            figures[name] = {
                **embeddings(name, path, args.embeddings),
                **scores(name, path, args.stored_pairs, args.lookups),
                **answers(name, path, args.answers),
            }
        print(f"{name}: done", file=sys.stderr)
    print(
        f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, {versions(names)}, "
        f"load average (1, 5, 15 min) {' '.join(f'{x:.2f}' for x in load)} at the start, "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end, "
        f"{os.cpu_count()} CPUs\n"
    )
    print("| workload, ops/s | " + " | ".join(CANDIDATES[n].name for n in names) + " |")
    print("|---|" + "---:|" * len(names))
    for workload in figures[names[0]]:
        print(f"| {workload} | " + " | ".join(f"{figures[n][workload]:,.0f}" for n in names) + " |")


def versions(names: Sequence[str]) -> str:
    if "diskcache" not in names:
        return "no diskcache"
    import diskcache

    return f"diskcache {diskcache.__version__}"


if __name__ == "__main__":
    main()
