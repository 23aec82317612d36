"""One store for every on-disk cache of the workflow: sqlite files whose values are checksummed and checked.

The embedding, score, LLM answer, translation and saliency caches (:mod:`posir.embedding_cache`,
:mod:`posir.scorers.cache`, :mod:`posir.llm.cache`, :mod:`posir.translate.cache`,
:mod:`posir.analyses.saliency`) are thin typed facades over :class:`CacheStore`, which is the one
place for:

* connection setup: WAL journal (readers never wait for a writer), ``synchronous=NORMAL`` (a power
  loss may lose the last commits, never corrupt the file) and a busy timeout, so parallel jobs
  share a file;
* locking: one connection per store behind a lock for the threads of a process; write
  transactions start with ``BEGIN IMMEDIATE`` so two processes writing at once queue on the
  busy timeout instead of failing on a lock upgrade;
* transactions: :meth:`CacheStore.put_many` commits a batch in one transaction,
  :meth:`CacheStore.put` one value at once (a streamed remote answer is kept the moment it
  arrives, so a killed job keeps what it finished);
* integrity: every row carries a CRC-32 of its key and value columns; every read verifies it and
  the table's value check (``Table.decode``). A row that fails either is counted
  (:attr:`CacheStore.counts`), logged with the file name, deleted from the file and treated as a
  miss, so it is recomputed and never used;
* the format: a meta table names the cache's kind and format version; files of the unversioned
  layout the caches wrote before are migrated on open, each value checked on the way;
* errors: every sqlite failure becomes a :class:`CacheError` whose message names the file, what is
  wrong and the fix.

sqlite rather than a key-value library: ``perf/cache_store_speed.py`` measured this layer against
``diskcache`` on the workflow's access pattern; ``docs/caches.md`` has the numbers and the reasons.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

logger = logging.getLogger("posir.cache")

META_TABLE = "posir_cache"
_LOOKUP_ROWS = 500  # keys per SELECT; bound parameters stay far below sqlite's limit on every build
_MIGRATE_ROWS = 2048  # legacy rows read, checked and rewritten at a time while migrating


# --- errors ----------------------------------------------------------------------------------------


class CacheError(RuntimeError):
    """A cache file cannot be used; the message names the file, what is wrong and the fix."""


class CachePathError(CacheError):
    """The cache path is a directory, or its directory cannot be created."""


class CacheReadOnlyError(CacheError):
    """The cache file, or the directory it lies in, cannot be written."""


class NotACacheError(CacheError):
    """The file is not an sqlite database, or not a cache of the expected kind, or of a newer format."""


class CacheDamagedError(CacheError):
    """sqlite found a malformed page: the file was damaged on disk or by a copy."""


class CacheBusyError(CacheError):
    """Another process held the file's write lock past the busy timeout."""


# --- what a cache holds ----------------------------------------------------------------------------


Key = tuple[Any, ...]
Values = tuple[Any, ...]
Decoder = Callable[[Values], Any]


def _text(value: Any) -> str:
    """A TEXT value as valid UTF-8 text; UnicodeError (a ValueError) for bytes or surrogates that are not."""
    text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
    text.encode("utf-8")
    return text


def _read_text(raw: bytes) -> str:
    # Undecodable TEXT (a damaged row) reads as surrogates, which fail the row's checksum or its check,
    # instead of sqlite3 aborting the whole read with "Could not decode to UTF-8".
    return raw.decode("utf-8", "surrogateescape")


_COERCE: dict[str, Callable[[Any], Any]] = {"INTEGER": int, "REAL": float, "TEXT": _text, "BLOB": bytes}


def _as_is(values: Values) -> Values:
    return values


def _text_key(key: Iterable[Any]) -> Key:
    # keys are TEXT columns, checksummed as plain str: a str subclass (numpy's) would repr differently
    return tuple(map(str, key))


def first_value(values: Values) -> Any:
    """The decoder of a table with one value column that needs no check beyond its checksum."""
    return values[0]


