"""The fold of the shards cache mode: shards added to the main cache file by one process on one host.

sqlite says of WAL mode, which every cache file uses: "All processes using a database must be on the same host
computer; WAL does not work over a network filesystem." A cluster run puts ``results/`` on NFS, Lustre or GPFS
and runs jobs on many hosts, so in the ``shards`` cache mode (``cache_mode`` in config.yaml; the SLURM profile
sets it) no job writes a cache file another process reads (docs/caches.md):

* a job's values go to **shards**: small sqlite files written whole under a temporary name in
  ``<cache>.shards/``, synced, then renamed into place, so a reader on any host sees a shard whole or not at
  all; a job buffers its writes and writes a shard at most every ``FLUSH_S`` seconds (a killed job loses at
  most that much of its work);
* the **main file** is only read by jobs, with sqlite's ``immutable`` flag (no lock, no ``-shm``, no ``-wal``);
* :func:`fold` adds the shards to the main file on one host (the driver: the workflow's ``onstart``, ``onsuccess``
  and ``onerror``), under a lock directory, each row verified on the way; in the shards mode it writes a copy and
  renames it over the main file, so a reader of another run keeps a consistent file. It is idempotent: a shard is
  deleted only after its rows are in the main file, and folding it again adds nothing.

Reads and shard writes are the store's (:class:`posir.cache_store.CacheStore` in the ``shards`` mode); every row keeps
the CRC-32 the store gives it; a shard that cannot be read whole is
dropped from reads, counted as corrupt and deleted by the next fold, and its values are computed again.
"""

from __future__ import annotations

import errno
import importlib
import logging
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posir.atomic_files import atomic_file, host_name, partials_of, process_alive, sweep, writer_gone
from posir.cache_store import (
    TEMPORARY_PREFIX,
    UNUSABLE_ROW,
    CacheKind,
    CacheStore,
    ShardReader,
    cache_mode,
    complete_shards,
    shard_dir,
)

logger = logging.getLogger("posir.cache")

LOCK_WAIT_S = 600.0

#: cache kind name -> "module:attribute" of its CacheKind, imported only when a fold meets that kind
KINDS = {
    "embedding": "posir.embedding_cache:EMBEDDING_CACHE",
    "token-vector": "posir.token_cache:TOKEN_CACHE",
    "score": "posir.scorers.cache:SCORE_CACHE",
    "llm-answer": "posir.llm.cache:ANSWER_CACHE",
    "translation": "posir.translate.cache:TRANSLATION_CACHE",
    "saliency": "posir.analyses.saliency:SALIENCY_CACHE",
}


# --- folding -----------------------------------------------------------------------------------------


@dataclass
class FoldReport:
    """What one fold did to one cache file."""

    path: Path
    shards: int = 0
    added: dict[str, int] = field(default_factory=dict)
    present: int = 0  # shard rows whose key the main file already held with a sound value
    corrupt_rows: int = 0
    damaged_shards: int = 0
    stale_temporaries: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.shards or self.damaged_shards or self.stale_temporaries)

    def summary(self) -> str:
        return (
            f"{self.path}: folded {self.shards} shard(s): added {sum(self.added.values())} value(s) "
            f"{dict(sorted(self.added.items()))}, {self.present} already there, {self.corrupt_rows} corrupt value(s) "
            f"and {self.damaged_shards} damaged shard(s) dropped, {self.stale_temporaries} unfinished shard(s) or "
            f"fold copies of dead processes removed"
        )


def kind_named(name: str) -> CacheKind:
    module, attribute = KINDS[name].split(":")
    return getattr(importlib.import_module(module), attribute)


def _stale_temporaries(directory: Path) -> list[Path]:
    """Unfinished shards named as before :mod:`posir.atomic_files` (``.tmp-<host>-<pid>-<hex>.sqlite``) whose writer
    is gone, by that module's rule: on this host its process has ended; elsewhere it is an hour old."""
    stale = []
    for path in directory.glob(f"{TEMPORARY_PREFIX}*"):
        match = re.fullmatch(rf"{re.escape(TEMPORARY_PREFIX)}(.+)-(\d+)-[0-9a-f]+\.sqlite", path.name)
        try:
            modified = path.stat().st_mtime
        except FileNotFoundError:
            continue
        host, pid = (match.group(1), int(match.group(2))) if match else ("", 0)  # no writer named: judged by age
        if writer_gone(host, pid, modified):
            stale.append(path)
    return stale


