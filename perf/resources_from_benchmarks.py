"""What the rules' jobs used in a completed run, against what the rules declare (docs/cluster.md).

Not a test: run it by hand on one or more finished run directories.

    python -m perf.resources_from_benchmarks /work/run10 /work/baseline [--measure [RULE ...]] [--markdown]

Measured, per job of each run directory:
  * wall seconds and peak RSS from the `benchmark:` files (results/timing/<rule>/...tsv, columns
    `s` and `max_rss` in MB): the rules that have a `benchmark:` directive;
  * wall seconds from Snakemake's own metadata (.snakemake/metadata: `endtime - starttime` of each
    output) for every other rule; no memory figure exists for those, so
  * with --measure, the job with the largest inputs of each rule lacking one is run again, alone,
    under a benchmark added by a module wrapper (measure_again), inputs linked from the run.
Declared, per job: `threads`, `mem_mb`, `runtime` (minutes) and `gpu` as a dry run of this
workflow on the default config prints them (`snakemake -n --forceall --cores 64`: enough cores
that no rule's threads are scaled down); `mem_mb` computed from input sizes (`<TBD>` in that dry run)
comes from a dry run per rule against the finished run's files (declare_with_inputs). A measured job
is matched to a planned one by its benchmark file or one of its outputs; jobs the current workflow
no longer plans are counted apart and not compared.

A job is flagged where `mem_mb < 1.5 x max_rss` or `runtime x 60 < 2 x wall seconds`.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import re
import shutil
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from posir.tools.slurm_jobs import local_rules

REPO = Path(__file__).resolve().parents[1]
MEM_FACTOR, TIME_FACTOR = 1.5, 2.0


@dataclass
class Planned:
    rule: str
    inputs: list[str]
    outputs: list[str]
    wildcards: dict[str, str]
    benchmark: str | None
    local: bool
    threads: int
    mem_mb: float | None
    runtime_min: float | None
    gpu: int
    input_dependent: bool = False  # mem_mb or runtime computed from input sizes when the job is ready


@dataclass
class Measured:
    run: str
    rule: str
    wall_s: float
    max_rss_mb: float | None  # None: no benchmark file for this job, or a job too short to be sampled
    key: str  # benchmark path or one output path, relative to the run directory


@dataclass
class RuleRow:
    rule: str
    jobs: int = 0  # measured jobs matched to the current plan
    unmatched: int = 0  # measured jobs the current workflow does not plan
    walls: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    threads: set[int] = field(default_factory=set)
    mem_mb: set[float] = field(default_factory=set)
    runtime_min: set[float] = field(default_factory=set)
    gpu: set[int] = field(default_factory=set)
    local: bool = False
    mem_flags: int = 0
    time_flags: int = 0
    min_mem_ratio: float | None = None  # smallest declared mem_mb / measured max_rss over jobs
    min_time_ratio: float | None = None  # smallest declared runtime / measured wall over jobs
    unsampled: int = 0  # measured jobs without a memory figure


# --- the plan ----------------------------------------------------------------------------------------------


def snakemake_in(directory: Path, *args: str) -> subprocess.CompletedProcess:
    """Snakemake run in ``directory`` (its Snakefile and config.yaml), output captured."""
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args], cwd=directory, capture_output=True, text=True, check=False
    )


def dry_run_text(workdir: Path) -> str:
    done = snakemake_in(workdir, "-n", "--forceall", "--cores", "64")
    if done.returncode != 0:
        raise SystemExit(f"dry run failed:\n{done.stderr[-3000:]}")
    return done.stdout + done.stderr


def number(value: str | None) -> float | None:
    """A resource as the dry run prints it; "<TBD>" (depends on input sizes not known yet) is None."""
    return float(value) if value is not None and value != "<TBD>" else None


def parse_plan(text: str, local: set[str]) -> list[Planned]:
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        name = re.match(r"(local)?rule (\w+):", block)
        if not name:
            continue
        fields = dict(re.findall(r"\n    (\w+): (.*)", block))
        resources = dict(pair.split("=", 1) for pair in fields.get("resources", "").split(", ") if "=" in pair)
        jobs.append(
            Planned(
                rule=name.group(2),
                inputs=[i for i in fields.get("input", "").split(", ") if i],
                outputs=[o for o in fields.get("output", "").split(", ") if o],
                wildcards=dict(p.split("=", 1) for p in fields.get("wildcards", "").split(", ") if "=" in p),
                benchmark=fields.get("benchmark"),
                local=bool(name.group(1)) or name.group(2) in local,
                threads=int(fields.get("threads", 1)),
                mem_mb=number(resources.get("mem_mb")),
                runtime_min=number(resources.get("runtime")),
                input_dependent="<TBD>" in (resources.get("mem_mb"), resources.get("runtime")),
                gpu=int(resources.get("gpu", 0)),
            )
        )
    return jobs


def declare_with_inputs(plan: list[Planned], run: Path, scratch: Path, workdir: Path) -> int:
    """Fill in the input-dependent mem_mb/runtime of planned jobs whose inputs all exist in `run`, as Snakemake
    computes them once the job is ready: a dry run per rule in a directory whose results/ is a link to the run's
    (read only: a dry run writes nothing there), forcing only that rule (`--allowed-rules`, `--forcerun`) so
    its inputs are the run's files. Returns how many jobs got a value."""
    here = scratch / "declared"
    here.mkdir(parents=True, exist_ok=True)
    link = here / "results"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to((run / "results").resolve())
    (here / "config.yaml").write_text((workdir / "config.yaml").read_text())
    filled = 0
    for rule in sorted({j.rule for j in plan if j.input_dependent}):
        jobs = {
            j.outputs[0]: j
            for j in plan
            if j.rule == rule and j.input_dependent and j.mem_mb is None and all((run / i).exists() for i in j.inputs)
        }
        if not jobs:
            continue
        # Targets before --allowed-rules and --forcerun, which take every word after them.
        done = snakemake_in(
            here,
            *("--snakefile", str(workdir / "Snakefile"), *jobs, "-n", "--cores", "64"),
            *("--allowed-rules", rule, "--forcerun", rule),
        )
        if done.returncode != 0:
            print(f"{rule}: dry run with the run's inputs failed:\n{done.stderr[-1500:]}", file=sys.stderr)
            continue
        for evaluated in parse_plan(done.stdout + done.stderr, set()):
            job = jobs.get(evaluated.outputs[0] if evaluated.outputs else "")
            if job is not None and evaluated.mem_mb is not None:
                job.mem_mb, job.runtime_min = evaluated.mem_mb, evaluated.runtime_min or job.runtime_min
                filled += 1
    link.unlink()
    return filled


