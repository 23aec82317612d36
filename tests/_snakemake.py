"""Running the workflow's Snakefile from tests: a subprocess in a work directory, and the jobs a dry run plans."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(
    workdir: Path, *args: str, mirror: Path | None = None, env: dict[str, str] | None = None, timeout: int = 1800
) -> subprocess.CompletedProcess:
    """The workflow's Snakefile run in ``workdir``; ``env`` adds variables (e.g. PYTHONHASHSEED)."""
    env = {**os.environ, **({"POSIR_MIRROR": str(mirror)} if mirror is not None else {}), **(env or {})}
    return subprocess.run(
        [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def workflow_run(workdir: Path, config: dict, mirror: Path, *targets: str) -> Path:
    """``config`` written into ``workdir`` and run there on two cores; a failed run fails the test with its log."""
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    done = snakemake(workdir, "--cores", "2", *targets, mirror=mirror)
    assert done.returncode == 0, done.stderr[-4000:]
    return workdir


def jobs_planned_with(workdir: Path, config: dict, mirror: Path) -> list[tuple[str, dict[str, str]]]:
    """The jobs a dry run in ``workdir`` (whose results exist) plans once ``config`` replaces its config."""
    (workdir / "config_more.yaml").write_text(yaml.safe_dump(config))
    dry = snakemake(workdir, "-n", "--cores", "2", "--configfile", str(workdir / "config_more.yaml"), mirror=mirror)
    assert dry.returncode == 0, dry.stderr[-3000:]
    return planned_jobs(dry.stdout)


def _job_blocks(output: str, indented: bool) -> list[tuple[str, str]]:
    """(rule, printed block) of each job of a dry run; ``indented`` also finds a group's members."""
    lead = r"\s*" if indented else ""
    blocks = []
    for block in re.split(rf"\n(?={lead}(?:local)?rule \w+:)", output):
        name = re.match(rf"{lead}(?:local)?rule (\w+):", block)
        if name:
            blocks.append((name.group(1), block))
    return blocks


def _printed_fields(block: str, key: str) -> dict[str, str]:
    """A job's ``key: a=1, b=2`` line as a dict (empty where the job prints none)."""
    line = re.search(rf"\n\s+{key}: (.*)", block)
    return dict(p.split("=", 1) for p in line.group(1).split(", ") if "=" in p) if line else {}


def planned_jobs(output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of each job a dry run prints."""
    return [(rule, _printed_fields(block, "wildcards")) for rule, block in _job_blocks(output, indented=False)]


def planned_resources(output: str) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(rule, wildcards, resources) of each job a dry run prints, group members included."""
    return [
        (rule, _printed_fields(block, "wildcards"), _printed_fields(block, "resources"))
        for rule, block in _job_blocks(output, indented=True)
    ]


def planned_priorities(output: str) -> list[tuple[str, dict[str, str], int]]:
    """(rule, wildcards, priority) of each job a dry run prints; Snakemake prints no priority line for 0."""
    jobs = []
    for rule, block in _job_blocks(output, indented=False):
        line = re.search(r"\n\s+priority: (\S+)", block)
        jobs.append((rule, _printed_fields(block, "wildcards"), int(float(line.group(1))) if line else 0))
    return jobs
