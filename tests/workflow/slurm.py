"""A real single-node SLURM cluster for tests: munged, slurmctld and slurmd on this machine.

`single_node_slurm(workdir)` writes /etc/slurm/slurm.conf (the original is backed up and put back),
starts the daemons it needs, waits until the node is idle, yields a `SlurmCluster`, then cancels
what is left in the queue and stops exactly the daemons it started, by PID.

Why /etc/slurm/slurm.conf and not $SLURM_CONF: the executor plugin's job step
(snakemake-executor-plugin-slurm-jobstep) strips every SLURM_* variable but the job's identity
before its nested `srun`, so that `srun` only ever finds the default path.

Needs root (the daemons, /etc/slurm, the munge user) and Debian's packages:
`apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge`.
Without either the test is skipped, with the reason; every other failure is an error.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

SLURM_CONF = Path("/etc/slurm/slurm.conf")
BACKUP = SLURM_CONF.with_name("slurm.conf.posir-backup")
MARKER = "# written by posir-workflow tests/workflow/slurm.py; the original is restored on exit"
MUNGE_KEY = Path("/etc/munge/munge.key")
MUNGE_RUN_DIR = Path("/run/munge")
# One cluster at a time on a machine: two of them would fight over /etc/slurm/slurm.conf.
LOCK_FILE = Path("/run/posir-single-node-slurm.lock")
PARTITION = "posir"
BINARIES = (
    "munged",
    "munge",
    "unmunge",
    "slurmctld",
    "slurmd",
    "sinfo",
    "squeue",
    "sbatch",
    "srun",
    "scontrol",
    "scancel",
)
# Debian puts the daemons in /usr/sbin, which a non-login root shell may lack on PATH.
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


class SlurmStartError(RuntimeError):
    """The cluster did not come up; the message carries the daemons' log tails."""


@dataclass
class _Daemon:
    name: str
    process: subprocess.Popen
    log: Path


@dataclass
class SlurmCluster:
    """What a test needs to know about the running cluster."""

    workdir: Path
    node: str
    partition: str
    cpus: int
    real_memory_mb: int
    ctld_port: int
    slurmd_port: int
    log_dir: Path
    started: dict[str, int] = field(default_factory=dict)  # daemon name -> PID, only those this helper started

    def log_tails(self, lines: int = 30) -> str:
        return _log_tails(sorted(self.log_dir.glob("*.log")), lines)

    def job_fields(self, job_id: str) -> dict[str, str]:
        """`scontrol show job` as a dict; finished jobs stay visible for MinJobAge (300 s)."""
        done = _run(["scontrol", "-o", "show", "job", job_id])
        fields: dict[str, str] = {}
        for token in done.stdout.split():
            key, sep, value = token.partition("=")
            if sep:
                fields[key] = value
        return fields


def missing_prerequisites() -> str | None:
    """Why this machine cannot run the cluster, or None."""
    if os.geteuid() != 0:
        return "single-node SLURM needs root (daemons, /etc/slurm/slurm.conf, the munge user)"
    missing = [name for name in BINARIES if shutil.which(name, path=SEARCH_PATH) is None]
    if missing:
        return (
            f"single-node SLURM: missing {', '.join(missing)}; install with "
            "`apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge`"
        )
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "single-node SLURM: no 'munge' user (the munge package creates it)"
    return None


def skip_unless_possible() -> None:
    reason = missing_prerequisites()
    if reason is not None:
        # Printed as well: `pytest -q` shows skip reasons only with -rs.
        print(f"SKIP: {reason}", file=sys.stderr)
        pytest.skip(reason)