# --- the measurements ---------------------------------------------------------------------------------------


def benchmark_measurements(run: Path) -> list[Measured]:
    found = []
    for path in sorted((run / "results" / "timing").rglob("*.tsv")):
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle, delimiter="\t"))
        if not rows:
            continue
        rule = path.relative_to(run / "results" / "timing").parts[0]
        # One row per repeat (benchmark: repeat("...", n)); the job's cost is its worst repeat. Snakemake
        # samples memory every few seconds: a job over before the first sample reads 0 ("NA" in older
        # versions), which is no measurement.
        rss = max((float(r["max_rss"]) for r in rows if r["max_rss"] not in ("", "NA")), default=0.0)
        found.append(
            Measured(str(run), rule, max(float(r["s"]) for r in rows), rss or None, str(path.relative_to(run)))
        )
    return found


@dataclass
class RecordedJob:
    """One job of a finished run as Snakemake's metadata records it (one record per output)."""

    rule: str
    outputs: list[str]
    inputs: set[str]
    start: float
    end: float


def recorded_jobs(run: Path, skip_rules: set[str] = frozenset()) -> list[RecordedJob]:
    """The finished jobs of a run: a job's outputs share its job_hash, and it ran from the earliest start to
    the latest end recorded for them."""
    per_job: dict[tuple[str, int], RecordedJob] = {}
    for path in sorted((run / ".snakemake" / "metadata").iterdir()):
        record = json.loads(path.read_text())
        if record.get("rule") in skip_rules or not record.get("starttime") or not record.get("endtime"):
            continue
        output = base64.urlsafe_b64decode(path.name + "=" * (-len(path.name) % 4)).decode()
        key = (record["rule"], record["job_hash"])
        job = per_job.setdefault(
            key, RecordedJob(record["rule"], [], set(record["input"]), record["starttime"], record["endtime"])
        )
        job.outputs.append(output)
        job.start, job.end = min(job.start, record["starttime"]), max(job.end, record["endtime"])
    return list(per_job.values())


def metadata_measurements(run: Path, skip_rules: set[str]) -> list[Measured]:
    """One per job of the rules without benchmark files (their wall time from Snakemake's metadata)."""
    return [
        Measured(str(run), job.rule, job.end - job.start, None, job.outputs[0])
        for job in recorded_jobs(run, skip_rules)
    ]


# --- measuring a job again, under a benchmark ---------------------------------------------------------------

