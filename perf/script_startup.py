"""What each rule's job pays before its work starts, in CPU seconds, in this checkout and (``--other DIR``) another
one side by side.

Every Snakemake job is a new process: Python starts, the script runner's preamble unpickles the job's ``snakemake``
object (importing Snakemake's io classes), the script imports its step (posir's modules, pandas, pydantic building
the config sections), ``XJob.of(snakemake)`` types the job, and the step imports what it imports lazily (a model
backend: sentence-transformers is about 7 CPU-seconds of torch, scikit-learn and transformers). Two measures:

``imports``  a fresh Python running the module-level imports of each ``scripts/<rule>.py`` (every script).
``jobs``     real jobs: the scripts Snakemake wrote for a run kept with ``--skip-script-cleanup``
             (``<workdir>/.snakemake/scripts/tmp*.<rule>.py``: the preamble and the script), each run again in
             that workdir with the preamble as Snakemake wrote it and the script of each checkout. A job's time is
             split into Python's own start, the ``snakemake`` object, the script's imports, ``XJob.of``, the
             imports its work makes (lazily, inside functions) and the rest of its work; start-up is all but the
             last. The hashes of the job's output files are compared between the checkouts (a job whose outputs
             hold a time differs without a cause).

Both run the two checkouts' children one after the other, alternating which goes first, with the same interpreter
(``PYTHONPATH`` picks the checkout's ``src/``): on a loaded machine both see the same load, and CPU seconds (user +
system of the child) move less with it than wall time. Medians of ``--repeats``. ``--plan`` (a dry run's output,
or the "Job stats" table at the head of a run's log) weighs each rule by its jobs. ``--importtime`` adds, per job,
the modules that cost most (``python -X importtime``, wall microseconds, once).

    snakemake --configfile tests/configs/reports_off.yaml tests/configs/rerank.yaml --directory /tmp/capture \\
        --cores 2 --skip-script-cleanup
    python perf/script_startup.py jobs /tmp/capture --other /work/baseline --repeats 5 --plan /tmp/plan.txt
    python perf/script_startup.py imports --other /work/baseline --repeats 5 --plan /tmp/plan.txt
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PREAMBLE_END = "######## snakemake preamble end #########\n"
PHASES = ("python", "snakemake object", "script imports", "XJob.of", "imports in the work", "work")
STARTUP = PHASES[:-1]
#: Libraries a job may import without using them, each a large part of a start: which ones a job ended up with.
HEAVY = ("pandas", "scipy.stats", "matplotlib", "sklearn", "torch", "sentence_transformers", "openai", "posir.config")

# Runs in the measured child: as few imports of its own as possible (sys, time, builtins, importlib and json are
# loaded by Python's start or are cheap), so that what it measures is the job's.
CHILD = r"""
import builtins, importlib, json, sys, time
cpu = time.process_time
python = cpu()
preamble_file, imports_file, rest_file, script, out_file = sys.argv[1:6]
state = {"depth": 0, "imports": 0.0, "of": 0.0, "of_imports": 0.0}

def timed(load):
    def wrapper(*args, **kwargs):
        if state["depth"]:
            return load(*args, **kwargs)
        state["depth"], start = 1, cpu()
        try:
            return load(*args, **kwargs)
        finally:
            state["depth"] = 0
            state["imports"] += cpu() - start
    return wrapper

def run(path, namespace):
    with open(path, encoding="utf-8") as handle:
        exec(compile(handle.read(), script, "exec"), namespace)

namespace = {"__name__": "__main__", "__file__": script, "__builtins__": builtins}
marks = {"python": python}
start = cpu()
if preamble_file != "-":
    run(preamble_file, namespace)
marks["snakemake object"] = cpu() - start
start = cpu()
run(imports_file, namespace)
marks["script imports"] = cpu() - start
for name, module in list(sys.modules.items()):
    job = getattr(module, "Job", None) if name.startswith("posir") and name.endswith("jobs") else None
    if job is not None and "of" in vars(job):
        of = vars(job)["of"].__func__

        def typed(cls, snakemake, of=of):
            start, imports = cpu(), state["imports"]
            try:
                return of(cls, snakemake)
            finally:
                state["of"] += cpu() - start
                state["of_imports"] += state["imports"] - imports

        job.of = classmethod(typed)
builtins.__import__ = timed(builtins.__import__)
importlib.import_module = timed(importlib.import_module)
start = cpu()
if rest_file != "-":
    run(rest_file, namespace)
work = cpu() - start
marks["XJob.of"] = state["of"]
marks["imports in the work"] = state["imports"] - state["of_imports"]
marks["work"] = work - state["of"] - marks["imports in the work"]
outputs = {}
snakemake = namespace.get("snakemake")
for path in (getattr(snakemake, "output", None) or []):
    try:
        with open(path, "rb") as handle:
            outputs[str(path)] = __import__("hashlib").sha256(handle.read()).hexdigest()
    except OSError:
        pass
heavy = [m for m in HEAVY if m in sys.modules]
with open(out_file, "w") as handle:
    json.dump({"phases": marks, "outputs": outputs, "heavy": heavy}, handle)