@dataclass(frozen=True)
class Table:
    """One table of a cache: key columns (TEXT) -> value columns, and how a stored value is read back.

    ``values`` are column definitions (``"score REAL NOT NULL"``); their declared type fixes the
    Python type a value is stored as, so the checksum of what is written equals the checksum of what
    is read. ``decode`` turns the value columns into what callers get and raises ``ValueError`` (or
    ``TypeError``) for a value that must not be used (a NaN score, a vector of the wrong length):
    such a row counts as corrupt. ``first_writer_wins`` keeps the stored row when a key is written
    again (answers, translations); otherwise the later write replaces it. ``without_rowid`` suits
    tables of small rows (scores); large values (vectors) are better off in a rowid table.
    """

    name: str
    keys: tuple[str, ...]
    values: tuple[str, ...]
    decode: Decoder = _as_is
    first_writer_wins: bool = False
    without_rowid: bool = False

    @cached_property
    def value_names(self) -> tuple[str, ...]:
        return tuple(column.split()[0] for column in self.values)

    @cached_property
    def columns(self) -> tuple[str, ...]:
        return (*self.keys, *self.value_names)

    def create_sql(self) -> str:
        keys = ", ".join(f"{k} TEXT NOT NULL" for k in self.keys)
        return (
            f"CREATE TABLE IF NOT EXISTS {self.name} ({keys}, {', '.join(self.values)}, "
            f"checksum INTEGER NOT NULL, PRIMARY KEY ({', '.join(self.keys)}))"
            + (" WITHOUT ROWID" if self.without_rowid else "")
        )

    @cached_property
    def coercers(self) -> tuple[Callable[[Any], Any], ...]:
        """What each value column's value is turned into before it is stored (its declared type)."""
        return tuple(_COERCE[column.split()[1].upper()] for column in self.values)

    @cached_property
    def blobs(self) -> tuple[int, ...]:
        """Positions of the BLOB columns in a row of key and value columns."""
        return tuple(len(self.keys) + i for i, column in enumerate(self.values) if column.split()[1].upper() == "BLOB")

    def checksum(self, key: Key, values: Values) -> int:
        return row_checksum((*key, *values), self.blobs)


@dataclass(frozen=True)
class CacheKind:
    """A kind of cache file: its tables, its format version and the words its error messages use.

    ``title`` ("embedding cache") and ``fix`` (what to do with a file that cannot be used: delete
    it, or point ``setting`` at another file) go into every error message; by default they follow
    ``name`` ("<name> cache", "<name>_cache in config.yaml"). ``legacy_tables`` are the tables an
    unversioned file of this kind, written before this store, may hold: such a file is migrated on open.
    """

    name: str
    holds: str
    tables: tuple[Table, ...]
    title: str = ""
    setting: str = ""
    version: int = 2
    legacy_tables: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "title", self.title or f"{self.name} cache")
        object.__setattr__(self, "setting", self.setting or f"{self.name}_cache in config.yaml")

    @property
    def fix(self) -> str:
        return f"delete it (it only holds {self.holds} that will be recomputed) or set {self.setting} to another file"

    def table(self, name: str) -> Table:
        for table in self.tables:
            if table.name == name:
                return table
        raise KeyError(f"the {self.title} has no table {name!r}")


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


@dataclass
class Migration:
    """What opening an unversioned file did: rows kept and dropped per table, with a reason per drop kind."""

    kept: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)


# --- checksums -------------------------------------------------------------------------------------


def row_checksum(row: Sequence[Any], blobs: Sequence[int] = ()) -> int:
    """CRC-32 of a row's key and value columns (``blobs``: the positions of its BLOB columns), stored beside them.

    The ``repr`` of the other columns tells text, integers, floats (exactly) and NULL apart, so a value
    whose stored type changed does not match either; BLOBs are fed to the CRC as they are. CRC-32 finds
    every burst error up to 32 bits and all but one in 2**32 others: bit rot, a torn page, a hand edit.
    It is not meant to stop a deliberate forgery, which nothing here needs.
    """
    if not blobs:
        return zlib.crc32(repr(tuple(row)).encode("utf-8"))
    crc = zlib.crc32(repr(tuple(v for i, v in enumerate(row) if i not in blobs)).encode("utf-8"))
    for i in blobs:
        crc = zlib.crc32(row[i], crc)
    return crc