WRAPPER = """configfile: "config.yaml"


module posir:
    snakefile:
        "{snakefile}"
    config:
        config


use rule * from posir exclude {rule}


use rule {rule} from posir with:
    benchmark:
        "{benchmark}"
"""


def input_bytes(run: Path, job: Planned) -> int | None:
    """Total size of the job's inputs in `run`; None if one is missing there."""
    paths = [run / i for i in job.inputs]
    return sum(p.stat().st_size for p in paths) if all(p.exists() for p in paths) else None


def measure_again(
    rule: str, plan: list[Planned], runs: list[Path], scratch: Path, workdir: Path, again: bool = False
) -> Measured | None:
    """Run the rule's job with the largest inputs found in a finished run once more, alone (`--cores` its
    threads), with a `benchmark:` added through a module wrapper; its inputs are links to that run's files.
    The result is kept in <scratch>/<rule>/measured.json and reused unless `again`.
    For rules without a `benchmark:` directive: the only way to their peak RSS without editing the rules."""
    sized = [
        (size, run, job)
        for job in plan
        if job.rule == rule and not job.local
        for run in runs
        if (size := input_bytes(run, job)) is not None
    ]
    if not sized:
        print(f"{rule}: no planned job has all its inputs in {', '.join(map(str, runs))}", file=sys.stderr)
        return None
    _, run, job = max(sized, key=lambda t: t[0])
    here = scratch / rule
    record = here / "measured.json"
    if record.exists() and not again:
        return Measured(**json.loads(record.read_text()))
    if here.exists():
        shutil.rmtree(here)
    here.mkdir(parents=True)
    # The inputs and the files beside them (a step may read a sidecar it does not declare, e.g. the ids
    # of an embeddings file), never one of the job's outputs nor a cache it writes to: a link there would
    # be written through into the finished run.
    for name in job.inputs:
        for source in (run / name).parent.iterdir():
            link = here / Path(name).parent / source.name
            writable = str(link.relative_to(here)) in job.outputs or ".sqlite" in source.name
            if source.is_file() and not writable and not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(source.resolve())
    benchmark = (
        f"timing/{rule}/" + "/".join(f"{{{w}}}" for w in job.wildcards) + ".tsv"
        if job.wildcards
        else f"timing/{rule}.tsv"
    )
    (here / "Snakefile").write_text(WRAPPER.format(snakefile=workdir / "Snakefile", rule=rule, benchmark=benchmark))
    (here / "config.yaml").write_text((workdir / "config.yaml").read_text())
    # Targets before --allowed-rules, which takes every word after it.
    done = snakemake_in(here, job.outputs[0], "--cores", str(job.threads), "--allowed-rules", rule)
    if done.returncode != 0:
        print(f"{rule}: the job failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    path = here / benchmark.format(**job.wildcards)
    row = next(csv.DictReader(open(path, newline=""), delimiter="\t"))
    rss = float(row["max_rss"]) if row["max_rss"] not in ("", "NA") else 0.0
    print(
        f"{rule}: {job.outputs[0]} ({sum((here / i).stat().st_size for i in job.inputs) / 1e6:.0f} MB of input): "
        f"{float(row['s']):.1f} s, max_rss {rss:.0f} MB",
        file=sys.stderr,
    )
    measured = Measured("measured again", rule, float(row["s"]), rss or None, job.benchmark or job.outputs[0])
    record.write_text(json.dumps(asdict(measured)))
    return measured


# --- the comparison -------------------------------------------------------------------------------------------


def compare(plan: list[Planned], measured: list[Measured]) -> list[RuleRow]:
    by_key: dict[str, Planned] = {}
    for job in plan:
        for key in [job.benchmark, *job.outputs]:
            if key:
                by_key[key] = job
    rows: dict[str, RuleRow] = {}
    for job in plan:
        row = rows.setdefault(job.rule, RuleRow(job.rule))
        row.threads.add(job.threads)
        row.local = row.local or job.local
        row.gpu.add(job.gpu)
        if job.mem_mb is not None:
            row.mem_mb.add(job.mem_mb)
        if job.runtime_min is not None:
            row.runtime_min.add(job.runtime_min)
    for m in measured:
        row = rows.setdefault(m.rule, RuleRow(m.rule))
        row.walls.append(m.wall_s)
        if m.max_rss_mb is not None:
            row.rss.append(m.max_rss_mb)
        else:
            row.unsampled += 1
        job = by_key.get(m.key)
        if job is None or job.rule != m.rule:
            row.unmatched += 1
            continue
        row.jobs += 1
        if m.max_rss_mb is not None and job.mem_mb is not None:
            ratio = job.mem_mb / m.max_rss_mb
            row.min_mem_ratio = ratio if row.min_mem_ratio is None else min(row.min_mem_ratio, ratio)
            row.mem_flags += ratio < MEM_FACTOR
        if job.runtime_min is not None and m.wall_s > 0:
            ratio = job.runtime_min * 60 / m.wall_s
            row.min_time_ratio = ratio if row.min_time_ratio is None else min(row.min_time_ratio, ratio)
            row.time_flags += ratio < TIME_FACTOR
    return sorted(rows.values(), key=lambda r: r.rule)


def span(values: set[float] | set[int]) -> str:
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low:g}" if low == high else f"{low:g}-{high:g}"


