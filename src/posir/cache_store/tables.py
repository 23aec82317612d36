"""What a cache file holds: its kind, its tables, how a value is stored, checksummed and checked on read.

A :class:`CacheKind` (one per cache: embeddings, scores, LLM answers, translations, saliency curves) names its
:class:`Table` declarations; every row stores a CRC-32 of its key and value columns (:func:`row_checksum`) beside
them, and a meta table (:data:`META_TABLE`) names the file's kind and format version (docs/caches.md).
"""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

META_TABLE = "posir_cache"

Key = tuple[Any, ...]
Values = tuple[Any, ...]
Decoder = Callable[[Values], Any]
#: what a value check (``Table.decode``, :meth:`Table.checked`, :meth:`Table.typed`) raises for a row that must not
#: be used: such a row counts as corrupt
UNUSABLE_ROW = (ValueError, TypeError, OverflowError)


def _text(value: Any) -> str:
    """A TEXT value as valid UTF-8 text; UnicodeError (a ValueError) for bytes or surrogates that are not."""
    text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
    text.encode("utf-8")
    return text


def read_text(raw: bytes) -> str:
    """The connections' ``text_factory``.

    Undecodable TEXT (a damaged row) reads as surrogates, which fail the row's checksum or its check,
    instead of sqlite3 aborting the whole read with "Could not decode to UTF-8".
    """
    return raw.decode("utf-8", "surrogateescape")


_COERCE: dict[str, Callable[[Any], Any]] = {"INTEGER": int, "REAL": float, "TEXT": _text, "BLOB": bytes}


def _as_is(values: Values) -> Values:
    return values


def plain_key(key: Iterable[Any]) -> Key:
    """A key as it is stored: keys are TEXT columns, checksummed as plain str (a str subclass, numpy's, would
    repr differently)."""
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

    def insert_sql(self, verb: str) -> str:
        """``verb`` (``INSERT OR REPLACE``, ``INSERT OR IGNORE``) of one row: key, value and checksum columns."""
        return f"{verb} INTO {self.name} VALUES ({', '.join('?' * (len(self.columns) + 1))})"

    @cached_property
    def coercers(self) -> tuple[Callable[[Any], Any], ...]:
        """What each value column's value is turned into before it is stored (its declared type)."""
        return tuple(_COERCE[column.split()[1].upper()] for column in self.values)

    def typed(self, values: Iterable[Any]) -> Values:
        """``values`` as the value columns' declared types (NULL stays NULL), as they are stored and checksummed;
        ``ValueError`` (or ``TypeError``, ``OverflowError``) for a value that is none of its type."""
        return tuple(None if v is None else c(v) for c, v in zip(self.coercers, values))

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


def create_layout(db: sqlite3.Connection, kind: CacheKind) -> None:
    """The tables of ``kind`` and the meta table naming it: in an empty database (a shard, a new main file), or
    beside the tables a migration has just rewritten."""
    for table in kind.tables:
        db.execute(table.create_sql())
    db.execute(f"CREATE TABLE IF NOT EXISTS {META_TABLE} (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.executemany(
        f"INSERT OR REPLACE INTO {META_TABLE} VALUES (?, ?)", [("kind", kind.name), ("version", str(kind.version))]
    )


def read_meta(db: sqlite3.Connection) -> dict[str, str]:
    """The meta table of a cache file or shard: ``kind`` and ``version``."""
    return dict(db.execute(f"SELECT name, value FROM {META_TABLE}").fetchall())
