"""Where a test run's time goes: each test's start, end and CPU seconds on its worker, and the modules' totals.

Set ``POSIR_TEST_TIMELINE=DIR`` for a run (``make test`` or any pytest command): every process of it appends one JSON
line per test to ``DIR/<worker>.jsonl`` (tests/conftest.py). Then

    python -m perf.suite_timeline DIR

prints each worker's modules in the order they ran, the idle tail of each worker, and the lines of
``MODULE_SECONDS`` (tests/conftest.py) that the scheduler reads to start long modules first. CPU seconds are the
worker's own and its finished children's (Snakemake runs); a server's or SLURM's work for a test is not in them,
which is why the scheduler reads a module's seconds on its worker instead.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections import defaultdict
from pathlib import Path

ENVIRONMENT = "POSIR_TEST_TIMELINE"
#: modules shorter than this are left to run in pytest's order, after the listed ones
LISTED_FROM_S = 15.0


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Recorder:
    """Appends a line per test (its setup, call and teardown together) to this worker's file."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.file = (folder / f"{self.worker}.jsonl").open("a", buffering=1, encoding="utf-8")

    def start(self) -> tuple[float, float]:
        return time.time(), _cpu_seconds()

    def end(self, nodeid: str, started: tuple[float, float]) -> None:
        wall, cpu = started
        line = {"worker": self.worker, "test": nodeid, "start": wall, "end": time.time(), "cpu": _cpu_seconds() - cpu}
        self.file.write(json.dumps(line) + "\n")


def recorder_from_environment() -> Recorder | None:
    folder = os.environ.get(ENVIRONMENT)
    return Recorder(Path(folder)) if folder else None


def summary(folder: Path) -> str:
    lines = [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.open(encoding="utf-8")]
    if not lines:
        raise SystemExit(f"{folder}: no *.jsonl lines; run the tests with {ENVIRONMENT}={folder} first")
    origin = min(line["start"] for line in lines)
    modules: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: {"start": 1e30, "end": 0.0, "cpu": 0.0})
    for line in lines:
        module = modules[(line["worker"], line["test"].split("::", 1)[0])]
        module["start"] = min(module["start"], line["start"] - origin)
        module["end"] = max(module["end"], line["end"] - origin)
        module["cpu"] += line["cpu"]
    last = max(module["end"] for module in modules.values())
    out = [f"the run's tests took {last:.0f} s from the first test's start"]
    for worker in sorted({w for w, _ in modules}):
        own = sorted(((m, t) for (w, m), t in modules.items() if w == worker), key=lambda mt: mt[1]["start"])
        out.append(f"{worker}: idle for the last {last - max(t['end'] for _, t in own):.0f} s")
        out += [
            f"  {t['start']:6.0f} s  {t['end'] - t['start']:5.0f} s on the worker  {t['cpu']:5.0f} CPU s  {m}"
            for m, t in own
            if t["end"] - t["start"] >= LISTED_FROM_S
        ]
    out.append("MODULE_SECONDS (tests/conftest.py):")
    seconds = sorted(((m, t["end"] - t["start"]) for (_, m), t in modules.items()), key=lambda ms: -ms[1])
    out += [f'    "{m.removeprefix("tests/")}": {s:.0f},' for m, s in seconds if s >= LISTED_FROM_S]
    return "\n".join(out)
