"""Warm workers: the jobs of a local run hand their script to a long-lived Python on the same host, which keeps what
is costly to make between jobs (the interpreter with posir, pandas and torch imported; an encoder's weights loaded).

Every Snakemake job is a new process: it starts Python, imports what its step needs and, for an encoding, loads the
model, then does a few seconds of work. In the default run at 0c5626e the same two models were loaded 112 times and
the short retrieve, score and table jobs spent about as long starting as working (docs/performance.md). A local run
therefore keeps a pool of workers, one per core the run was given up to :data:`MAX_SLOTS` (a job takes at least
one core, so on up to 8 cores a free slot is always there for it): a job's script calls :func:`hand_over` first;
it takes a free slot (an exclusive lock on the slot's file: a killed job releases it), starts the slot's worker if
none listens there, and sends it the job
(its ``snakemake`` object and script). The worker runs the script as Snakemake would have (in the run's directory,
the job's log and outputs its own, one job at a time) and answers; the job then exits with the worker's outcome.

What a worker keeps: imported modules, and the encoders it loaded (:func:`posir.models.registry.load_encoder`,
at most :data:`MODELS_KEPT`, the least recently used dropped first; the entries that read the same weights alike
share one load: :mod:`posir.models.weights.kept`), so each model is loaded about once per slot.
What it does not keep: a job's files, logs, figures (closed after each job) or anything a step holds in its objects.

Where it is off: under a cluster or cloud executor (jobs run on other hosts, inside allocations that end with them),
with ``POSIR_WORKERS=0`` in the environment, for a job whose host is not the driver's, and for a job that asks for a
GPU (a worker would hold its memory past the job). A job that finds no worker able to take it runs in its own
process, as it always did.

Safety: a worker that loses its job's connection (the job was killed, the run interrupted) exits at once, so no
output is written after its job is gone; a worker idle for :data:`IDLE_SECONDS` exits; the driver stops its run's
workers when the run ends (the Snakefile's ``onsuccess``/``onerror``).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import pickle
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Set by the Snakefile for a local run: where its workers' slots are, how many, on which host.
POOL_VARIABLE = "POSIR_WORKER_POOL"
#: ``POSIR_WORKERS=0`` turns the workers off (every job in its own process, as before).
SWITCH_VARIABLE = "POSIR_WORKERS"
IDLE_SECONDS = 120.0
START_SECONDS = 120.0
#: Models a worker keeps (encoders by entry, and sets of weights: the default run reads three, MiniLM's, me5-small's
#: and USE's), and workers per run at most: each holds its models (about 0.8 GB in the default run), so a run on many
#: cores does not hold them once per core; a job that finds every slot taken runs in its own process.
MODELS_KEPT = 3
MAX_SLOTS = 8
#: True in a worker's process: a script's own :func:`hand_over` returns at once there.
IN_WORKER = False


# --- the pool of a run -------------------------------------------------------------------------------------------


def open_pool(workflow: Any) -> Path | None:
    """The driver of a local run (the Snakefile's ``onstart``): a folder for the run's workers, told to its jobs in
    :data:`POOL_VARIABLE`, one slot per core; None where workers are off."""
    os.environ.pop(POOL_VARIABLE, None)  # a pool this driver inherited is another run's
    if not getattr(workflow, "local_exec", False) or os.environ.get(SWITCH_VARIABLE, "1") == "0":
        return None
    try:
        slots = min(max(int(workflow.cores), 1), MAX_SLOTS)
    except Exception:  # noqa: BLE001 - no --cores: a job that finds no free slot runs in its own process
        slots = 1
    import tempfile

    # a Unix socket's path is short (108 bytes): a long TMPDIR falls back to /tmp
    base = tempfile.gettempdir() if len(tempfile.gettempdir()) < 60 else "/tmp"
    folder = Path(tempfile.mkdtemp(prefix="posir-workers-", dir=base))
    os.environ[POOL_VARIABLE] = json.dumps({"host": socket.gethostname(), "folder": str(folder), "slots": slots})
    return folder


def close_pool() -> int:
    """The driver, when the run ends (``onsuccess``/``onerror``): stop the run's workers, remove their folder; how
    many were stopped."""
    settings = os.environ.pop(POOL_VARIABLE, None)
    if settings is None:
        return 0
    import shutil

    folder = Path(json.loads(settings)["folder"])
    stopped = stop_workers(folder)
    shutil.rmtree(folder, ignore_errors=True)
    return stopped


def pool_of_this_job() -> dict[str, Any] | None:
    """The run's pool, where this job may use it: a local run, workers on, the driver's host."""
    if IN_WORKER or os.environ.get(SWITCH_VARIABLE, "1") == "0" or POOL_VARIABLE not in os.environ:
        return None
    pool = json.loads(os.environ[POOL_VARIABLE])
    return pool if pool.get("host") == socket.gethostname() and Path(pool["folder"]).is_dir() else None


def stop_workers(folder: str | Path) -> int:
    """Ask every worker of a run's pool to exit; the number that answered."""
    stopped = 0
    for address in sorted(Path(folder).glob("*/slot-*.sock")):
        with contextlib.suppress(OSError), _connected(address, timeout=5.0) as connection:
            _send(connection, {"stop": True})
            _receive(connection)
            stopped += 1
    return stopped


# --- a job's side -----------------------------------------------------------------------------------------------


def hand_over(snakemake: Any, script: str) -> None:
    """Run this job's ``script`` in a worker of the run's pool and exit with its outcome; return (and let the script
    run here) where no worker can take it."""
    pool = pool_of_this_job()
    if pool is None or int(getattr(snakemake.resources, "gpu", 0) or 0) > 0:
        return
    # a slot per interpreter: under --sdm conda each rule group's jobs run in their own environment
    folder = Path(pool["folder"]) / hashlib.sha256(sys.executable.encode()).hexdigest()[:12]
    with _free_slot(folder, int(pool["slots"])) as slot:
        if slot is None:
            return
        connection = _worker_at(folder, slot)
        if connection is None:
            return
        with connection:
            _send(connection, {"script": script, "snakemake": pickle.dumps(snakemake), "cwd": os.getcwd()})
            answer = _receive(connection)
    if answer is None:  # the worker died under the job: run it here, from the start
        return
    if not answer["ok"]:
        print(f"posir worker (slot {slot}) failed this job; its log says why:\n{answer['error']}", file=sys.stderr)
    sys.exit(0 if answer["ok"] else 1)


@contextlib.contextmanager
def _free_slot(folder: Path, slots: int) -> Iterator[int | None]:
    """An exclusive lock on the first free slot, held for the job's life (the system drops it when the job dies)."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    for slot in range(slots):
        handle = open(folder / f"slot-{slot}.lock", "a+")  # noqa: SIM115 - held until the job ends
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        try:
            yield slot
        finally:
            handle.close()
        return
    yield None


def _worker_at(folder: Path, slot: int) -> socket.socket | None:
    """A connection to the slot's worker, started first where none listens."""
    address = folder / f"slot-{slot}.sock"
    with contextlib.suppress(OSError):
        return _connect(address)
    import subprocess

    log = open(folder / f"slot-{slot}.log", "a")  # noqa: SIM115 - the worker's, handed over
    worker = subprocess.Popen(
        [sys.executable, "-m", "posir.workers", str(folder), str(slot)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,  # not a child of the job: it outlives it
        cwd=os.getcwd(),
    )
    log.close()
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline and worker.poll() is None:
        time.sleep(0.05)
        with contextlib.suppress(OSError):
            return _connect(address)
    return None  # it did not start (its log, in the pool's folder, says why): the job runs in its own process


# --- the worker's side ------------------------------------------------------------------------------------------


def serve(folder: Path, slot: int) -> None:
    """A worker: run the jobs sent to the slot's socket one at a time until stopped or idle."""
    global IN_WORKER
    IN_WORKER = True  # posir.models.registry reads it: a worker keeps up to MODELS_KEPT models loaded
    torch_threads = _torch_default_threads()
    address = folder / f"slot-{slot}.sock"
    with contextlib.suppress(FileNotFoundError):
        address.unlink()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(address))
    server.listen(1)
    server.settimeout(IDLE_SECONDS)
    print(f"worker {os.getpid()} at {address}", flush=True)
    try:
        while True:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                print(f"idle for {IDLE_SECONDS:.0f} s: exiting", flush=True)
                return
            connection.settimeout(None)
            with connection:
                request = _receive(connection)
                if request is None:
                    continue
                if request.get("stop"):
                    _send(connection, {"ok": True})
                    print("stopped by the run", flush=True)
                    return
                if torch_threads is not None:  # each job starts with a fresh process's threads; it sets its own
                    sys.modules["torch"].set_num_threads(torch_threads)
                _send(connection, _run_job(request, connection))
                with contextlib.suppress(OSError):  # wakes the job's watcher: it was answered
                    connection.shutdown(socket.SHUT_RDWR)
    finally:
        with contextlib.suppress(FileNotFoundError):
            address.unlink()


def _run_job(request: dict[str, Any], connection: socket.socket) -> dict[str, Any]:
    """Run a job's script as Snakemake would: in the run's directory, with ``snakemake`` bound; its outcome."""
    started = time.monotonic()
    snakemake = pickle.loads(request["snakemake"])
    script = Path(request["script"])
    answered = threading.Event()
    watcher = threading.Thread(target=_exit_when_gone, args=(connection, answered), daemon=True)
    watcher.start()
    error = ""
    try:
        os.chdir(request["cwd"])
        code = compile(script.read_text(encoding="utf-8"), str(script), "exec")
        exec(code, {"__name__": "__main__", "__file__": str(script), "snakemake": snakemake})  # noqa: S102
    except SystemExit as exit_:
        error = "" if exit_.code in (None, 0) else f"exit status {exit_.code}"
    except BaseException as failure:  # noqa: BLE001 - a job's failure is reported, not the worker's
        error = f"{type(failure).__name__}: {failure}"
    finally:
        _after_job()
    print(f"{script.name} ({getattr(snakemake, 'rule', '?')}): {time.monotonic() - started:.1f} s", flush=True)
    answered.set()
    return {"ok": not error, "error": error}


def _torch_default_threads() -> int | None:
    """torch's thread count in a fresh process (torch imported now, before any job sets it), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    return int(torch.get_num_threads())


def _after_job() -> None:
    """What no job may leave behind for the next: open figures, garbage.

    What survives the collection is the worker's own (imported modules, kept models): it is frozen out of later
    collections (``gc.freeze``), which would otherwise scan it all again. A worker that has imported torch and
    loaded a model holds about 550,000 objects, and a full collection of them took 0.28 s, once after each of a
    run's thousand jobs and once in each of statsmodels' Holm corrections (which collect); with them frozen it takes
    microseconds. Frozen objects are still freed when nothing refers to them; only a cycle among them outlives its
    last reference, and the worker ends with the run."""
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    gc.collect()
    gc.freeze()


def _exit_when_gone(connection: socket.socket, answered: threading.Event) -> None:
    """The job's process is gone before its answer (killed, its run interrupted): stop now, writing nothing more for
    it. The job sends nothing after its request, so the only thing to read is the end of the connection."""
    with contextlib.suppress(OSError):
        connection.recv(1, socket.MSG_PEEK)
    if not answered.is_set():
        os._exit(3)


# --- the wire: length-prefixed pickles over a Unix socket -------------------------------------------------------


def _connect(address: Path, timeout: float | None = None) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(timeout)
    try:
        connection.connect(str(address))
    except OSError:
        connection.close()
        raise
    return connection


@contextlib.contextmanager
def _connected(address: Path, timeout: float | None = None) -> Iterator[socket.socket]:
    connection = _connect(address, timeout)
    try:
        yield connection
    finally:
        connection.close()


def _send(connection: socket.socket, message: dict[str, Any]) -> None:
    data = pickle.dumps(message)
    connection.sendall(struct.pack("!Q", len(data)) + data)


def _receive(connection: socket.socket) -> dict[str, Any] | None:
    """A message, or None where the other side closed the connection first."""
    header = _read(connection, 8)
    if header is None:
        return None
    data = _read(connection, struct.unpack("!Q", header)[0])
    return None if data is None else pickle.loads(data)


def _read(connection: socket.socket, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        try:
            chunk = connection.recv(min(left, 1 << 20))
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


if __name__ == "__main__":
    # run as ``python -m posir.workers``: serve from the module the jobs' scripts import, whose IN_WORKER they read
    from posir import workers as module

    module.serve(Path(sys.argv[1]), int(sys.argv[2]))
