"""What job order does to a run's wall time: a finished run's jobs replayed on N cores under the plan's priorities.

A finished run records, per job, its inputs, outputs and start and end (``.snakemake/metadata``); those give
the job graph and every job's measured length. A dry run of the same config in an empty directory gives what
Snakemake schedules by: each job's ``priority`` (and ``threads``). The replay starts ready jobs greedily,
highest priority first and, among equals, in a random order (Snakemake's choice among equals knows nothing of
a job's length), on ``--cores`` cores, once per seed; and the same without priorities. It also prints the two
bounds no order beats: all job-seconds over the cores, and the longest chain of dependent jobs.

An estimate, not a measurement: jobs are as long as they were in the run (a job that shared the machine with
other work is as slow as it was), start-up and the driver's gaps are in the jobs' lengths, and memory never
holds a job back.

    snakemake -n --cores 2 --directory EMPTY_DIR_WITH_CONFIG > plan.txt
    python -m perf.simulate_schedule /tmp/run1 plan.txt --cores 2 --seeds 20
"""

from __future__ import annotations

import argparse
import heapq
import random
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

from perf.resources_from_benchmarks import recorded_jobs


@dataclass
class Job:
    rule: str
    outputs: set[str]
    inputs: set[str]
    seconds: float
    priority: float = 0.0
    threads: int = 1
    needs: set[int] = field(default_factory=set)


def run_jobs(run: Path) -> list[Job]:
    """The jobs of a finished run, each as long as it ran."""
    return [Job(j.rule, set(j.outputs), j.inputs, j.end - j.start) for j in recorded_jobs(run)]


def planned_schedule(dry_run: str) -> dict[str, tuple[float, int]]:
    """Output path -> (priority, threads) of every job a dry run prints (no line means 0 and 1)."""
    found = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", dry_run):
        outputs = re.search(r"\n\s+output: (.*)", block)
        if not outputs:
            continue
        priority = re.search(r"\n\s+priority: (\S+)", block)
        threads = re.search(r"\n\s+threads: (\d+)", block)
        value = (float(priority.group(1)) if priority else 0.0, int(threads.group(1)) if threads else 1)
        for output in outputs.group(1).split(", "):
            found[output.strip()] = value
    return found


def link(jobs: list[Job], plan: dict[str, tuple[float, int]]) -> int:
    """Dependencies from outputs to inputs, priorities and threads from the plan; returns jobs the plan lacks."""
    producer = {output: index for index, job in enumerate(jobs) for output in job.outputs}
    unplanned = 0
    for index, job in enumerate(jobs):
        job.needs = {producer[i] for i in job.inputs if i in producer and producer[i] != index}
        known = [plan[o] for o in job.outputs if o in plan]
        if known:
            job.priority, job.threads = known[0]
        else:
            unplanned += 1
    return unplanned


def replay(jobs: list[Job], cores: int, seed: int, use_priority: bool = True) -> float:
    """Greedy list scheduling: whenever cores are free, start the ready job of highest priority that fits."""
    order = random.Random(seed)
    tiebreak = [order.random() for _ in jobs]
    waiting = [len(job.needs) for job in jobs]
    dependents: list[list[int]] = [[] for _ in jobs]
    for index, job in enumerate(jobs):
        for need in job.needs:
            dependents[need].append(index)
    ready = [i for i, n in enumerate(waiting) if n == 0]
    running: list[tuple[float, int]] = []
    now, free = 0.0, cores
    while ready or running:
        ready.sort(key=lambda i: (-(jobs[i].priority if use_priority else 0.0), tiebreak[i]))
        started = True
        while started:
            started = False
            for position, index in enumerate(ready):
                threads = min(jobs[index].threads, cores)
                if threads <= free:
                    free -= threads
                    heapq.heappush(running, (now + jobs[index].seconds, index))
                    ready.pop(position)
                    started = True
                    break
        now, done = heapq.heappop(running)
        free += min(jobs[done].threads, cores)
        for after in dependents[done]:
            waiting[after] -= 1
            if waiting[after] == 0:
                ready.append(after)
    return now


def critical_path(jobs: list[Job]) -> tuple[float, list[int]]:
    """The longest chain of dependent jobs (seconds) and its jobs, first to last."""
    longest: dict[int, tuple[float, int | None]] = {}

    def visit(index: int) -> tuple[float, int | None]:
        if index not in longest:
            before = max(((visit(n)[0], n) for n in jobs[index].needs), default=(0.0, None))
            longest[index] = (before[0] + jobs[index].seconds, before[1])
        return longest[index]

    for index in range(len(jobs)):
        visit(index)
    end = max(longest, key=lambda i: longest[i][0])
    chain, at = [], end
    while at is not None:
        chain.append(at)
        at = longest[at][1]
    return longest[end][0], chain[::-1]


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a finished run's directory (holding .snakemake/metadata)")
    parser.add_argument("plan", type=Path, help="the stdout of `snakemake -n` for the same config, empty results/")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()

    sys.setrecursionlimit(10_000)
    jobs = run_jobs(args.run)
    unplanned = link(jobs, planned_schedule(args.plan.read_text()))
    work = sum(job.seconds * min(job.threads, args.cores) for job in jobs)
    path_s, chain = critical_path(jobs)
    print(f"{len(jobs)} jobs ({unplanned} not in the plan: priority 0), {work:.0f} core-seconds")
    print(f"bounds: work / {args.cores} cores = {minutes(work / args.cores)}; longest chain = {minutes(path_s)}")
    print("  longest chain: " + " -> ".join(f"{jobs[i].rule} ({jobs[i].seconds:.0f} s)" for i in chain))
    for label, use in (("without priorities", False), ("with the plan's priorities", True)):
        spans = [replay(jobs, args.cores, seed, use) for seed in range(args.seeds)]
        print(
            f"{label}: median {minutes(statistics.median(spans))}, "
            f"best {minutes(min(spans))}, worst {minutes(max(spans))} ({args.seeds} random orders among equals)"
        )


if __name__ == "__main__":
    main()