def render(rows: list[RuleRow], markdown: bool) -> str:
    header = [
        "rule",
        "jobs",
        "not planned now",
        "wall s median",
        "wall s max",
        "max RSS MB (jobs)",
        "threads",
        "gpu",
        "mem_mb",
        "runtime min",
        "mem_mb / RSS",
        "runtime / wall",
        "flags",
    ]
    lines = []
    for r in rows:
        flags = []
        if r.mem_flags:
            flags.append(f"mem_mb < {MEM_FACTOR} x RSS in {r.mem_flags} jobs")
        if r.time_flags:
            flags.append(f"runtime < {TIME_FACTOR} x wall in {r.time_flags} jobs")
        if not r.walls:
            flags.append("not measured")
        if r.local:
            flags.append("local rule: runs in the driver's process tree, no cluster job")
        lines.append(
            [
                r.rule,
                str(r.jobs),
                str(r.unmatched),
                f"{statistics.median(r.walls):.1f}" if r.walls else "-",
                f"{max(r.walls):.1f}" if r.walls else "-",
                f"{max(r.rss):.0f} ({len(r.rss)})" if r.rss else "-",
                span(r.threads),
                span(r.gpu),
                span(r.mem_mb),
                span(r.runtime_min),
                f"{r.min_mem_ratio:.1f}" if r.min_mem_ratio is not None else "-",
                f"{r.min_time_ratio:.0f}" if r.min_time_ratio is not None else "-",
                "; ".join(flags) or "ok",
            ]
        )
    if markdown:
        out = [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|",
        ]
        out += ["| " + " | ".join(line) + " |" for line in lines]
        return "\n".join(out)
    widths = [max(len(x) for x in column) for column in zip(header, *lines)]
    return "\n".join("  ".join(x.ljust(w) for x, w in zip(line, widths)) for line in [header, *lines])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="finished run directories (with results/ and .snakemake/)")
    parser.add_argument("--dry-run", type=Path, help="saved `snakemake -n --forceall --cores 64` output to reuse")
    parser.add_argument("--workdir", type=Path, default=REPO, help="where to dry-run the workflow (default: the repo)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--measure",
        nargs="*",
        metavar="RULE",
        help="run the job of RULE with the largest inputs in the runs again under a benchmark (peak RSS "
        "for rules without benchmark: files); no RULE: every such rule but local ones",
    )
    parser.add_argument("--again", action="store_true", help="with --measure: ignore measurements kept from before")
    parser.add_argument(
        "--scratch", type=Path, default=REPO / "perf" / "out" / "measure", help="where --measure runs its jobs"
    )
    args = parser.parse_args()
    text = args.dry_run.read_text() if args.dry_run else dry_run_text(args.workdir)
    plan = parse_plan(text, local_rules(args.workdir))
    for run in args.runs:
        filled = declare_with_inputs(plan, run, args.scratch.resolve(), args.workdir.resolve())
        print(f"{filled} input-dependent declarations computed from the inputs in {run}", file=sys.stderr)
    measured: list[Measured] = []
    for run in args.runs:
        benchmarked = benchmark_measurements(run)
        measured += benchmarked + metadata_measurements(run, {m.rule for m in benchmarked})
    if args.measure is not None:
        with_rss = {m.rule for m in measured if m.max_rss_mb is not None}
        rules = args.measure or sorted({j.rule for j in plan if not j.local} - with_rss)
        for rule in rules:
            again = measure_again(rule, plan, args.runs, args.scratch.resolve(), args.workdir.resolve(), args.again)
            if again is not None:
                measured.append(again)
    print(f"{len(plan)} planned jobs; {len(measured)} measured jobs in {len(args.runs)} run(s)\n")
    print(render(compare(plan, measured), args.markdown))


if __name__ == "__main__":
    main()
