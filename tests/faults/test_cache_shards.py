"""Caches shared by jobs on several hosts (the ``shards`` cache mode, docs/caches.md): no process writes a file that
another host reads, a reader sees the union, a damaged or unfinished shard is dropped, counted and recomputed, and the
fold is idempotent and loses nothing.

Before: every job opened the one cache file in WAL mode and wrote it in place, which sqlite rules out across hosts
("All processes using a database must be on the same host computer; WAL does not work over a network filesystem").
``test_writers_on_two_hosts_each_write_only_their_own_shards`` failed there: both writer processes wrote the main
file (its bytes changed and a ``-wal`` beside it was shared by both).

Two hosts are simulated by two processes with distinct ``POSIR_CACHE_HOST``; the values are those of the real
caches' formats (float32 vectors with token counts, scores) through the real facades.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from posir.cache_shards import fold, fold_all
from posir.cache_store import HOST_VARIABLE, MODE_VARIABLE, TEMPORARY_PREFIX, CacheStore, complete_shards, shard_dir
from posir.embedding_cache import EMBEDDING_CACHE, EmbeddingCache
from posir.scorers.cache import ScoreCache

DIM = 8


def vectors(keys: list[str]) -> np.ndarray:
    """A deterministic float32 vector per key (the same key always gets the same vector, as an encoder gives)."""
    return np.stack([np.random.default_rng(zlib.crc32(k.encode())).standard_normal(DIM) for k in keys]).astype(
        np.float32
    )


def keys_of(start: int, stop: int) -> list[str]:
    return [f"text-{i:05d}" for i in range(start, stop)]


def write_as_host(path: str, host: str, start: int, stop: int, barrier: multiprocessing.synchronize.Barrier) -> None:
    os.environ[MODE_VARIABLE], os.environ[HOST_VARIABLE] = "shards", host
    cache = EmbeddingCache(Path(path))
    barrier.wait()  # both hosts write at once
    for first in range(start, stop, 100):  # several puts, each a shard once flushed
        keys = keys_of(first, min(first + 100, stop))
        cache.put_many(keys, vectors(keys), [7] * len(keys))
        cache._store.flush()
    cache.close()


@pytest.fixture
def single_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MODE_VARIABLE, "single")


def main_file_with(path: Path, keys: list[str]) -> bytes:
    with EmbeddingCache(path) as cache:
        cache.put_many(keys, vectors(keys), [5] * len(keys))
    assert not Path(f"{path}-wal").exists()
    return path.read_bytes()


def test_writers_on_two_hosts_each_write_only_their_own_shards(tmp_path: Path, single_mode: None) -> None:
    path = tmp_path / "embedding-cache.sqlite"
    before = main_file_with(path, keys_of(0, 50))
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    writers = [
        context.Process(target=write_as_host, args=(str(path), host, start, stop, barrier))
        for host, start, stop in (("node-a", 25, 400), ("node-b", 300, 700))
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
        assert writer.exitcode == 0
    assert path.read_bytes() == before, "a shards-mode job wrote the main file"
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    shards = complete_shards(shard_dir(path))
    by_host = {host: [s for s in shards if f"-{host}-" in s.name] for host in ("node-a", "node-b")}
    assert len(by_host["node-a"]) == 4 and len(by_host["node-b"]) == 4 and len(shards) == 8
    for host, (start, stop) in (("node-a", (25, 400)), ("node-b", (300, 700))):
        written = set()
        for shard in by_host[host]:
            with sqlite3.connect(shard) as db:
                written |= {key for (key,) in db.execute("SELECT key FROM embeddings")}
        assert written == set(keys_of(start, stop))
    # a reader on a third host sees the main file's values and both hosts' shards
    os.environ[HOST_VARIABLE] = "node-c"
    try:
        with CacheStore(path, EMBEDDING_CACHE, mode="shards") as store:
            keys = keys_of(0, 700)
            found = store.get_many("embeddings", [(k,) for k in keys])
            assert len(found) == 700 and store.counts.corrupt == 0
            expected = vectors(keys)
            for i, key in enumerate(keys):
                vector, tokens = found[(key,)]
                assert np.array_equal(vector, expected[i]) and tokens == (5 if i < 50 else 7)
            assert store.count("embeddings") == 700
    finally:
        del os.environ[HOST_VARIABLE]


def test_a_value_put_is_read_back_before_and_after_its_shard_is_written(tmp_path: Path) -> None:
    path = tmp_path / "score-cache.sqlite"
    os.environ[MODE_VARIABLE] = "shards"
    try:
        cache = ScoreCache(path)
        assert cache._store.mode == "shards"
        cache.put_many("scorer-1", [("q", "d", 0.25)])
        assert cache.get_many("scorer-1", [("q", "d")]) == {("q", "d"): 0.25}
        assert complete_shards(shard_dir(path)) == []  # buffered: the first put came before FLUSH_S passed
        cache.close()
        assert len(complete_shards(shard_dir(path))) == 1
        with ScoreCache(path) as again:
            assert again.get_many("scorer-1", [("q", "d")]) == {("q", "d"): 0.25}
            assert again.count("scorer-1") == 1
    finally:
        del os.environ[MODE_VARIABLE]


def damage(shard: Path) -> None:
    data = bytearray(shard.read_bytes())
    data[: len(data) // 2] = b"\0" * (len(data) // 2)
    shard.write_bytes(bytes(data))


def flip_a_vector_byte(shard: Path) -> None:
    with sqlite3.connect(shard) as db:
        key, blob = db.execute("SELECT key, vector FROM embeddings ORDER BY key LIMIT 1").fetchone()
        changed = bytearray(blob)
        changed[0] ^= 0xFF
        db.execute("UPDATE embeddings SET vector = ? WHERE key = ?", (bytes(changed), key))


def shards_of_three_writes(path: Path) -> list[Path]:
    with CacheStore(path, EMBEDDING_CACHE, mode="shards") as store:
        for start in (0, 10, 20):
            keys = keys_of(start, start + 10)
            store.put_many("embeddings", [((k,), (3, v.tobytes())) for k, v in zip(keys, vectors(keys))])
            store.flush()
    return complete_shards(shard_dir(path))


def test_a_damaged_or_unfinished_shard_is_dropped_counted_and_recomputed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "embedding-cache.sqlite"
    first, second, _ = shards_of_three_writes(path)
    damage(first)  # a torn file (a disk or a copy gone wrong)
    flip_a_vector_byte(second)  # one bad value in a readable shard
    unfinished = shard_dir(path) / f"{TEMPORARY_PREFIX}node-x-999999-0123abcd.sqlite"
    unfinished.write_bytes(b"SQLite format 3\0half")  # a job killed while writing it
    keys = keys_of(0, 30)
    with CacheStore(path, EMBEDDING_CACHE, mode="shards") as store:
        found = store.get_many("embeddings", [(k,) for k in keys])
        assert set(found) == {(k,) for k in keys_of(11, 30)}  # the damaged shard and the bad value left out
        assert store.counts.corrupt == 2 and store.counts.misses == 11
        missing = [k for k in keys if (k,) not in found]
        store.put_many("embeddings", [((k,), (3, v.tobytes())) for k, v in zip(missing, vectors(missing))])
        assert len(store.get_many("embeddings", [(k,) for k in keys])) == 30  # recomputed values read back
    assert "damaged cache shard left out" in caplog.text and str(first) in caplog.text
    report = fold(path, EMBEDDING_CACHE, mode="shards")
    assert report.damaged_shards == 1 and report.corrupt_rows == 1 and report.shards == 3
    assert complete_shards(shard_dir(path)) == [] and not first.exists()
    assert unfinished.exists()  # another host's unfinished shard younger than an hour is left alone
    with CacheStore(path, EMBEDDING_CACHE, mode="single") as store:
        found = store.get_many("embeddings", [(k,) for k in keys])
        expected = vectors(keys)
        assert all(np.array_equal(found[(k,)][0], expected[i]) for i, k in enumerate(keys))
        assert store.counts.corrupt == 0


def test_the_fold_is_idempotent_and_loses_nothing(tmp_path: Path, single_mode: None) -> None:
    path = tmp_path / "embedding-cache.sqlite"
    main_file_with(path, keys_of(0, 15))  # overlaps the first shard: the main file's value stays
    shards_of_three_writes(path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    unfinished = shard_dir(path) / f"{TEMPORARY_PREFIX}{os.uname().nodename}-{int(dead.stdout)}-00ff.sqlite"
    unfinished.write_bytes(b"half")  # left on this host by a process that has ended
    killed_fold = path.with_name(f".{path.name}.fold-node-x-4242")
    killed_fold.write_bytes(b"a copy a fold killed midway had begun")
    report = fold_all({"embedding": path}, "shards")[0]
    assert report.shards == 3 and report.added == {"embeddings": 15} and report.present == 15
    assert report.stale_temporaries == 2 and not unfinished.exists() and not killed_fold.exists()
    folded = path.read_bytes()
    assert not list(path.parent.glob(f".{path.name}.fold-*"))  # the copy was renamed over the file
    assert fold(path, EMBEDDING_CACHE, mode="shards").shards == 0 and path.read_bytes() == folded
    shards_of_three_writes(path)  # the same values again, folded in place this time: nothing to add
    again = fold(path, EMBEDDING_CACHE, mode="single")
    assert again.shards == 3 and again.added == {"embeddings": 0} and again.present == 30
    with CacheStore(path, EMBEDDING_CACHE) as store:
        keys = keys_of(0, 30)
        found = store.get_many("embeddings", [(k,) for k in keys])
        assert len(found) == 30 and store.counts.corrupt == 0
        assert [found[(k,)][1] for k in keys] == [5] * 15 + [3] * 15


def test_the_mode_is_checked_and_a_legacy_file_needs_the_single_mode(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cache_mode in config.yaml.*single.*shards"):
        CacheStore(tmp_path / "c.sqlite", EMBEDDING_CACHE, mode="nfs")
    legacy = tmp_path / "legacy.sqlite"
    with sqlite3.connect(legacy) as db:
        db.execute("CREATE TABLE embeddings (key TEXT PRIMARY KEY, input_tokens INTEGER, vector BLOB)")
    with pytest.raises(Exception, match="only the single cache mode migrates"):
        CacheStore(legacy, EMBEDDING_CACHE, mode="shards")