@contextmanager
def fold_lock(directory: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """One fold of a cache at a time, across hosts: ``mkdir`` is atomic on NFS, Lustre and GPFS alike.

    The lock directory holds its owner (host and process); a lock left by a dead process of this host is taken
    over, one of another host is waited for up to ``wait_s`` and then named in the error with the fix.
    """
    lock = directory / ".fold-lock"
    owner = f"{host_name()} {os.getpid()}"
    deadline = time.monotonic() + wait_s
    while True:
        try:
            lock.mkdir()
            break
        except FileExistsError:
            try:
                held = (lock / "owner").read_text().split()
            except OSError:
                held = []
            if len(held) == 2 and held[0] == host_name() and not process_alive(int(held[1])):
                logger.warning("%s: taking over the fold lock of process %s, which has ended", directory, held[1])
                (lock / "owner").unlink(missing_ok=True)
                lock.rmdir()
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{lock}: another fold ({' '.join(held) or 'owner unknown'}) held it for over {wait_s:g} s; "
                    f"if no posir run is folding this cache any more, remove {lock} and run again"
                ) from None
            time.sleep(0.5)
    try:
        (lock / "owner").write_text(owner)
        yield
    finally:
        (lock / "owner").unlink(missing_ok=True)
        lock.rmdir()


def _copy_database(source: Path, target: Path) -> None:
    """``target``: a compact, consistent copy of ``source`` (its committed WAL content included)."""
    target.unlink(missing_ok=True)
    db = sqlite3.connect(source, isolation_level=None)
    try:
        db.execute("VACUUM INTO ?", (str(target),))
    finally:
        db.close()


def fold(path: str | Path, kind: CacheKind, *, mode: str | None = None) -> FoldReport:
    """Add the shards of the cache file ``path`` to it and delete them; every row is checked on the way.

    A key the main file holds with a sound value keeps it (what a reader of the shards mode sees first); a
    corrupt row, or a damaged shard, is dropped and counted. In the ``single`` mode the rows go into the file
    in place (WAL, one host); in the ``shards`` mode into a copy that is synced and renamed over it, so jobs of
    another run reading it on other hosts keep a consistent file.
    """
    path = Path(path)
    directory = shard_dir(path)
    report = FoldReport(path)
    if not directory.is_dir():
        return report
    with fold_lock(directory):
        report.stale_temporaries += len(sweep(folders=[directory]).removed)
        for temporary in _stale_temporaries(directory):
            temporary.unlink(missing_ok=True)
            report.stale_temporaries += 1
        # only the lock's holder writes a copy: any other is left by a fold killed midway (and so are the copies
        # named as before posir.atomic_files, ``.<file>.fold-<host>-<pid>``)
        for copy in [*partials_of(path), *path.parent.glob(f".{path.name}.fold-*")]:
            copy.unlink(missing_ok=True)
            report.stale_temporaries += 1
        shards = complete_shards(directory)
        if not shards:
            return report
        in_place = cache_mode(mode) == "single"
        reader = ShardReader(directory, kind)
        try:
            with nullcontext(path) if in_place else atomic_file(path, sync=True) as target_path:
                if not in_place and path.exists():
                    _copy_database(path, target_path)
                with CacheStore(target_path, kind, mode="single") as target:
                    for shard in shards:
                        _fold_shard(reader, shard, target, report)
                    report.corrupt_rows += target.counts.corrupt
        finally:
            reader.close()
        for shard in shards:
            shard.unlink(missing_ok=True)
    return report


def _fold_shard(reader: ShardReader, shard: Path, target: CacheStore, report: FoldReport) -> None:
    """The sound rows of one shard into ``target`` where it lacks them."""
    try:
        per_table: dict[str, list[tuple[tuple[Any, ...], tuple[Any, ...]]]] = {}
        for table in reader.kind.tables:
            width, good = len(table.keys), []
            for row in reader.rows(shard, table):
                key, values = tuple(row[:width]), tuple(row[width:-1])
                try:
                    table.checked(key, values, row[-1])
                except UNUSABLE_ROW:
                    report.corrupt_rows += 1
                    continue
                good.append((key, values))
            per_table[table.name] = good
    except sqlite3.DatabaseError as error:
        reader.drop(shard, error)
        report.damaged_shards += 1
        return
    report.shards += 1
    for name, rows in per_table.items():
        if not rows:
            continue
        held = target.get_many(name, [key for key, _ in rows])
        missing = [(key, values) for key, values in rows if key not in held]
        report.present += len(rows) - len(missing)
        target.put_many(name, missing)
        report.added[name] = report.added.get(name, 0) + len(missing)


def fold_all(paths: Mapping[str, str | Path], mode: str | None = None) -> list[FoldReport]:
    """Fold every cache of ``paths`` (cache kind name -> file) that has shards; what the workflow's driver runs
    at its start and end. A full disk or another failure names the file and the fix."""
    reports = []
    for name, path in paths.items():
        if not path or not shard_dir(Path(path)).is_dir():
            continue
        try:
            reports.append(fold(path, kind_named(name), mode=mode))
        except OSError as error:
            full = error.errno == errno.ENOSPC
            raise OSError(
                error.errno,
                f"{path}: folding its shards failed ({error.strerror or error}); "
                + ("free space on that file system and run again" if full else "fix the cause and run again")
                + " (the shards are kept until a fold succeeds)",
            ) from error
    return reports
