"""The cache store: values round-trip checked, corrupt rows are dropped and counted, the file's kind and format
are checked, and two real processes write and read one file at once.

A small cache kind of its own (text keys -> an integer and a float vector) keeps these tests about the
store; the caches built on it have their own tests. Faults are injected by writing the file with
sqlite3 directly, as a disk or another program would.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from posir.cache_store import (
    META_TABLE,
    CacheDamagedError,
    CacheKind,
    CachePathError,
    CacheStore,
    NotACacheError,
    Table,
    first_value,
)


def vector(values: tuple[Any, ...]) -> tuple[int, np.ndarray]:
    count, blob = values
    array = np.frombuffer(blob, dtype=np.float64)
    if not np.isfinite(array).all():
        raise ValueError("a non-finite value")
    return count, array


KIND = CacheKind(
    name="test",
    title="test cache",
    holds="test values",
    setting="the test's path",
    tables=(
        Table("items", ("key",), ("count INTEGER NOT NULL", "blob BLOB NOT NULL"), vector),
        Table("firsts", ("a", "b"), ("value TEXT NOT NULL",), first_value, first_writer_wins=True, without_rowid=True),
    ),
    legacy_tables=frozenset({"items"}),
)
OTHER = CacheKind(
    name="other",
    title="other cache",
    holds="other values",
    setting="the other path",
    tables=(Table("things", ("key",), ("value TEXT NOT NULL",)),),
)


def item(i: int) -> tuple[int, bytes]:
    return i, np.arange(i, i + 4, dtype=np.float64).tobytes()


def put_items(store: CacheStore, keys: range) -> None:
    store.put_many("items", [((f"k{i}",), item(i)) for i in keys])


def test_values_round_trip_and_are_counted(tmp_path: Path) -> None:
    with CacheStore(tmp_path / "c.sqlite", KIND) as store:
        put_items(store, range(1200))  # more keys than one SELECT reads
        found = store.get_many("items", [(f"k{i}",) for i in [*range(1200), 5000, 3]])
        assert len(found) == 1200 and found[("k7",)][0] == 7
        np.testing.assert_array_equal(found[("k7",)][1], [7.0, 8.0, 9.0, 10.0])
        assert store.counts.as_dict() == {"hits": 1200, "misses": 1, "corrupt": 0}  # k3 asked twice counts once
        assert store.get("items", ("nope",)) is None and store.count("items") == 1200


def test_first_writer_wins_where_the_table_says_so(tmp_path: Path) -> None:
    with CacheStore(tmp_path / "c.sqlite", KIND) as store:
        store.put("firsts", ("a", "b"), ("first",))
        store.put("firsts", ("a", "b"), ("second",))
        put_items(store, range(1))
        store.put("items", ("k0",), item(9))
        assert store.get("firsts", ("a", "b")) == "first" and store.get("items", ("k0",))[0] == 9
        assert store.count("firsts", a="a") == 1 and store.count("firsts", a="x") == 0


def test_a_changed_value_fails_its_checksum_and_is_dropped(tmp_path: Path, caplog) -> None:
    path = tmp_path / "c.sqlite"
    with CacheStore(path, KIND) as store:
        put_items(store, range(3))
    with sqlite3.connect(path) as db:  # another program changes a value but not its checksum
        db.execute("UPDATE items SET count = 99 WHERE key = 'k1'")
    with caplog.at_level(logging.WARNING, logger="posir.cache"), CacheStore(path, KIND) as store:
        found = store.get_many("items", [("k0",), ("k1",), ("k2",)])
        assert sorted(found) == [("k0",), ("k2",)]
        assert store.counts.as_dict() == {"hits": 2, "misses": 1, "corrupt": 1}
        assert store.count("items") == 2  # dropped from the file, so the caller's recomputed value replaces it
    assert f"{path}: 1 corrupt value(s) in items dropped" in caplog.text and "checksum mismatch" in caplog.text


def test_a_value_failing_the_tables_check_is_dropped_even_with_a_good_checksum(tmp_path: Path) -> None:
    with CacheStore(tmp_path / "c.sqlite", KIND) as store:
        store.put("items", ("nan",), (1, np.array([np.nan]).tobytes()))
        assert store.get("items", ("nan",)) is None and store.counts.corrupt == 1 and store.count("items") == 0


def test_a_rewritten_row_is_not_dropped_by_a_reader_that_saw_the_old_one(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with CacheStore(path, KIND) as store, CacheStore(path, KIND) as writer:
        put_items(store, range(1))
        with sqlite3.connect(path) as db:
            db.execute("UPDATE items SET count = 99 WHERE key = 'k0'")
            read = db.execute("SELECT count, blob, checksum FROM items").fetchone()
        put_items(writer, range(1))  # another job writes the value again before the reader drops the bad one
        store._drop(KIND.table("items"), [(("k0",), read, "checksum mismatch")])
        assert store.get("items", ("k0",))[0] == 0


def test_the_file_records_its_kind_and_format(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CacheStore(path, KIND).close()
    with sqlite3.connect(path) as db:
        assert dict(db.execute(f"SELECT name, value FROM {META_TABLE}")) == {"kind": "test", "version": "2"}
    with pytest.raises(NotACacheError, match=r"c\.sqlite: not a usable other cache \(it is a test cache\)"):
        CacheStore(path, OTHER)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE {META_TABLE} SET value = '3' WHERE name = 'version'")
    with pytest.raises(NotACacheError, match=r"format 3, written by a newer posir.*update posir, or delete it"):
        CacheStore(path, KIND)


def test_an_unknown_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(NotACacheError, match=r"holds the tables people, not items.*delete it .*test values"):
        CacheStore(path, KIND)
    with sqlite3.connect(path) as db:
        assert [n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")] == ["people"]


def test_a_path_that_is_a_directory_is_named_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(CachePathError, match=r"is a directory, not a test cache file; set the test's path to a file"):
        CacheStore(tmp_path, KIND)


def test_a_malformed_page_is_a_damaged_file_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with CacheStore(path, KIND) as store:
        store.put_many("items", [((f"k{i}",), (i, np.full(200, float(i)).tobytes())) for i in range(300)])
    data = bytearray(path.read_bytes())
    page = data.index(np.full(200, 250.0).tobytes()) // 4096 * 4096
    data[page] = 0  # not a b-tree page type
    path.write_bytes(bytes(data))
    with (
        CacheStore(path, KIND) as store,
        pytest.raises(
            CacheDamagedError,
            match=r"reading items: the file is "
            r"damaged .*malformed.*delete it",
        ),
    ):
        store.get_many("items", [(f"k{i}",) for i in range(300)])


# --- two real processes --------------------------------------------------------------------------------------


def _writer(path: str, first: int, last: int, seed: int) -> None:
    """Put keys first..last in batches of 50, and after each batch read back a sample of every key so far."""
    rng = np.random.default_rng(seed)
    with CacheStore(Path(path), KIND, busy_timeout_s=60) as store:
        for start in range(first, last, 50):
            put_items(store, range(start, min(start + 50, last)))
            sample = [f"k{i}" for i in rng.integers(0, last, 200)]
            for (key,), (count, array) in store.get_many("items", [(k,) for k in sample]).items():
                if count != int(key[1:]) or array[0] != count:
                    os._exit(3)
        if store.counts.corrupt:
            os._exit(4)


def test_two_processes_write_and_read_one_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    fork = multiprocessing.get_context("fork")
    jobs = [
        fork.Process(target=_writer, args=(str(path), 0, 3000, 1)),
        fork.Process(target=_writer, args=(str(path), 2000, 5000, 2)),
    ]  # a thousand keys written by both
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(120)
    assert [job.exitcode for job in jobs] == [0, 0]
    with CacheStore(path, KIND) as store:
        found = store.get_many("items", [(f"k{i}",) for i in range(5000)])
        assert len(found) == 5000 and all(found[(f"k{i}",)][0] == i for i in range(5000))
        assert store.counts.corrupt == 0


def _killed_after(path: str, puts: int) -> None:
    store = CacheStore(Path(path), KIND)
    for i in range(puts):
        store.put("items", (f"k{i}",), item(i))
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_killed_process_keeps_every_value_it_put(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    job = multiprocessing.get_context("fork").Process(target=_killed_after, args=(str(path), 7))
    job.start()
    job.join(60)
    assert job.exitcode == -signal.SIGKILL
    with CacheStore(path, KIND) as store:
        assert store.count("items") == 7 and len(store.get_many("items", [(f"k{i}",) for i in range(7)])) == 7
