"""What the snakemake driver itself costs to schedule and run a config's jobs, with their work taken out.

Two ways of taking the work out, both on the real Snakefile, rules, input functions and config:

- ``--mode touch``: ``snakemake --touch``: every job goes through the scheduler (job selection, resource
  evaluation, finishing, DAG updates) but nothing is started. Measures DAG build + scheduling at any size.
- ``--mode stub``: a copy of the workflow whose ``scripts/*.py`` only create their outputs: every job is
  started as in a real run (Snakemake's ``script:`` preamble with the pickled job, a Python child, the
  ``benchmark:`` sampler, metadata written on success). Measures the driver's per-job execution overhead;
  the children's own CPU (Python start-up, the preamble's imports) is reported apart.

The CPU of the snakemake process itself (RUSAGE_SELF, written at its exit; tests/workflow/driver.py) is
kept apart from its children's. Usage (venv active, ``PYTHONPATH=src:.``)::

    python perf/measure_scheduler.py --mode touch --configfile /tmp/dag/posir/posir.yaml --workdir /tmp/sched/a
    python perf/measure_scheduler.py --mode stub --configfile /tmp/dag/p2/posir.yaml --workdir /tmp/sched/b \\
        -- --cores 1 --scheduler greedy
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.workflow.driver import run_snakemake

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
#: What a stubbed rule script does: create its outputs and logs, nothing else.
STUB = """from pathlib import Path

for path in [*snakemake.output, *snakemake.log]:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).touch()
"""
WORKFLOW_PARTS = ("Snakefile", "rules", "schemas", "envs", "report", "prompts", "scripts")


def stub_workflow(target: Path, repo: Path = REPO) -> Path:
    """A copy of the workflow whose rule scripts only create their outputs; returns its Snakefile."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for part in WORKFLOW_PARTS:
        source = repo / part
        if source.is_dir():
            shutil.copytree(source, target / part)
        else:
            shutil.copy(source, target / part)
    for script in (target / "scripts").glob("*.py"):
        script.write_text(STUB, encoding="utf-8")
    return target / "Snakefile"


def finished_jobs(log: str) -> int:
    done = re.findall(r"(\d+) of (\d+) steps \(100%\) done", log)
    return int(done[-1][0]) if done else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("touch", "stub"), required=True)
    parser.add_argument("--workdir", type=Path, required=True, help="emptied first")
    parser.add_argument("--configfile", type=Path, nargs="*", default=[], help="merged over config.yaml")
    parser.add_argument("--label", default="")
    parser.add_argument("--json", type=Path, help="append the result as one JSON line")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("extra", nargs="*", help="snakemake options after --, e.g. --cores 2 --scheduler ilp")
    args = parser.parse_args(argv)

    workdir = args.workdir.resolve()
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    snakefile = stub_workflow(workdir / "workflow") if args.mode == "stub" else REPO / "Snakefile"
    command = ["--snakefile", str(snakefile), "--directory", str(workdir), *args.extra]
    if args.configfile:
        command += ["--configfile", *(str(c.resolve()) for c in args.configfile)]
    if args.mode == "touch":
        command.append("--touch")
    run = run_snakemake(command, workdir, timeout_s=args.timeout)
    jobs = finished_jobs(run.stderr + run.stdout)
    result = {
        "label": args.label,
        "mode": args.mode,
        "options": " ".join(args.extra),
        "returncode": run.returncode,
        "jobs": jobs,
        "wall_s": round(run.wall_s, 1),
        "driver_cpu_s": round(run.cpu_self_s, 2),
        "children_cpu_s": round(run.cpu_children_s, 2),
        "driver_ms_per_job": round(1000 * run.cpu_self_s / jobs, 1) if jobs else None,
    }
    print(json.dumps(result))
    if args.json:
        with args.json.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(result) + "\n")
    if run.returncode != 0:
        print(run.stderr[-3000:], file=sys.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
