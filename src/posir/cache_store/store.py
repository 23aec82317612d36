"""The cache store: one sqlite cache file of a kind, shared by the threads of a process and by processes.

:class:`CacheStore` is the one place for connection setup (WAL journal, ``synchronous=NORMAL``, a busy timeout),
locking (one connection behind a lock; write transactions begin with ``BEGIN IMMEDIATE``), transactions
(:meth:`CacheStore.put_many` commits a batch at once, :meth:`CacheStore.put` one value), verified reads (a row whose
checksum or value check fails is counted, logged, deleted and treated as a miss), the format check on open
(:mod:`posir.cache_store.file_format`) and the two cache modes (``single``: this file, in place; ``shards``: the
file read-only, writes to shards, :mod:`posir.cache_store.shards`). The package's docstring,
:mod:`posir.cache_store`, has the whole picture.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posir.cache_store.errors import CacheError, CachePathError, CacheReadOnlyError, NotACacheError, sqlite_failure
from posir.cache_store.file_format import Migration, is_current, migrate_legacy, table_names
from posir.cache_store.shards import ShardReader, ShardWriter, cache_mode, read_only_uri, shard_dir
from posir.cache_store.tables import (
    META_TABLE,
    UNUSABLE_ROW,
    CacheKind,
    Decoder,
    Key,
    Table,
    Values,
    create_layout,
    plain_key,
    read_text,
)

logger = logging.getLogger("posir.cache")

_LOOKUP_ROWS = 500  # keys per SELECT; bound parameters stay far below sqlite's limit on every build


@dataclass
class CacheCounts:
    """Keys looked up and found (``hits``) or not (``misses``), and stored values dropped as ``corrupt``.

    A corrupt value is also a miss: the caller recomputes it.
    """

    hits: int = 0
    misses: int = 0
    corrupt: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def add(self, other: CacheCounts) -> None:
        self.hits += other.hits
        self.misses += other.misses
        self.corrupt += other.corrupt


class CacheStore:
    """One sqlite cache file of a :class:`CacheKind`; safe for the threads of a process and for several processes.

    Values go in as tuples of the table's value columns and come out as ``Table.decode`` makes
    them; a stored row whose checksum or value check fails is dropped and reported as a miss.
    ``counts`` (a new tally by default) lets a facade that reopens its file keep one tally. ``mode`` is the
    cache mode (``single`` or ``shards``; by default the one the workflow set for the process,
    :func:`cache_mode`).
    """

    def __init__(
        self,
        path: str | Path,
        kind: CacheKind,
        *,
        busy_timeout_s: float = 120.0,
        counts: CacheCounts | None = None,
        mode: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.kind = kind
        self.busy_timeout_s = busy_timeout_s
        self.counts = CacheCounts() if counts is None else counts
        self.migration: Migration | None = None
        self.mode = cache_mode(mode)
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._shards: ShardReader | None = None
        self._writer: ShardWriter | None = None
        if self.mode == "shards":
            self._open_shared()
            return
        self._check_path()
        with self._sqlite("opening it"):
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
            self._db.text_factory = read_text
        try:
            with self._sqlite("opening it"):
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._prepare()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"CacheStore({str(self.path)!r}, {self.kind.name}, {self.mode})"

    def _open_shared(self) -> None:
        """The shards mode: the main file read-only and immutable (an empty one in memory if there is none yet),
        the shards beside it, and a writer of new shards."""
        if self.path.is_dir():
            self._check_path()  # the directory error
        directory = shard_dir(self.path)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CachePathError(
                f"{directory}: cannot create the {self.kind.title}'s shard directory ({error}); set "
                f"{self.kind.setting} to a file in a writable directory"
            ) from error
        if not os.access(directory, os.W_OK):
            raise CacheReadOnlyError(
                f"{directory}: the {self.kind.title}'s shard directory is read-only; make it writable or set "
                f"{self.kind.setting} to a file in a writable directory"
            )
        with self._sqlite("opening it read-only"):
            if self.path.exists():
                self._db = sqlite3.connect(read_only_uri(self.path), uri=True, check_same_thread=False)
            else:
                self._db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                create_layout(self._db, self.kind)
            self._db.text_factory = read_text
        try:
            with self._sqlite("reading its format"):
                if not is_current(self._conn, self.path, self.kind, table_names(self._conn)):
                    raise NotACacheError(
                        f"{self.path}: a {self.kind.title} of the layout before format {self.kind.version}, which "
                        f"only the single cache mode migrates; run once with cache_mode: single on one host, or "
                        f"{self.kind.fix}"
                    )
        except BaseException:
            self.close()
            raise
        self._shards = ShardReader(directory, self.kind)
        self._writer = ShardWriter(directory, self.kind)
        weakref.finalize(self, self._writer.flush_quietly)

    # --- errors

    def _check_path(self) -> None:
        """Refuse, before sqlite does it with a vaguer message, a path no cache can live at."""
        if self.path.is_dir():
            raise CachePathError(
                f"{self.path}: is a directory, not a {self.kind.title} file; set {self.kind.setting} "
                f"to a file path (e.g. {self.path / (self.kind.name + '-cache.sqlite')})"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CachePathError(
                f"{self.path}: cannot create its directory ({error}); set {self.kind.setting} to a "
                f"file in a writable directory"
            ) from error
        if self.path.exists() and not os.access(self.path, os.W_OK):
            raise CacheReadOnlyError(
                f"{self.path}: the {self.kind.title} file is read-only; make it writable "
                f"(chmod u+w) or set {self.kind.setting} to a writable file"
            )
        if not os.access(self.path.parent, os.W_OK):
            # sqlite writes the -wal and -shm files beside the cache, so even reads need the directory
            raise CacheReadOnlyError(
                f"{self.path}: its directory {self.path.parent} is read-only and sqlite must "
                f"create {self.path.name}-wal beside it; make the directory writable or set "
                f"{self.kind.setting} to a file in a writable directory"
            )

    @contextmanager
    def _sqlite(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            raise sqlite_failure(error, doing, self.path, self.kind, self.busy_timeout_s) from error

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise CacheError(f"{self.path}: the {self.kind.title} is closed; open it again")
        return self._db

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        """A write transaction, committed on success and rolled back on any exception (an interrupt included).

        A failed COMMIT (the lock still held elsewhere past the busy timeout) is rolled back too, so the
        connection is never left inside a transaction.
        """
        with self._lock, self._sqlite(doing):
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise

    # --- the format

    def _prepare(self) -> None:
        """Check the file is a current cache of this kind; create, migrate or refuse it otherwise.

        A current file is recognised by a read alone; creation and migration run in a write
        transaction that re-checks, so two processes opening a new file do it once.
        """
        with self._lock, self._sqlite("reading its format"):
            if is_current(self._conn, self.path, self.kind, table_names(self._conn)):
                return
        with self._transaction("creating or migrating its tables") as conn:
            tables = table_names(conn)
            if is_current(conn, self.path, self.kind, tables):
                return
            if tables and META_TABLE not in tables:
                self.migration = migrate_legacy(conn, self.path, self.kind, tables)
            create_layout(conn, self.kind)

    # --- reads

    def get_many(self, table: str, keys: Iterable[Key], *, decode: Decoder | None = None) -> dict[Key, Any]:
        """Verified values of ``keys`` (tuples of the table's key columns); missing and corrupt keys are absent.

        ``decode`` replaces the table's value check for this call (say, with the expected vector length).
        """
        spec = self.kind.table(table)
        wanted = list(dict.fromkeys(plain_key(key) for key in keys))
        found: dict[Key, Any] = {}
        bad: list[tuple[Key, tuple[Any, ...], str]] = []
        with self._lock:
            with self._sqlite(f"reading {table}"):
                for start in range(0, len(wanted), _LOOKUP_ROWS):
                    chunk = wanted[start : start + _LOOKUP_ROWS]
                    self._verify(spec, chunk, self._select(spec, chunk), decode or spec.decode, found, bad)
            if self._shards is not None and len(found) < len(wanted):
                self._read_shards(spec, [key for key in wanted if key not in found], decode or spec.decode, found)
            self.counts.hits += len(found)
            self.counts.misses += len(wanted) - len(found)
            if bad:
                self._drop(spec, bad)
        return found

    def get(self, table: str, key: Key) -> Any | None:
        """The verified value of one key, or ``None``."""
        return self.get_many(table, [key]).get(plain_key(key))

    def _read_shards(self, table: Table, missing: list[Key], decode: Decoder, found: dict[Key, Any]) -> None:
        """The shards mode: keys the main file lacks, from the shards (oldest first) and then from this
        process's writes not yet in a shard; corrupt rows and damaged shards are counted and left out."""
        assert self._shards is not None and self._writer is not None
        bad: list[tuple[Key, tuple[Any, ...], str]] = []
        for shard in self._shards.shards():
            if not missing:
                break
            try:
                conn = self._shards.connection(shard)
                for start in range(0, len(missing), _LOOKUP_ROWS):
                    chunk = missing[start : start + _LOOKUP_ROWS]
                    self._verify(table, chunk, self._select(table, chunk, conn), decode, found, bad)
            except sqlite3.DatabaseError as error:
                if self._shards.failed(shard, error):
                    self.counts.corrupt += 1
                continue
            missing = [key for key in missing if key not in found]
        pending = self._writer.pending.get(table.name, {})
        width = len(table.keys)
        for key in missing:
            if key in pending:
                found[key] = decode(pending[key][width:-1])
        if bad:
            self.counts.corrupt += len(bad)
            logger.warning(
                "%s: %d corrupt value(s) in %s shards left out, to be recomputed (e.g. %s); the next fold drops them",
                shard_dir(self.path),
                len(bad),
                table.name,
                bad[0][2],
            )

    def _select(
        self, table: Table, chunk: Sequence[Key], conn: sqlite3.Connection | None = None
    ) -> list[tuple[Any, ...]]:
        """Rows of the keys in ``chunk`` as (position in ``chunk``, value columns..., checksum).

        A join on a VALUES list uses the primary key ("(a, b) IN (VALUES ...)" makes sqlite scan the
        table), and the position stands for the key so the key's text is not read back.
        """
        width = len(table.keys)
        placeholders = ", ".join(["(" + ", ".join("?" * (width + 1)) + ")"] * len(chunk))
        on = " AND ".join(f"t.{k} = w.column{i + 2}" for i, k in enumerate(table.keys))
        columns = ", ".join(f"t.{c}" for c in (*table.value_names, "checksum"))
        sql = f"SELECT w.column1, {columns} FROM (VALUES {placeholders}) AS w JOIN {table.name} AS t ON {on}"
        return (conn or self._conn).execute(sql, [part for i, key in enumerate(chunk) for part in (i, *key)]).fetchall()

    @staticmethod
    def _verify(
        table: Table,
        chunk: Sequence[Key],
        rows: Iterable[tuple[Any, ...]],
        decode: Decoder,
        found: dict[Key, Any],
        bad: list[tuple[Key, tuple[Any, ...], str]],
    ) -> None:
        for position, *read in rows:
            key = chunk[position]
            try:
                found[key] = table.checked(key, tuple(read[:-1]), read[-1], decode)
            except UNUSABLE_ROW as error:
                bad.append((key, tuple(read), str(error)))

    def _drop(self, table: Table, bad: Sequence[tuple[Key, tuple[Any, ...], str]]) -> None:
        """Delete corrupt rows, each only while it still holds what was read (another job may have rewritten it)."""
        self.counts.corrupt += len(bad)
        logger.warning(
            "%s: %d corrupt value(s) in %s dropped and to be recomputed (e.g. %s)",
            self.path,
            len(bad),
            table.name,
            bad[0][2],
        )
        if self.mode == "shards":
            return  # the main file and the shards are read-only here: the fold drops them
        where = " AND ".join(f"{c} IS ?" for c in (*table.columns, "checksum"))
        with self._transaction(f"dropping corrupt rows of {table.name}") as conn:
            conn.executemany(f"DELETE FROM {table.name} WHERE {where}", [(*key, *read) for key, read, _ in bad])

    # --- writes

    def put_many(self, table: str, rows: Iterable[tuple[Key, Values]]) -> None:
        """Store ``(key, values)`` rows in one transaction, committed on return."""
        spec = self.kind.table(table)
        prepared = []
        for key, values in rows:
            key = plain_key(key)
            typed = spec.typed(values)
            prepared.append((*key, *typed, spec.checksum(key, typed)))
        if not prepared:
            return
        if self._writer is not None:
            with self._lock:
                self._writer.add(spec, prepared)
                self._flush_if_due()
            return
        sql = spec.insert_sql("INSERT OR IGNORE" if spec.first_writer_wins else "INSERT OR REPLACE")
        with self._transaction(f"writing {table}") as conn:
            conn.executemany(sql, prepared)

    def put(self, table: str, key: Key, values: Values) -> None:
        """Store one value and commit at once."""
        self.put_many(table, [(key, values)])

    def count(self, table: str, **where: str) -> int:
        """Rows of ``table``, those whose key columns equal ``where`` only (in the shards mode: distinct keys of the
        main file, the shards and the writes not yet in a shard)."""
        spec = self.kind.table(table)
        clause = " AND ".join(f"{column} = ?" for column in where)
        if self._shards is None or self._writer is None:
            sql = f"SELECT COUNT(*) FROM {table}" + (f" WHERE {clause}" if clause else "")
            with self._lock, self._sqlite(f"counting {table}"):
                return int(self._conn.execute(sql, list(where.values())).fetchone()[0])
        width = len(spec.keys)
        sql = f"SELECT {', '.join(spec.keys)} FROM {table}" + (f" WHERE {clause}" if clause else "")
        with self._lock, self._sqlite(f"counting {table}"):
            keys = {tuple(row) for row in self._conn.execute(sql, list(where.values()))}
            for shard in self._shards.shards():
                try:
                    keys.update(tuple(row[:width]) for row in self._shards.rows(shard, spec, where))
                except sqlite3.DatabaseError as error:
                    self._shards.failed(shard, error)
            positions = {column: spec.keys.index(column) for column in where}
            keys.update(
                key
                for key in self._writer.pending.get(table, {})
                if all(key[positions[column]] == value for column, value in where.items())
            )
        return len(keys)

    # --- the shards mode's writes

    def _flush_if_due(self) -> None:
        assert self._writer is not None
        if self._writer.due:
            self.flush()

    def flush(self) -> None:
        """The shards mode: write the values put since the last shard to a new shard now (nothing otherwise)."""
        if self._writer is None:
            return
        with self._lock:
            try:
                self._writer.flush()
            except (OSError, sqlite3.Error) as error:
                directory = shard_dir(self.path)
                full = "full" in str(error) or getattr(error, "errno", None) == 28
                raise CacheError(
                    f"{directory}: writing a shard of the {self.kind.title} failed ({error}); "
                    + ("the disk is full: free space or set " if full else "make the directory writable, or set ")
                    + f"{self.kind.setting} to a file on another disk"
                ) from error

    # --- lifetime

    def close(self) -> None:
        with self._lock:
            if self._writer is not None:
                try:
                    self.flush()
                finally:
                    self._writer = None
                    if self._shards is not None:
                        self._shards.close()
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> CacheStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
