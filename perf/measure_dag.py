"""Time and size Snakemake's DAG building (``snakemake -n``) for a config, and list the jobs it plans.

Each measurement runs ``snakemake -n --quiet rules`` in a child process in a work directory of its own (an
empty ``results/``, so every job of the config is planned) and reads the child's own resource usage
(``os.wait4``): wall time, CPU time (user + system) and peak RSS. The job count per rule is Snakemake's
"Job stats" table. Options:

- ``--dump-jobs FILE``: every planned job as one JSON line (rule, wildcards, input, output, params, resources),
  sorted: two dumps of the same config before and after a change must be identical (``diff``).
- ``--profile FILE``: the run under cProfile (``python -m pstats FILE``); slower, for finding the hot spots.
- ``--repeat N``: N runs, the figures of each and the median.

Usage (from the repository root, the venv active, ``PYTHONPATH=src:.``)::

    python -m tests.fixtures posir-config --root /tmp/posir-synth05 --out /tmp/dag/posir.yaml
    python perf/measure_dag.py --workdir /tmp/dag/posir --configfile /tmp/dag/posir.yaml
    python perf/measure_dag.py --workdir /tmp/dag/default --dump-jobs /tmp/dag/default.jobs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: Run in the child: Snakemake's command line, with every job the dry-run executor prints written to a file.
_DUMP = r"""
import atexit, json, sys
from snakemake.executors import dryrun

path, jobs = sys.argv.pop(1), []
printjob = dryrun.Executor.printjob

def values(named):
    return {"positional": [str(v) for v in named], "named": {k: named[k] for k in named.keys()}}

def record(self, job):
    jobs.append(json.dumps({
        "rule": job.rule.name, "wildcards": dict(job.wildcards_dict), "input": sorted(map(str, job.input)),
        "output": sorted(map(str, job.output)), "log": sorted(map(str, job.log)), "params": values(job.params),
        "resources": {k: v for k, v in job.resources.items() if k not in ("tmpdir",)}, "threads": job.threads,
    }, sort_keys=True, default=repr))
    return printjob(self, job)

dryrun.Executor.printjob = record
atexit.register(lambda: open(path, "w").write("".join(sorted(j + "\n" for j in jobs))))
from snakemake.cli import main
sys.argv[0] = "snakemake"
main()
"""


@dataclass
class Measurement:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    returncode: int
    jobs: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.jobs.get("total", 0)


def job_stats(output: str) -> dict[str, int]:
    """Snakemake's "Job stats" table (the last one printed): rule -> count, and 'total'."""
    tables = re.findall(r"Job stats:\njob\s+count\n[- ]+\n((?:\S+\s+\d+\n)+)", output)
    if not tables:
        return {}
    return {name: int(count) for name, count in (line.split() for line in tables[-1].splitlines())}


def run_child(command: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[Measurement, str]:
    """Run ``command``, returning its own wall time, CPU time and peak RSS (not this process's)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    measurement = Measurement(
        wall_s=round(wall, 2),
        cpu_s=round(usage.ru_utime + usage.ru_stime, 2),
        peak_rss_mb=round(usage.ru_maxrss / 1024, 1),
        returncode=process.returncode,
        jobs=job_stats(output),
    )
    return measurement, output


def prepare(workdir: Path, configfiles: Sequence[Path], fresh: bool, repo: Path = REPO) -> None:
    """A work directory with config.yaml and no results/ (so the whole DAG is planned)."""
    workdir.mkdir(parents=True, exist_ok=True)
    if fresh:
        for name in ("results", ".snakemake"):
            shutil.rmtree(workdir / name, ignore_errors=True)
    shutil.copy(repo / "config.yaml", workdir / "config.yaml")
    for configfile in configfiles:
        if not configfile.is_file():
            raise SystemExit(f"{configfile}: no such config file")


def snakemake_args(workdir: Path, configfiles: Sequence[Path], extra: Sequence[str], repo: Path = REPO) -> list[str]:
    args = ["--snakefile", str(repo / "Snakefile"), "--directory", str(workdir), "-n", "--quiet", "rules"]
    if configfiles:
        args += ["--configfile", *map(str, configfiles)]
    return [*args, *extra]


def child_env(repo: Path = REPO) -> dict[str, str]:
    """The environment, with ``repo``'s posir package first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(repo / "src"), str(repo)])
    return env


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, required=True, help="work directory (its results/ is removed)")
    parser.add_argument("--configfile", type=Path, nargs="*", default=[], help="merged over config.yaml")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--dump-jobs", type=Path, help="write every planned job as a sorted JSON line")
    parser.add_argument("--profile", type=Path, help="run under cProfile, writing the stats here")
    parser.add_argument("--json", type=Path, help="write the measurements here")
    parser.add_argument(
        "--repo",
        type=Path,
        default=REPO,
        help="the checkout whose Snakefile and src/ run (e.g. an older commit's, for before/after)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory's results/ and .snakemake/")
    parser.add_argument("extra", nargs="*", help="more snakemake arguments (after --)")
    args = parser.parse_args(argv)

    workdir = args.workdir.resolve()
    configfiles = [c.resolve() for c in args.configfile]
    repo = args.repo.resolve()
    env = child_env(repo)
    sm_args = snakemake_args(workdir, configfiles, args.extra, repo)
    if args.dump_jobs:
        command = [sys.executable, "-c", _DUMP, str(args.dump_jobs.resolve()), *sm_args]
    elif args.profile:
        command = [sys.executable, "-m", "cProfile", "-o", str(args.profile.resolve()), "-m", "snakemake", *sm_args]
    else:
        command = [sys.executable, "-m", "snakemake", *sm_args]

    runs = []
    for _ in range(args.repeat):
        prepare(workdir, configfiles, fresh=not args.keep, repo=repo)
        measurement, output = run_child(command, workdir, env)
        if measurement.returncode != 0:
            print(output[-4000:], file=sys.stderr)
            return measurement.returncode
        runs.append(measurement)
        print(
            f"wall {measurement.wall_s:.1f} s, CPU {measurement.cpu_s:.1f} s, peak RSS "
            f"{measurement.peak_rss_mb:.0f} MB, {measurement.total} jobs",
            file=sys.stderr,
        )
    summary = {
        "command": " ".join(["snakemake", *sm_args]),
        "runs": [asdict(r) for r in runs],
        "median": {
            "wall_s": statistics.median(r.wall_s for r in runs),
            "cpu_s": statistics.median(r.cpu_s for r in runs),
            "peak_rss_mb": statistics.median(r.peak_rss_mb for r in runs),
        },
        "jobs": runs[-1].jobs,
    }
    for rule, count in runs[-1].jobs.items():
        print(f"  {rule:<32} {count:>7}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
