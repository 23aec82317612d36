"""Where a finished run's time went: jobs, wall seconds and peak memory per rule, the ten costliest rules.

Reads a run directory after ``make run`` (or any snakemake run): the ``benchmark:`` files and Snakemake's
metadata (``perf.resources_from_benchmarks``), and optionally the sampler log ``perf/run_whole.sh`` writes
(``<epoch> <used MB> <load>`` every 10 s) for the machine's peak memory. The share of job time spent before
a job's own work starts (``--startup-s``: Python, the script preamble, imports; measured apart) estimates the
overhead jobs add beyond their work.

    python -m perf.run_profile /tmp/run1 --wall-s 6900 --memory-log /tmp/run1.mem --startup-s 2.4
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from perf.resources_from_benchmarks import benchmark_measurements, metadata_measurements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the run directory (holding results/ and .snakemake/)")
    parser.add_argument("--wall-s", type=float, required=True, help="the whole run's wall time")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--memory-log", type=Path)
    parser.add_argument("--startup-s", type=float, help="one job's start-up before its work, measured apart")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()

    measured = benchmark_measurements(args.run)
    measured += metadata_measurements(args.run, {m.rule for m in measured})
    walls: dict[str, list[float]] = defaultdict(list)
    rss: dict[str, float] = defaultdict(float)
    for job in measured:
        walls[job.rule].append(job.wall_s)
        rss[job.rule] = max(rss[job.rule], job.max_rss_mb or 0.0)
    total = sum(sum(w) for w in walls.values())
    print(f"{len(measured)} jobs, {total:.0f} job-seconds over {args.wall_s:.0f} s wall on {args.cores} cores")
    print(f"cores busy with jobs: {total / (args.wall_s * args.cores):.0%}")
    if args.startup_s:
        overhead = len(measured) * args.startup_s / args.cores
        print(f"start-up overhead: {len(measured)} jobs x {args.startup_s} s / {args.cores} cores = {overhead:.0f} s")
        print(f"  = {overhead / args.wall_s:.1%} of the wall time")
    if args.memory_log and args.memory_log.is_file():
        samples = [line.split() for line in args.memory_log.read_text().splitlines() if line.strip()]
        print(f"peak memory in use on the machine: {max(int(s[1]) for s in samples)} MB ({len(samples)} samples)")
    print("\n| rule | jobs | job-seconds | share | longest job (s) | peak RSS (MB) |\n|---|---:|---:|---:|---:|---:|")
    ranked = sorted(walls, key=lambda r: -sum(walls[r]))
    for rule in ranked[: args.top]:
        seconds = sum(walls[rule])
        peak = f"{rss[rule]:.0f}" if rss[rule] else "-"
        share, longest = seconds / total, max(walls[rule])
        print(f"| `{rule}` | {len(walls[rule])} | {seconds:.0f} | {share:.0%} | {longest:.0f} | {peak} |")
    rest = ranked[args.top :]
    if rest:
        seconds = sum(sum(walls[r]) for r in rest)
        jobs = sum(len(walls[r]) for r in rest)
        print(f"| {len(rest)} other rules | {jobs} | {seconds:.0f} | {seconds / total:.0%} | | |")


if __name__ == "__main__":
    main()
