"""The shards cache mode's files: where shards live, how one is written whole and how the shards are read.

In the ``shards`` mode (jobs on several hosts of a shared file system, where sqlite's WAL does not work) a job
reads the main cache file read-only and immutable and writes its values as **shards**: whole sqlite files renamed
into ``<cache>.shards/``. :class:`posir.cache_store.CacheStore` reads and writes through :class:`ShardReader` and
:class:`ShardWriter`; :mod:`posir.cache_shards` folds the shards into the main file (docs/caches.md).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
import urllib.parse
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from posir.atomic_files import HOST_VARIABLE as HOST_VARIABLE  # where the host is named: partials and shards alike
from posir.atomic_files import atomic_file, host_name
from posir.cache_store.tables import CacheKind, Key, Table, create_layout, read_meta, read_text

logger = logging.getLogger("posir.cache")

CACHE_MODES = ("single", "shards")
MODE_VARIABLE = "POSIR_CACHE_MODE"
FLUSH_S = 10.0  # a buffered write reaches a shard at the first put this long after the last shard
FLUSH_ROWS = 20_000  # ... or once this many rows wait
SHARD_SUFFIX = ".shard"
TEMPORARY_PREFIX = ".tmp-"  # unfinished shards before posir.atomic_files named them (the fold still sweeps these)
_OPEN_SHARDS = 256  # connections a reader keeps open; beyond that it reopens shards as needed


def cache_mode(mode: str | None = None) -> str:
    """``mode``, or the mode the workflow set for this process (:data:`MODE_VARIABLE`; ``single`` when unset)."""
    chosen = mode if mode is not None else (os.environ.get(MODE_VARIABLE) or "single")
    if chosen not in CACHE_MODES:
        raise ValueError(
            f"cache mode {chosen!r} (cache_mode in config.yaml, or {MODE_VARIABLE}) is not one of "
            f"{', '.join(CACHE_MODES)}; use single on one host and shards where jobs run on several hosts"
        )
    return chosen


def shard_dir(path: Path) -> Path:
    """Where the shards of the cache file ``path`` live: ``<path>.shards`` beside it."""
    return path.with_name(path.name + ".shards")


def read_only_uri(path: Path) -> str:
    """An sqlite URI that opens ``path`` for reading without any lock, ``-shm`` or ``-wal`` (``immutable``)."""
    return f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro&immutable=1"


def complete_shards(directory: Path) -> list[Path]:
    """The shards renamed into place, oldest first (their names start with the time they were written)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.endswith(SHARD_SUFFIX) and not p.name.startswith("."))


def write_shard(directory: Path, kind: CacheKind, rows: Mapping[str, list[tuple[Any, ...]]]) -> Path:
    """A new shard holding ``rows`` (table -> rows of key, value and checksum columns), written whole and then
    renamed into ``directory`` (:func:`posir.atomic_files.atomic_file`); its name says when and where (host,
    process) it was written.

    Raises ``OSError`` or ``sqlite3.Error`` (a full disk: ``database or disk is full``) with nothing left behind.
    """
    directory.mkdir(parents=True, exist_ok=True)
    host, pid = host_name(), os.getpid()
    final = directory / f"{time.time_ns():020d}-{host}-{pid}-{uuid.uuid4().hex[:8]}{SHARD_SUFFIX}"
    with atomic_file(final, sync=True) as temporary:
        db = sqlite3.connect(temporary, isolation_level=None)
        try:
            # written once by one process and never changed: no journal, and the sync happens below
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("BEGIN")
            create_layout(db, kind)
            for table in kind.tables:
                if rows.get(table.name):
                    db.executemany(table.insert_sql("INSERT OR IGNORE"), rows[table.name])
            db.execute("COMMIT")
        finally:
            db.close()
    return final


