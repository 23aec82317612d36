"""What each rule's script pays before its work starts: a fresh Python importing the script's own imports.

Every Snakemake job is a new process, so the imports of ``scripts/<rule>.py`` (posir's modules, pandas, pydantic
building the config sections) are paid once per job. This times them per script, median of ``--repeats`` fresh
processes, and, given a dry run's job list, weighs each by the rule's jobs in that plan. Run it in two checkouts
one after the other on an idle machine to compare:

    snakemake -n --quiet rules > /tmp/plan.txt
    python perf/script_startup.py --repeats 7 --plan /tmp/plan.txt
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def script_imports(script: Path) -> str:
    """The module-level import statements of a script, as one line of Python."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    return "; ".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def startup_s(imports: str, repeats: int) -> float:
    """Median wall time of a fresh interpreter running ``imports``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", imports], check=True, cwd=REPO)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def jobs_per_rule(plan: Path) -> dict[str, int]:
    """Jobs per rule from ``snakemake -n --quiet rules`` output (its "job stats" table)."""
    counts = {}
    for line in plan.read_text().splitlines():
        match = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if match and match[1] != "total":
            counts[match[1]] = int(match[2])
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plan", type=Path, help="a dry run's output, to weigh each script by its jobs")
    args = parser.parse_args()
    jobs = jobs_per_rule(args.plan) if args.plan else {}
    print(f"{sys.executable}, median of {args.repeats} fresh processes per script\n")
    print("| script | start-up s | jobs in the plan | job-seconds |\n|---|---:|---:|---:|")
    total_jobs = total_s = 0.0
    for script in sorted((REPO / "scripts").glob("*.py")):
        seconds = startup_s(script_imports(script), args.repeats)
        n = jobs.get(script.stem, 0)
        total_jobs, total_s = total_jobs + n, total_s + n * seconds
        print(f"| {script.stem} | {seconds:.2f} | {n} | {n * seconds:.0f} |")
    if jobs:
        per_job = total_s / max(total_jobs, 1)
        print(f"\n{total_jobs:.0f} jobs, {total_s:.0f} job-seconds of start-up ({per_job:.2f} s a job)")


if __name__ == "__main__":
    main()