@contextlib.contextmanager
def single_node_slurm(
    workdir: Path, *, cpus: int | None = None, real_memory_mb: int | None = None, timeout_s: float = 60.0
) -> Iterator[SlurmCluster]:
    """Run a one-node cluster whose state, logs and pid files live under `workdir`.

    cpus and real_memory_mb default to what `slurmd -C` finds (memory: 85 % of it, rounded down to
    1000 MB: a node declared larger than the machine is marked INVALID and never gets idle).
    """
    skip_unless_possible()
    workdir = Path(workdir).resolve()
    with _exclusive_lock(timeout_s), contextlib.ExitStack() as stack:
        hardware = _hardware()
        node = socket.gethostname().split(".")[0]
        cpus = cpus or int(hardware["CPUs"])
        memory = real_memory_mb or max(1000, math.floor(int(hardware["RealMemory"]) * 0.85 / 1000) * 1000)
        ctld_port, slurmd_port = _free_ports(2)
        cluster = SlurmCluster(
            workdir=workdir,
            node=node,
            partition=PARTITION,
            cpus=cpus,
            real_memory_mb=memory,
            ctld_port=ctld_port,
            slurmd_port=slurmd_port,
            log_dir=workdir / "log",
        )
        _fresh_state(workdir)
        stack.enter_context(_installed_conf(_slurm_conf(cluster, hardware)))
        stack.enter_context(_default_conf_for_clients())
        daemons: list[_Daemon] = []
        # Registered before anything starts, so a failure half way still stops what did start.
        stack.callback(_stop, daemons, cluster)
        _ensure_munge_key()
        if not _munge_works():
            daemons.append(_start_munged(cluster.log_dir))
            _wait(_munge_works, timeout_s, "munged answers `munge -n | unmunge`", daemons, cluster)
        daemons.append(_start(["slurmctld", "-D", "-c", "-i"], "slurmctld", cluster.log_dir))
        daemons.append(_start(["slurmd", "-D", "-c", "-N", node], "slurmd", cluster.log_dir))
        cluster.started = {d.name: d.process.pid for d in daemons}
        _wait(lambda: _node_state(node) == "idle", timeout_s, f"sinfo shows node {node} idle", daemons, cluster)
        yield cluster


# --- slurm.conf ---------------------------------------------------------------------------------


