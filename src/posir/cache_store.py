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
  wrong and the fix;
* the cache mode: ``single`` (the default: every process reads and writes the one file, on one host) or
  ``shards`` (jobs on several hosts: the file is only read, values go to shards that one process folds
  into it; :mod:`posir.cache_shards`).

sqlite rather than a key-value library: ``perf/cache_store_speed.py`` measured this layer against
``diskcache`` on the workflow's access pattern; ``docs/caches.md`` has the numbers and the reasons.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import urllib.parse
import uuid
import weakref
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from posir.atomic_files import HOST_VARIABLE as HOST_VARIABLE  # where the host is named: partials and shards alike
from posir.atomic_files import atomic_file, host_name

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

    def checked(self, key: Key, values: Values, checksum: int, decode: Decoder | None = None) -> Any:
        """A stored row's value as callers get it (``decode``, by default the table's), once its checksum matches;
        ``ValueError`` (or ``TypeError``, ``OverflowError``) for a row that must not be used."""
        if checksum != self.checksum(key, values):
            raise ValueError("checksum mismatch")
        return (decode or self.decode)(values)


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


# --- the shards mode: shard files (posir.cache_shards folds them) --------------------------------------

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


# --- writing -----------------------------------------------------------------------------------------


def create_layout(db: sqlite3.Connection, kind: CacheKind) -> None:
    """The tables of ``kind`` and the meta table naming it, in an empty database (a shard, an empty main file)."""
    for table in kind.tables:
        db.execute(table.create_sql())
    db.execute(f"CREATE TABLE {META_TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.executemany(f"INSERT INTO {META_TABLE} VALUES (?, ?)", [("kind", kind.name), ("version", str(kind.version))])


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
                    marks = ", ".join("?" * (len(table.columns) + 1))
                    db.executemany(f"INSERT OR IGNORE INTO {table.name} VALUES ({marks})", rows[table.name])
            db.execute("COMMIT")
        finally:
            db.close()
    return final


# --- reading -----------------------------------------------------------------------------------------


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
            db.text_factory = _read_text
            try:
                meta = dict(db.execute(f"SELECT name, value FROM {META_TABLE}").fetchall())
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


# --- the store -------------------------------------------------------------------------------------


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
        self._writer: _ShardWriter | None = None
        if self.mode == "shards":
            self._open_shared()
            return
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
            self._db.text_factory = _read_text
        try:
            with self._sqlite("reading its format"):
                if not self._is_current(self._tables()):
                    raise NotACacheError(
                        f"{self.path}: a {self.kind.title} of the layout before format {self.kind.version}, which "
                        f"only the single cache mode migrates; run once with cache_mode: single on one host, or "
                        f"{self.kind.fix}"
                    )
        except BaseException:
            self.close()
            raise
        self._shards = ShardReader(directory, self.kind)
        self._writer = _ShardWriter(directory, self.kind)
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
            if self._shards is not None and len(found) < len(wanted):
                self._read_shards(spec, [key for key in wanted if key not in found], decode or spec.decode, found)
            self.counts.hits += len(found)
            self.counts.misses += len(wanted) - len(found)
            if bad:
                self._drop(spec, bad)
        return found

    def get(self, table: str, key: Key) -> Any | None:
        """The verified value of one key, or ``None``."""
        return self.get_many(table, [key]).get(_text_key(key))

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
                if not shard.exists():
                    continue  # folded by another run meanwhile: its values are in the main file's next version
                self._shards.drop(shard, error)
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
        if self.mode == "shards":
            return  # the main file and the shards are read-only here: the fold drops them
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
        if self._writer is not None:
            with self._lock:
                self._writer.add(spec, prepared)
                self._flush_if_due()
            return
        verb = "INSERT OR IGNORE" if spec.first_writer_wins else "INSERT OR REPLACE"
        sql = f"{verb} INTO {spec.name} VALUES ({', '.join('?' * (len(spec.columns) + 1))})"
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
                    if shard.exists():
                        self._shards.drop(shard, error)
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
        if self._writer.rows >= FLUSH_ROWS or time.monotonic() - self._writer.last_flush >= FLUSH_S:
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


class _ShardWriter:
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
