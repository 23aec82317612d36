"""How many SLURM jobs a run submits, with and without the SLURM profile's groups (docs/cluster.md).

A dry run, no cluster needed:

    posir slurm-jobs [--configfile FILE] [--profile profiles/slurm]

A dry run with the profile prints each group job as "Group job <group>" followed by its members
(indented); every other job as "rule <name>:". Without groups each job but the local rules (those
marked `localrule: True`) is one SLURM job; with them, each group job is one.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

#: The checkout this package is installed from (editable): its Snakefile, rules/ and profiles/.
CHECKOUT = Path(__file__).resolve().parents[3]


def local_rules(workflow: Path) -> set[str]:
    """Rules marked `localrule: True` (a dry run does not say which run on the driver's machine)."""
    found = set()
    for path in [workflow / "Snakefile", *sorted((workflow / "rules").glob("*.smk"))]:
        for block in re.split(r"\n(?=rule \w+:)", path.read_text()):
            name = re.match(r"rule (\w+):", block)
            if name and re.search(r"^\s+localrule: True", block, re.M):
                found.add(name.group(1))
    return found


def count(text: str, local: set[str]) -> tuple[Counter, Counter, dict[str, Counter]]:
    """(jobs per rule, SLURM jobs per rule or group, rule jobs inside each group) from a dry run's output."""
    jobs: Counter = Counter()
    slurm: Counter = Counter()
    members: dict[str, Counter] = {}
    group = None
    for line in text.splitlines():
        header = re.match(r"^\[.*\] Group job (\w+) ", line)
        if header:
            group = header.group(1)
            slurm[f"group {group}"] += 1
            members.setdefault(group, Counter())
            continue
        if re.match(r"^\S", line) and not re.match(r"^(local)?rule \w+:", line):
            group = None if line.startswith("[") else group  # an unindented timestamp starts a job outside groups
        job = re.match(r"^(\s*)(?:local)?rule (\w+):", line)
        if not job:
            continue
        rule = job.group(2)
        jobs[rule] += 1
        if job.group(1) and group is not None:
            members[group][rule] += 1
        elif rule not in local:
            slurm[rule] += 1
    return jobs, slurm, members


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workflow", type=Path, default=CHECKOUT, help="the checkout holding the Snakefile")
    parser.add_argument("--profile", type=Path, help="default: the checkout's profiles/slurm")
    parser.add_argument("--configfile", type=Path, help="instead of the workflow's config.yaml")
    args = parser.parse_args(argv)
    workflow = args.workflow.resolve()
    if not (workflow / "Snakefile").is_file():
        parser.error(f"no Snakefile in {workflow}: give the workflow's checkout with --workflow")
    profile = (args.profile or workflow / "profiles" / "slurm").resolve()
    command = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--profile", str(profile)]
    if args.configfile:
        command += ["--configfile", str(args.configfile.resolve())]
    done = subprocess.run(command, cwd=workflow, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    local = local_rules(workflow)
    jobs, slurm, members = count(done.stdout + done.stderr, local)
    remote = sum(n for rule, n in jobs.items() if rule not in local)
    print(
        f"jobs in the dry run: {jobs.total()} ({jobs.total() - remote} local: "
        f"{', '.join(sorted(r for r in jobs if r in local))})"
    )
    print(f"SLURM jobs without groups: {remote}")
    print(f"SLURM jobs with the profile's groups: {slurm.total()}")
    for name, n in sorted(slurm.items(), key=lambda t: -t[1]):
        inside = members.get(name.removeprefix("group "), Counter()) if name.startswith("group ") else None
        held = f" holding {', '.join(f'{k} {r}' for r, k in inside.items())} jobs" if inside else ""
        print(f"  {name}: {n}{held}")
    return 0
