"""What the snakemake driver costs while it drives the smoke workflow through SLURM, per setting.

    python -m perf.measure_slurm_driver [--repeat N] [--waiting]   (root; starts its own cluster)

Prints one row per configuration: wall time, CPU of the snakemake process itself, CPU of what it
started (sbatch, squeue). "plugin defaults" sets only what the run cannot do without
(--slurm-status-command squeue: without slurmdbd, the default sacct never answers).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from tests.conftest import REPO
from tests.workflow.driver import DriverRun, run_snakemake
from tests.workflow.slurm import single_node_slurm
from tests.workflow.test_slurm_smoke import SMOKE_SNAKEFILE

PROFILE = ["--profile", str(REPO / "profiles" / "slurm")]
GROUPED = ["--groups", "part=small", "--group-components", "small=2"]
CONFIGURATIONS: dict[str, list[str]] = {
    "plugin defaults (+ squeue)": ["--executor", "slurm", "--jobs", "8", "--slurm-status-command", "squeue"],
    "profiles/slurm": PROFILE,
    "profiles/slurm, init 40 s": [*PROFILE, "--slurm-init-seconds-before-status-checks", "40"],
    "profiles/slurm, scheduler ilp": [*PROFILE, "--scheduler", "ilp"],
    "profiles/slurm + group part": [*PROFILE, *GROUPED],
}


# One job that waits: what the driver costs per minute of doing nothing but watching.
WAIT_SNAKEFILE = """
rule wait:
    output: "waited.txt"
    resources: mem_mb=100, runtime=10
    shell: "sleep {config[seconds]} && echo $SLURM_JOB_ID > {output}"
"""
WAIT_SECONDS = 180
WAITING: dict[str, list[str]] = {
    f"plugin defaults (+ squeue), {WAIT_SECONDS} s job": [*CONFIGURATIONS["plugin defaults (+ squeue)"]],
    f"profiles/slurm, {WAIT_SECONDS} s job": PROFILE,
}


def measure(args: list[str], root: Path, snakefile: str = SMOKE_SNAKEFILE) -> DriverRun:
    workdir = Path(tempfile.mkdtemp(dir=root))
    (workdir / "Snakefile").write_text(snakefile)
    run = run_snakemake([*args, "--snakefile", "Snakefile"], workdir, timeout_s=600)
    if run.returncode != 0:
        raise SystemExit(f"{args} failed:\n{run.stderr[-4000:]}")
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--waiting", action="store_true", help=f"measure one {WAIT_SECONDS} s job instead")
    options = parser.parse_args()
    repeat = options.repeat
    configurations = WAITING if options.waiting else CONFIGURATIONS
    snakefile = WAIT_SNAKEFILE if options.waiting else SMOKE_SNAKEFILE
    extra = ["--config", f"seconds={WAIT_SECONDS}"] if options.waiting else []
    with tempfile.TemporaryDirectory(prefix="slurm-measure-") as tmp, single_node_slurm(Path(tmp) / "cluster"):
        print(f"{'configuration':40} {'wall s':>7} {'driver CPU s':>13} {'children CPU s':>15}")
        for name, args in configurations.items():
            runs = [measure([*args, *extra], Path(tmp), snakefile) for _ in range(repeat)]
            print(
                f"{name:40} {statistics.median(r.wall_s for r in runs):7.1f} "
                f"{statistics.median(r.cpu_self_s for r in runs):13.2f} "
                f"{statistics.median(r.cpu_children_s for r in runs):15.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
