"""Run `snakemake` as a child process and measure what the driver itself costs.

The CPU time of the snakemake process alone (RUSAGE_SELF, written by the child at exit) is kept
apart from what its reaped children cost (sbatch, squeue, local jobs): a profile setting that
polls less shows up in the first, a job that computes more only in the second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# Runs snakemake's own entry point in this interpreter and records its rusage on the way out
# (snakemake's main ends in sys.exit, so atexit handlers run).
_WRAPPER = """
import atexit, json, resource, sys
out = sys.argv.pop(1)
def dump():
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump({"self_user": s.ru_utime, "self_sys": s.ru_stime,
                   "children_user": c.ru_utime, "children_sys": c.ru_stime}, f)
atexit.register(dump)
sys.argv[0] = "snakemake"
from snakemake.cli import main
main()
"""


@dataclass(frozen=True)
class DriverRun:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    cpu_self_s: float  # the snakemake process itself
    cpu_children_s: float  # everything it started and waited for (sbatch, squeue, local jobs)

    def summary(self) -> str:
        return (
            f"wall {self.wall_s:.1f} s, snakemake CPU {self.cpu_self_s:.2f} s, its children {self.cpu_children_s:.2f} s"
        )


def run_snakemake(
    args: list[str], cwd: Path, *, timeout_s: float = 600, env: dict[str, str] | None = None
) -> DriverRun:
    cwd = Path(cwd)
    usage_file = cwd / ".driver-rusage.json"
    usage_file.unlink(missing_ok=True)
    out_path, err_path = cwd / ".driver-stdout.log", cwd / ".driver-stderr.log"
    start = time.monotonic()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        process = subprocess.Popen(
            [sys.executable, "-c", _WRAPPER, str(usage_file), *args],
            cwd=cwd,
            stdout=out,
            stderr=err,
            env=env if env is not None else dict(os.environ),
        )
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            # SIGTERM is not enough: a driver that lost track of its jobs ignores it (see docs/cluster.md).
            process.kill()
            process.wait()
            raise AssertionError(
                f"snakemake did not finish within {timeout_s:.0f} s; stderr tail:\n" + err_path.read_text()[-4000:]
            ) from None
    wall = time.monotonic() - start
    usage = json.loads(usage_file.read_text()) if usage_file.exists() else None
    if usage is None:  # killed before atexit: fall back to nothing rather than guess
        usage = {"self_user": float("nan"), "self_sys": 0.0, "children_user": float("nan"), "children_sys": 0.0}
    return DriverRun(
        returncode=returncode,
        stdout=out_path.read_text(),
        stderr=err_path.read_text(),
        wall_s=wall,
        cpu_self_s=usage["self_user"] + usage["self_sys"],
        cpu_children_s=usage["children_user"] + usage["children_sys"],
    )
