"""What goes wrong with a cache file, as one :class:`CacheError` family whose messages name the file and the fix.

docs/caches.md tabulates the subclasses; :func:`sqlite_failure` turns what sqlite raises into one of them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from posir.cache_store.tables import CacheKind


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


def sqlite_failure(error: sqlite3.Error, doing: str, path: Path, kind: CacheKind, busy_timeout_s: float) -> CacheError:
    """The :class:`CacheError` for an sqlite failure while ``doing`` something to the cache file ``path``: what
    happened to which file, and the fix."""
    code = getattr(error, "sqlite_errorname", "") or ""
    text = str(error)
    where = f"{path}: {doing}"
    if code == "SQLITE_NOTADB" or "not a database" in text:
        return NotACacheError(f"{path}: not a usable {kind.title} ({text}); {kind.fix}")
    if code.startswith("SQLITE_CORRUPT") or "malformed" in text:
        return CacheDamagedError(f"{where}: the file is damaged ({text}); {kind.fix}")
    if code.startswith("SQLITE_READONLY") or "readonly" in text:
        return CacheReadOnlyError(
            f"{where}: cannot write ({text}); make the file and its directory writable or "
            f"set {kind.setting} to a writable file"
        )
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return CacheBusyError(
            f"{where}: another process kept the file locked for over {busy_timeout_s:g} s "
            f"({text}); rerun when it has finished, or give each job its own "
            f"{kind.setting}"
        )
    if code == "SQLITE_FULL" or "disk is full" in text:
        return CacheError(
            f"{where}: the disk is full ({text}); free space or set {kind.setting} to a file on another disk"
        )
    return CacheError(f"{where} failed ({text}); {kind.fix}")
