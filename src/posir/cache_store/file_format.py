"""A cache file's format: the meta table naming its kind and version, checked on open, and the migration of the
unversioned layout the caches wrote before the store (no meta table, no checksums).

:class:`posir.cache_store.CacheStore` checks every file it opens (:func:`is_current`) and migrates an unversioned
one in place inside its write transaction (:func:`migrate_legacy`; docs/caches.md, "Files written before the
store"): each table is renamed, recreated with a checksum column and its rows copied through the table's value
check; rows that fail it are dropped and counted.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from posir.cache_store.errors import NotACacheError
from posir.cache_store.tables import META_TABLE, UNUSABLE_ROW, CacheKind, Table, read_meta

logger = logging.getLogger("posir.cache")

_MIGRATE_ROWS = 2048  # legacy rows read, checked and rewritten at a time while migrating


def table_names(conn: sqlite3.Connection) -> set[str]:
    """The tables of a database, sqlite's own left out."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {name for (name,) in rows if not name.startswith("sqlite_")}


def is_current(conn: sqlite3.Connection, path: Path, kind: CacheKind, tables: set[str]) -> bool:
    """Whether the file ``path`` (open as ``conn``, holding ``tables``) is a cache of ``kind`` in its current format;
    ``False`` for an empty or unversioned file, :class:`NotACacheError` for a cache of another kind or format."""
    if META_TABLE not in tables:
        return False
    meta = read_meta(conn)
    written_kind, written = meta.get("kind"), meta.get("version", "")
    version = int(written) if written.isdigit() else 0
    if written_kind != kind.name:
        raise NotACacheError(
            f"{path}: not a usable {kind.title} (it is a {written_kind} cache); set {kind.setting} to another file"
        )
    if version > kind.version:
        raise NotACacheError(
            f"{path}: not a usable {kind.title} (format {version}, written by a newer "
            f"posir than this one, which reads format {kind.version}); update posir, or "
            f"{kind.fix}"
        )
    if version < kind.version:
        raise NotACacheError(
            f"{path}: not a usable {kind.title} (format {version}, which this posir "
            f"cannot migrate to format {kind.version}); {kind.fix}"
        )
    return True


@dataclass
class Migration:
    """What opening an unversioned file did: rows kept and dropped per table, with a reason per drop kind."""

    kept: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)


def migrate_legacy(conn: sqlite3.Connection, path: Path, kind: CacheKind, tables: set[str]) -> Migration:
    """Rewrite the unversioned tables of the file ``path`` (open as ``conn``, inside a write transaction) with
    checksums, dropping (and counting) rows that fail their check; a file whose tables or columns are not those of
    ``kind`` is refused, untouched, with the fix."""
    unknown = tables - kind.legacy_tables
    if unknown or not tables:
        raise NotACacheError(
            f"{path}: not a usable {kind.title} (it holds the tables "
            f"{', '.join(sorted(tables))}, not {', '.join(sorted(kind.legacy_tables))}); "
            f"{kind.fix}"
        )
    migration = Migration()
    for name in sorted(tables):
        table = kind.table(name)
        found = {row[1] for row in conn.execute(f"PRAGMA table_info({name})")}
        if not set(table.columns) <= found:
            raise NotACacheError(
                f"{path}: not a usable {kind.title} (table {name} has the columns "
                f"{', '.join(sorted(found))}, not {', '.join(table.columns)}); {kind.fix}"
            )
        conn.execute(f"ALTER TABLE {name} RENAME TO legacy_{name}")
        conn.execute(table.create_sql())
        _copy_checked(conn, table, migration)
        conn.execute(f"DROP TABLE legacy_{name}")
    logger.warning(
        "%s: migrated the %s to format %d: kept %s, dropped %s%s",
        path,
        kind.title,
        kind.version,
        migration.kept,
        migration.dropped,
        f" ({'; '.join(migration.reasons.values())})" if migration.reasons else "",
    )
    return migration


def _copy_checked(conn: sqlite3.Connection, table: Table, migration: Migration) -> None:
    width = len(table.keys)
    rows = conn.execute(f"SELECT {', '.join(table.columns)} FROM legacy_{table.name}")
    insert = table.insert_sql("INSERT OR REPLACE")
    kept = dropped = 0
    while batch := rows.fetchmany(_MIGRATE_ROWS):
        good = []
        for row in batch:
            key = tuple(row[:width])
            try:
                values = table.typed(row[width:])
                table.decode(values)
            except UNUSABLE_ROW as error:
                dropped += 1
                migration.reasons.setdefault(table.name, f"{table.name}: e.g. {error}")
                continue
            good.append((*key, *values, table.checksum(key, values)))
        conn.executemany(insert, good)
        kept += len(good)
    migration.kept[table.name] = kept
    migration.dropped[table.name] = dropped