class ShardReader:
    """The complete shards of one cache, opened read-only and immutable; a shard that cannot be read is
    dropped from reads and remembered (``damaged``)."""

    def __init__(self, directory: Path, kind: CacheKind) -> None:
        self.directory = directory
        self.kind = kind
        self.damaged: set[Path] = set()
        self._open: dict[Path, sqlite3.Connection] = {}

    def shards(self) -> list[Path]:
        return [p for p in complete_shards(self.directory) if p not in self.damaged]

    def connection(self, shard: Path) -> sqlite3.Connection:
        """The open connection to ``shard``; ``sqlite3.DatabaseError`` when it is no shard of this cache."""
        if shard not in self._open:
            if len(self._open) >= _OPEN_SHARDS:
                self.close()
            db = sqlite3.connect(read_only_uri(shard), uri=True, check_same_thread=False)
            db.text_factory = read_text
            try:
                meta = read_meta(db)
                if meta.get("kind") != self.kind.name or meta.get("version") != str(self.kind.version):
                    raise sqlite3.DatabaseError(f"a shard of {meta.get('kind')} format {meta.get('version')}")
            except BaseException:
                db.close()
                raise
            self._open[shard] = db
        return self._open[shard]

    def drop(self, shard: Path, error: BaseException) -> None:
        """Leave ``shard`` out of every later read of this reader (the next fold deletes it)."""
        self.damaged.add(shard)
        db = self._open.pop(shard, None)
        if db is not None:
            db.close()
        logger.warning(
            "%s: damaged cache shard left out (%s); its values will be computed again and the next fold deletes it",
            shard,
            error,
        )

    def failed(self, shard: Path, error: BaseException) -> bool:
        """A read of ``shard`` failed: drop it, unless it is gone because a fold of another run folded it meanwhile
        (its values are in the main file's next version). Whether it was dropped."""
        if not shard.exists():
            return False
        self.drop(shard, error)
        return True

    def rows(self, shard: Path, table: Table, where: Mapping[str, str] | None = None) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table`` in ``shard`` (key, value and checksum columns), those matching ``where`` only."""
        where = where or {}
        clause = " AND ".join(f"{column} = ?" for column in where)
        sql = f"SELECT {', '.join((*table.columns, 'checksum'))} FROM {table.name}"
        yield from self.connection(shard).execute(sql + (f" WHERE {clause}" if clause else ""), list(where.values()))

    def close(self) -> None:
        for db in self._open.values():
            db.close()
        self._open.clear()


class ShardWriter:
    """The shards mode's writes of one store: rows buffered by table and key until :meth:`flush` writes them to a
    new shard (the first write of a key wins while it waits; shards keep their own order)."""

    def __init__(self, directory: Path, kind: CacheKind) -> None:
        self.directory = directory
        self.kind = kind
        self.pending: dict[str, dict[Key, tuple[Any, ...]]] = {}
        self.rows = 0
        self.last_flush = time.monotonic()

    def add(self, table: Table, prepared: Sequence[tuple[Any, ...]]) -> None:
        rows = self.pending.setdefault(table.name, {})
        width = len(table.keys)
        for row in prepared:
            key = tuple(row[:width])
            if table.first_writer_wins and key in rows:
                continue
            if key not in rows:
                self.rows += 1
            rows[key] = row

    @property
    def due(self) -> bool:
        """Whether the rows waiting should go to a shard now: :data:`FLUSH_ROWS` of them, or :data:`FLUSH_S` since
        the last shard."""
        return self.rows >= FLUSH_ROWS or time.monotonic() - self.last_flush >= FLUSH_S

    def flush(self) -> None:
        if self.rows:
            write_shard(self.directory, self.kind, {name: list(rows.values()) for name, rows in self.pending.items()})
        self.pending.clear()
        self.rows = 0
        self.last_flush = time.monotonic()

    def flush_quietly(self) -> None:
        """At interpreter exit, for a store nobody closed: write what waits, or log why it could not."""
        try:
            self.flush()
        except Exception as error:  # noqa: BLE001 - at exit there is nobody left to raise to
            logger.warning("%s: %d cache value(s) not written at exit (%s)", self.directory, self.rows, error)