# --- the store -------------------------------------------------------------------------------------


class CacheStore:
    """One sqlite cache file of a :class:`CacheKind`; safe for the threads of a process and for several processes.

    Values go in as tuples of the table's value columns and come out as ``Table.decode`` makes
    them; a stored row whose checksum or value check fails is dropped and reported as a miss.
    ``counts`` (a new tally by default) lets a facade that reopens its file keep one tally.
    """

    def __init__(
        self, path: str | Path, kind: CacheKind, *, busy_timeout_s: float = 120.0, counts: CacheCounts | None = None
    ) -> None:
        self.path = Path(path)
        self.kind = kind
        self.busy_timeout_s = busy_timeout_s
        self.counts = CacheCounts() if counts is None else counts
        self.migration: Migration | None = None
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._check_path()
        with self._sqlite("opening it"):
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
            self._db.text_factory = _read_text
        try:
            with self._sqlite("opening it"):
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._prepare()
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"CacheStore({str(self.path)!r}, {self.kind.name})"

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

    def _explain(self, error: sqlite3.Error, doing: str) -> CacheError:
        """The :class:`CacheError` for an sqlite failure: what happened to which file, and the fix."""
        code = getattr(error, "sqlite_errorname", "") or ""
        text = str(error)
        where = f"{self.path}: {doing}"
        if code == "SQLITE_NOTADB" or "not a database" in text:
            return NotACacheError(f"{self.path}: not a usable {self.kind.title} ({text}); {self.kind.fix}")
        if code.startswith("SQLITE_CORRUPT") or "malformed" in text:
            return CacheDamagedError(f"{where}: the file is damaged ({text}); {self.kind.fix}")
        if code.startswith("SQLITE_READONLY") or "readonly" in text:
            return CacheReadOnlyError(
                f"{where}: cannot write ({text}); make the file and its directory writable or "
                f"set {self.kind.setting} to a writable file"
            )
        if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
            return CacheBusyError(
                f"{where}: another process kept the file locked for over {self.busy_timeout_s:g} s "
                f"({text}); rerun when it has finished, or give each job its own "
                f"{self.kind.setting}"
            )
        if code == "SQLITE_FULL" or "disk is full" in text:
            return CacheError(
                f"{where}: the disk is full ({text}); free space or set {self.kind.setting} to a file on another disk"
            )
        return CacheError(f"{where} failed ({text}); {self.kind.fix}")

    @contextmanager
    def _sqlite(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            raise self._explain(error, doing) from error

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

    def _tables(self) -> set[str]:
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {name for (name,) in rows if not name.startswith("sqlite_")}

    def _meta(self) -> dict[str, str]:
        return dict(self._conn.execute(f"SELECT name, value FROM {META_TABLE}").fetchall())

    def _prepare(self) -> None:
        """Check the file is a current cache of this kind; create, migrate or refuse it otherwise.

        A current file is recognised by a read alone; creation and migration run in a write
        transaction that re-checks, so two processes opening a new file do it once.
        """
        with self._lock, self._sqlite("reading its format"):
            if self._is_current(self._tables()):
                return
        with self._transaction("creating or migrating its tables") as conn:
            tables = self._tables()
            if self._is_current(tables):
                return
            if tables and META_TABLE not in tables:
                self._migrate_legacy(conn, tables)
            for table in self.kind.tables:
                conn.execute(table.create_sql())
            conn.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.executemany(
                f"INSERT OR REPLACE INTO {META_TABLE} VALUES (?, ?)",
                [("kind", self.kind.name), ("version", str(self.kind.version))],
            )

    def _is_current(self, tables: set[str]) -> bool:
        if META_TABLE not in tables:
            return False
        meta = self._meta()
        kind, written = meta.get("kind"), meta.get("version", "")
        version = int(written) if written.isdigit() else 0
        if kind != self.kind.name:
            raise NotACacheError(
                f"{self.path}: not a usable {self.kind.title} (it is a {kind} cache); set "
                f"{self.kind.setting} to another file"
            )
        if version > self.kind.version:
            raise NotACacheError(
                f"{self.path}: not a usable {self.kind.title} (format {version}, written by a newer "
                f"posir than this one, which reads format {self.kind.version}); update posir, or "
                f"{self.kind.fix}"
            )
        if version < self.kind.version:
            raise NotACacheError(
                f"{self.path}: not a usable {self.kind.title} (format {version}, which this posir "
                f"cannot migrate to format {self.kind.version}); {self.kind.fix}"
            )
        return True

    def _migrate_legacy(self, conn: sqlite3.Connection, tables: set[str]) -> None:
        """Rewrite an unversioned file's tables with checksums, dropping (and counting) rows that fail their check."""
        unknown = tables - self.kind.legacy_tables
        if unknown or not tables:
            raise NotACacheError(
                f"{self.path}: not a usable {self.kind.title} (it holds the tables "
                f"{', '.join(sorted(tables))}, not {', '.join(sorted(self.kind.legacy_tables))}); "
                f"{self.kind.fix}"
            )
        migration = Migration()
        for name in sorted(tables):
            table = self.kind.table(name)
            found = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
            if not set(table.columns) <= found:
                raise NotACacheError(
                    f"{self.path}: not a usable {self.kind.title} (table {name} has the columns "
                    f"{', '.join(sorted(found))}, not {', '.join(table.columns)}); {self.kind.fix}"
                )
            conn.execute(f"ALTER TABLE {name} RENAME TO legacy_{name}")
            conn.execute(table.create_sql())
            self._copy_checked(conn, table, migration)
            conn.execute(f"DROP TABLE legacy_{name}")
        self.migration = migration
        logger.warning(
            "%s: migrated the %s to format %d: kept %s, dropped %s%s",
            self.path,
            self.kind.title,
            self.kind.version,
            migration.kept,
            migration.dropped,
            f" ({'; '.join(migration.reasons.values())})" if migration.reasons else "",
        )

    def _copy_checked(self, conn: sqlite3.Connection, table: Table, migration: Migration) -> None:
        width = len(table.keys)
        coercers = table.coercers
        rows = conn.execute(f"SELECT {', '.join(table.columns)} FROM legacy_{table.name}")
        insert = f"INSERT OR REPLACE INTO {table.name} VALUES ({', '.join('?' * (len(table.columns) + 1))})"
        kept = dropped = 0
        while batch := rows.fetchmany(_MIGRATE_ROWS):
            good = []
            for row in batch:
                key = tuple(row[:width])
                try:
                    values = tuple(None if v is None else c(v) for c, v in zip(coercers, row[width:]))
                    table.decode(values)
                except (ValueError, TypeError, OverflowError) as error:
                    dropped += 1
                    migration.reasons.setdefault(table.name, f"{table.name}: e.g. {error}")
                    continue
                good.append((*key, *values, table.checksum(key, values)))
            conn.executemany(insert, good)
            kept += len(good)
        migration.kept[table.name] = kept
        migration.dropped[table.name] = dropped

    # --- reads

    def get_many(self, table: str, keys: Iterable[Key], *, decode: Decoder | None = None) -> dict[Key, Any]:
        """Verified values of ``keys`` (tuples of the table's key columns); missing and corrupt keys are absent.

        ``decode`` replaces the table's value check for this call (say, with the expected vector length).
        """
        spec = self.kind.table(table)
        wanted = list(dict.fromkeys(_text_key(key) for key in keys))
        found: dict[Key, Any] = {}
        bad: list[tuple[Key, tuple[Any, ...], str]] = []
        with self._lock:
            with self._sqlite(f"reading {table}"):
                for start in range(0, len(wanted), _LOOKUP_ROWS):
                    chunk = wanted[start : start + _LOOKUP_ROWS]
                    self._verify(spec, chunk, self._select(spec, chunk), decode or spec.decode, found, bad)
            self.counts.hits += len(found)
            self.counts.misses += len(wanted) - len(found)
            if bad:
                self._drop(spec, bad)
        return found

    def get(self, table: str, key: Key) -> Any | None:
        """The verified value of one key, or ``None``."""
        return self.get_many(table, [key]).get(_text_key(key))

    def _select(self, table: Table, chunk: Sequence[Key]) -> list[tuple[Any, ...]]:
        """Rows of the keys in ``chunk`` as (position in ``chunk``, value columns..., checksum).

        A join on a VALUES list uses the primary key ("(a, b) IN (VALUES ...)" makes sqlite scan the
        table), and the position stands for the key so the key's text is not read back.
        """
        width = len(table.keys)
        placeholders = ", ".join(["(" + ", ".join("?" * (width + 1)) + ")"] * len(chunk))
        on = " AND ".join(f"t.{k} = w.column{i + 2}" for i, k in enumerate(table.keys))
        columns = ", ".join(f"t.{c}" for c in (*table.value_names, "checksum"))
        sql = f"SELECT w.column1, {columns} FROM (VALUES {placeholders}) AS w JOIN {table.name} AS t ON {on}"
        return self._conn.execute(sql, [part for i, key in enumerate(chunk) for part in (i, *key)]).fetchall()

    @staticmethod
    def _verify(
        table: Table,
        chunk: Sequence[Key],
        rows: Iterable[tuple[Any, ...]],
        decode: Decoder,
        found: dict[Key, Any],
        bad: list[tuple[Key, tuple[Any, ...], str]],
    ) -> None:
        blobs = table.blobs
        for position, *read in rows:
            key, values = chunk[position], tuple(read[:-1])
            if read[-1] != row_checksum((*key, *values), blobs):
                bad.append((key, tuple(read), "checksum mismatch"))
                continue
            try:
                found[key] = decode(values)
            except (ValueError, TypeError, OverflowError) as error:
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
        where = " AND ".join(f"{c} IS ?" for c in (*table.columns, "checksum"))
        with self._transaction(f"dropping corrupt rows of {table.name}") as conn:
            conn.executemany(f"DELETE FROM {table.name} WHERE {where}", [(*key, *read) for key, read, _ in bad])

    # --- writes

    def put_many(self, table: str, rows: Iterable[tuple[Key, Values]]) -> None:
        """Store ``(key, values)`` rows in one transaction, committed on return."""
        spec = self.kind.table(table)
        coercers = spec.coercers
        prepared = []
        for key, values in rows:
            key = _text_key(key)
            typed = tuple(None if v is None else c(v) for c, v in zip(coercers, values))
            prepared.append((*key, *typed, spec.checksum(key, typed)))
        if not prepared:
            return
        verb = "INSERT OR IGNORE" if spec.first_writer_wins else "INSERT OR REPLACE"
        sql = f"{verb} INTO {spec.name} VALUES ({', '.join('?' * (len(spec.columns) + 1))})"
        with self._transaction(f"writing {table}") as conn:
            conn.executemany(sql, prepared)

    def put(self, table: str, key: Key, values: Values) -> None:
        """Store one value and commit at once."""
        self.put_many(table, [(key, values)])

    def count(self, table: str, **where: str) -> int:
        """Rows of ``table``, those whose key columns equal ``where`` only."""
        self.kind.table(table)
        clause = " AND ".join(f"{column} = ?" for column in where)
        sql = f"SELECT COUNT(*) FROM {table}" + (f" WHERE {clause}" if clause else "")
        with self._lock, self._sqlite(f"counting {table}"):
            return int(self._conn.execute(sql, list(where.values())).fetchone()[0])

    # --- lifetime

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> CacheStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


F = TypeVar("F", bound="CacheFacade")


class CacheFacade:
    """Base of a typed cache over one :class:`CacheStore` (``self._store``): its counts, closing, ``with`` use."""

    _store: CacheStore

    @property
    def counts(self) -> CacheCounts:
        """Hits, misses and corrupt values dropped since the cache was opened."""
        return self._store.counts

    def close(self) -> None:
        self._store.close()

    def __enter__(self: F) -> F:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def single_keys(keys: Iterable[str]) -> list[Key]:
    """One-column keys as the tuples the store takes."""
    return [(key,) for key in keys]


def by_first(found: Mapping[Key, Any]) -> dict[str, Any]:
    """A one-column-key result keyed by the plain key again."""
    return {key[0]: value for key, value in found.items()}