"""


@dataclass(frozen=True)
class Checkout:
    """A work tree whose ``src/`` and ``scripts/`` a child runs."""

    root: Path

    @property
    def label(self) -> str:
        return "this" if self.root == REPO else str(self.root)

    def environment(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.root / "src")}


@dataclass(frozen=True)
class Job:
    """A job to start: the preamble Snakemake wrote for it (None: a bare script's imports), the rule, the workdir."""

    name: str
    rule: str
    preamble: str | None
    workdir: Path


def split_script(source: str) -> tuple[str, str]:
    """A script's module-level imports, and the rest of it."""
    tree = ast.parse(source)
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    rest = [node for node in tree.body if not isinstance(node, ast.Import | ast.ImportFrom)]
    return ast.unparse(ast.Module(imports, [])), ast.unparse(ast.Module(rest, []))


def captured_jobs(workdir: Path) -> list[Job]:
    """The jobs whose scripts Snakemake kept in ``workdir`` (``--skip-script-cleanup``), one per file."""
    jobs = []
    for path in sorted((workdir / ".snakemake" / "scripts").glob("tmp*.*.py")):
        text = path.read_text(encoding="utf-8")
        if PREAMBLE_END not in text:
            continue
        rule = path.name.split(".")[1]
        jobs.append(Job(path.name, rule, text.split(PREAMBLE_END)[0] + PREAMBLE_END, workdir))
    return jobs


def script_jobs() -> list[Job]:
    """Every script of this checkout, as a bare start: its imports only."""
    return [Job(p.stem, p.stem, None, REPO) for p in sorted((REPO / "scripts").glob("*.py"))]


def run_child(job: Job, checkout: Checkout, scratch: Path, importtime: bool = False) -> dict:
    """One fresh Python running ``job`` with ``checkout``'s code; its phases, its CPU seconds and output hashes."""
    script = checkout.root / "scripts" / f"{job.rule}.py"
    imports, rest = split_script(script.read_text(encoding="utf-8"))
    files = {}
    for name, text in (("preamble", job.preamble), ("imports", imports), ("rest", rest if job.preamble else None)):
        if text is None:
            files[name] = "-"
            continue
        files[name] = str(scratch / f"{name}.py")
        Path(files[name]).write_text(text, encoding="utf-8")
    out = scratch / "phases.json"
    command = [sys.executable, *(["-X", "importtime"] if importtime else []), "-c", f"HEAVY = {HEAVY!r}\n{CHILD}"]
    command += [files["preamble"], files["imports"], files["rest"], str(script), str(out)]
    child = subprocess.Popen(
        command,
        cwd=job.workdir,
        env=checkout.environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = child.stderr.read() if child.stderr else ""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{job.name} with {checkout.label} failed ({child.returncode}):\n{stderr[-3000:]}")
    measured = json.loads(out.read_text())
    measured["cpu_s"] = usage.ru_utime + usage.ru_stime
    measured["importtime"] = stderr if importtime else ""
    return measured


def costliest_imports(importtime: str, top: int) -> list[tuple[str, float]]:
    """The modules with the largest cumulative import time that no other module of the list imported."""
    rows = []
    for line in importtime.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if match:
            rows.append((len(match[3]) // 2, match[4], int(match[2]) / 1e6))
    top_level = [(name, seconds) for depth, name, seconds in rows if depth == 0]
    return sorted(top_level, key=lambda r: -r[1])[:top]


#: Rules made in a loop, one per part of the work (``analyse_runs_<benchmark>_<part>``), by the script they all run:
#: a captured job is named by its script.
LOOP_RULES = re.compile(r"^(analyse_runs)_\w+$")


def jobs_per_rule(plan: Path) -> dict[str, int]:
    """Jobs per rule from ``snakemake -n --quiet rules`` output or a run log's "Job stats" table (each table once:
    a dry run prints it twice)."""
    counts: dict[str, int] = defaultdict(int)
    seen = set()
    for line in plan.read_text().splitlines():
        match = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if match and match[1] != "total" and match[1] not in seen:
            seen.add(match[1])
            counts[LOOP_RULES.sub(r"\1", match[1])] += int(match[2])
    return dict(counts)


def measure(jobs: list[Job], checkouts: list[Checkout], repeats: int) -> dict[tuple[str, str], list[dict]]:
    """(job, checkout) -> the children's measurements; checkouts interleaved, the first alternating per repeat."""
    runs: dict[tuple[str, str], list[dict]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="script-startup-") as scratch:
        for repeat in range(repeats):
            for job in jobs:
                order = checkouts if repeat % 2 == 0 else checkouts[::-1]
                for checkout in order:
                    runs[(job.name, checkout.label)].append(run_child(job, checkout, Path(scratch)))
            print(f"repeat {repeat + 1} of {repeats} done", file=sys.stderr, flush=True)
    return runs


def median_phases(runs: list[dict]) -> dict[str, float]:
    phases = {phase: statistics.median(r["phases"][phase] for r in runs) for phase in PHASES}
    phases["start-up"] = statistics.median(sum(r["phases"][p] for p in STARTUP) for r in runs)
    phases["cpu_s"] = statistics.median(r["cpu_s"] for r in runs)
    return phases


def report(jobs: list[Job], checkouts: list[Checkout], runs: dict, plan: dict[str, int], importtime: bool) -> None:
    """Per job and checkout: the phases' median CPU seconds; per rule, start-up weighed by the plan's jobs."""
    shown = [p for p in PHASES if any(p != "work" or j.preamble for j in jobs)]
    print(f"{sys.executable}; CPU seconds (user + system), median of {len(next(iter(runs.values())))} per cell\n")
    print("| job | checkout | " + " | ".join(shown) + " | start-up | child CPU s | imported |")
    print("|---|---|" + "---:|" * (len(shown) + 2) + "---|")
    per_rule: dict[tuple[str, str], list[float]] = defaultdict(list)
    for job in jobs:
        for checkout in checkouts:
            phases = median_phases(runs[(job.name, checkout.label)])
            per_rule[(job.rule, checkout.label)].append(phases["start-up"])
            cells = " | ".join(f"{phases[p]:.2f}" for p in shown)
            heavy = ", ".join(runs[(job.name, checkout.label)][-1]["heavy"])
            totals = f"{phases['start-up']:.2f} | {phases['cpu_s']:.2f}"
            print(f"| {job.name} | {checkout.label} | {cells} | {totals} | {heavy} |")
    _compare_outputs(jobs, checkouts, runs)
    print("\n| rule | " + " | ".join(f"start-up s ({c.label})" for c in checkouts), end="")
    print(" | ratio | jobs in the plan |" if len(checkouts) == 2 else " | jobs in the plan |")
    print("|---|" + "---:|" * (len(checkouts) + (2 if len(checkouts) == 2 else 1)))
    totals = [0.0] * len(checkouts)
    counted = 0
    for rule in sorted({j.rule for j in jobs}):
        medians = [statistics.median(per_rule[(rule, c.label)]) for c in checkouts]
        n = plan.get(rule, 0)
        counted += n
        totals = [t + n * m for t, m in zip(totals, medians)]
        ratio = f" | {medians[0] / medians[1]:.2f}" if len(checkouts) == 2 and medians[1] else ""
        print(f"| {rule} | " + " | ".join(f"{m:.2f}" for m in medians) + f"{ratio} | {n} |")
    if counted:
        spent = ", ".join(f"{c.label} {t / 3600:.2f}" for c, t in zip(checkouts, totals))
        print(f"\n{counted} jobs of the plan, start-up CPU-hours: {spent}")
    if importtime:
        with tempfile.TemporaryDirectory(prefix="script-startup-") as scratch:
            for job in jobs:
                for checkout in checkouts:
                    found = run_child(job, checkout, Path(scratch), importtime=True)["importtime"]
                    top = ", ".join(f"{name} {s:.2f}" for name, s in costliest_imports(found, 8))
                    print(f"- {job.name} ({checkout.label}), -X importtime wall s: {top}")


def _compare_outputs(jobs: list[Job], checkouts: list[Checkout], runs: dict) -> None:
    if len(checkouts) < 2 or not any(j.preamble for j in jobs):
        return
    differing = []
    for job in jobs:
        hashes = [runs[(job.name, c.label)][-1]["outputs"] for c in checkouts]
        if any(h != hashes[0] for h in hashes[1:]):
            differing.append(f"{job.name}: {sorted(k for k in hashes[0] if hashes[0][k] != hashes[1].get(k))}")
    print(f"\noutput files: {'the same in both checkouts' if not differing else 'differing'}")
    for line in differing:
        print(f"- {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("imports", "jobs"))
    parser.add_argument("workdir", type=Path, nargs="?", help="jobs: the run directory whose scripts were kept")
    parser.add_argument("--other", type=Path, help="another checkout (its src/ and scripts/) to run side by side")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plan", type=Path, help="a dry run's output, to weigh each rule by its jobs")
    parser.add_argument("--rules", nargs="*", help="only the jobs of these rules")
    parser.add_argument("--per-rule", type=int, default=0, help="jobs: at most this many jobs of a rule (0: all)")
    parser.add_argument("--importtime", action="store_true", help="the costliest imports of each job (-X importtime)")
    args = parser.parse_args()
    if args.mode == "jobs" and args.workdir is None:
        parser.error("jobs needs the workdir of a run made with --skip-script-cleanup")
    jobs = captured_jobs(args.workdir) if args.mode == "jobs" else script_jobs()
    if args.rules:
        jobs = [j for j in jobs if j.rule in args.rules]
    if args.per_rule:
        by_rule: dict[str, list[Job]] = defaultdict(list)
        for job in jobs:
            by_rule[job.rule].append(job)
        jobs = [job for rule_jobs in by_rule.values() for job in rule_jobs[: args.per_rule]]
    checkouts = [Checkout(REPO), *([Checkout(args.other.resolve())] if args.other else [])]
    runs = measure(jobs, checkouts, args.repeats)
    report(jobs, checkouts, runs, jobs_per_rule(args.plan) if args.plan else {}, args.importtime)


if __name__ == "__main__":
    main()