def _slurm_conf(cluster: SlurmCluster, hardware: dict[str, str]) -> str:
    d = cluster.workdir
    topology = " ".join(
        f"{key}={hardware[key]}"
        for key in ("Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
        if key in hardware
    )
    if cluster.cpus != int(hardware["CPUs"]):
        topology = ""  # a CPU count other than the hardware's cannot keep the hardware's topology
    node = (
        f"NodeName={cluster.node} NodeAddr=127.0.0.1 CPUs={cluster.cpus} {topology} "
        f"RealMemory={cluster.real_memory_mb} State=UNKNOWN"
    )
    return f"""{MARKER}
ClusterName=posir-test
# NodeAddr and the controller address are loopback: no name service needed.
SlurmctldHost={cluster.node}(127.0.0.1)
# Ports picked free at start, so a second run never trips over the first one's sockets.
SlurmctldPort={cluster.ctld_port}
SlurmdPort={cluster.slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# All state under the test's own directory: a rerun starts clean, nothing stale is read back.
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
# No systemd and no writable cgroup tree on these machines: track processes by /proc, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
# Reject a request the node can never meet at sbatch time (the default, NO, leaves such a job
# pending forever with Reason=PartitionConfig).
EnforcePartLimits=ALL
# Declares GPUs as a resource type though this node has none: a GPU request is then refused with
# "Requested node configuration is not available", as on a cluster whose GPU nodes are elsewhere.
GresTypes=gpu
# No slurmdbd: sacct cannot answer, so status comes from squeue, which keeps finished jobs this long.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=300
KillWait=5
{node}
PartitionName={cluster.partition} Nodes={cluster.node} Default=YES MaxTime=INFINITE State=UP
"""


@contextlib.contextmanager
def _installed_conf(text: str) -> Iterator[None]:
    """Install `text` as /etc/slurm/slurm.conf; on exit put back whatever was there before.

    A previous run that died before restoring leaves our marker in the file: then the backup (if
    any) is the original and must not be overwritten by our stale file.
    """
    SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
    current = SLURM_CONF.read_text() if SLURM_CONF.exists() else None
    stale_ours = current is not None and current.startswith(MARKER)
    if current is not None and not stale_ours:
        shutil.copy2(SLURM_CONF, BACKUP)
    elif current is None and BACKUP.exists():
        BACKUP.unlink()  # left by someone else's cleanup; there is no original to restore
    tmp = SLURM_CONF.with_name("slurm.conf.posir-tmp")
    tmp.write_text(text)
    tmp.chmod(0o644)
    os.replace(tmp, SLURM_CONF)
    try:
        yield
    finally:
        if BACKUP.exists():
            os.replace(BACKUP, SLURM_CONF)
        else:
            SLURM_CONF.unlink(missing_ok=True)


@contextlib.contextmanager
def _default_conf_for_clients() -> Iterator[None]:
    """Make this process's clients (sinfo, sbatch, snakemake's plugin) read the default path too."""
    saved = os.environ.pop("SLURM_CONF", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["SLURM_CONF"] = saved


# --- daemons ------------------------------------------------------------------------------------


def _start(argv: list[str], name: str, log_dir: Path, **popen: object) -> _Daemon:
    log = log_dir / f"{name}.stderr.log"
    with open(log, "ab") as out:
        # A session of its own: a Ctrl-C meant for pytest must not reach the daemons before _stop does.
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=_env(),
            **popen,
        )  # type: ignore[arg-type]
    return _Daemon(name, process, log)


def _start_munged(log_dir: Path) -> _Daemon:
    MUNGE_RUN_DIR.mkdir(parents=True, exist_ok=True)
    shutil.chown(MUNGE_RUN_DIR, "munge", "munge")
    MUNGE_RUN_DIR.chmod(0o755)
    # --force: a socket or pid file left by a munged that died is stale (we checked none answers).
    # Started as the munge user directly (not through runuser), so the PID we hold is munged's own.
    return _start(
        ["munged", "--foreground", "--force"], "munged", log_dir, user="munge", group="munge", extra_groups=[]
    )


def _stop(daemons: list[_Daemon], cluster: SlurmCluster) -> None:
    """Cancel jobs still queued, then stop the daemons we started, newest first, by PID."""
    alive = {d.name for d in daemons if d.process.poll() is None}
    if {"slurmctld", "slurmd"} <= alive:
        # Jobs of this cluster only: the clients read our slurm.conf, which names only our slurmctld.
        _run(["scancel", "--full", "--user", "root"], check=False)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and _run(["squeue", "-h"], check=False).stdout.strip():
            time.sleep(0.5)
    for daemon in reversed(daemons):
        if daemon.process.poll() is not None:
            continue
        daemon.process.send_signal(signal.SIGTERM)
        try:
            daemon.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            daemon.process.kill()
            daemon.process.wait(timeout=5)


def _wait(
    ready: Callable[[], bool], timeout_s: float, what: str, daemons: list[_Daemon], cluster: SlurmCluster
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        if ready():
            return
        dead = [f"{d.name} (exit {d.process.returncode})" for d in daemons if d.process.poll() is not None]
        if dead or time.monotonic() > deadline:
            problem = f"{', '.join(dead)} exited" if dead else f"timed out after {timeout_s:.0f} s"
            sinfo = _run(["sinfo", "-N", "-o", "%N %T %E"], check=False)
            raise SlurmStartError(
                f"single-node SLURM: waiting until {what}: {problem}.\n"
                f"sinfo: {(sinfo.stdout + sinfo.stderr).strip()}\n"
                f"{cluster.log_tails()}"
            )
        time.sleep(0.3)


def _node_state(node: str) -> str:
    done = _run(["sinfo", "-h", "-N", "-n", node, "-o", "%T"], check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def _munge_works() -> bool:
    try:
        credential = _run(["munge", "-n"], check=False, timeout=5)
        if credential.returncode != 0:
            return False
        return (
            subprocess.run(
                ["unmunge"], input=credential.stdout, capture_output=True, text=True, timeout=5, env=_env()
            ).returncode
            == 0
        )
    except subprocess.TimeoutExpired:
        return False


def _ensure_munge_key() -> None:
    if MUNGE_KEY.exists():
        return
    MUNGE_KEY.parent.mkdir(parents=True, exist_ok=True)
    shutil.chown(MUNGE_KEY.parent, "munge", "munge")
    MUNGE_KEY.parent.chmod(0o700)
    # munged refuses a key readable by anyone but its owner.
    _run(["mungekey", "--create", "--keyfile", str(MUNGE_KEY)])
    shutil.chown(MUNGE_KEY, "munge", "munge")
    MUNGE_KEY.chmod(0o400)


# --- small pieces -------------------------------------------------------------------------------


def _hardware() -> dict[str, str]:
    """`slurmd -C`'s first line as a dict: CPUs, topology and RealMemory as slurmd will see them."""
    first = _run(["slurmd", "-C"]).stdout.splitlines()[0]
    return dict(token.split("=", 1) for token in first.split() if "=" in token)


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in sockets:  # held open together, so the ports differ
            s.bind(("", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _fresh_state(workdir: Path) -> None:
    for sub in ("state", "spool", "run", "log"):
        shutil.rmtree(workdir / sub, ignore_errors=True)
        (workdir / sub).mkdir(parents=True)


@contextlib.contextmanager
def _exclusive_lock(timeout_s: float) -> Iterator[None]:
    with open(LOCK_FILE, "w") as handle:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise SlurmStartError(
                        f"another single_node_slurm holds {LOCK_FILE} for over {timeout_s:.0f} s"
                    ) from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SLURM_CONF"}
    env["PATH"] = SEARCH_PATH
    return env


def _run(argv: list[str], *, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=_env())
    if check and done.returncode != 0:
        raise SlurmStartError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def _log_tails(paths: list[Path], lines: int) -> str:
    parts = []
    for path in paths:
        text = path.read_text(errors="replace").splitlines() if path.exists() else ["(missing)"]
        parts.append(f"--- {path.name} (last {lines} lines) ---\n" + "\n".join(text[-lines:]))
    return "\n".join(parts)
