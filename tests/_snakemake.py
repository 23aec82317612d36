"""Running the workflow's Snakefile from tests: a subprocess in a work directory, and the jobs a dry run plans."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(
    workdir: Path, *args: str, mirror: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """The workflow's Snakefile run in ``workdir``; ``env`` adds variables (e.g. PYTHONHASHSEED)."""
    env = {**os.environ, "POSIR_MIRROR": str(mirror), **(env or {})}
    return subprocess.run(
        [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def planned_jobs(output: str) -> list[tuple[str, dict[str, str]]]:
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        name = re.match(r"(?:local)?rule (\w+):", block)
        if not name:
            continue
        wildcards = re.search(r"\n\s+wildcards: (.*)", block)
        pairs = dict(p.split("=", 1) for p in wildcards.group(1).split(", ")) if wildcards else {}
        jobs.append((name.group(1), pairs))
    return jobs


def planned_resources(output: str) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(rule, wildcards, resources) of each job a dry run prints, group members included."""
    jobs = []
    for block in re.split(r"\n(?=\s*(?:local)?rule \w+:)", output):
        name = re.match(r"\s*(?:local)?rule (\w+):", block)
        if not name:
            continue
        wildcards = re.search(r"\n\s+wildcards: (.*)", block)
        resources = re.search(r"\n\s+resources: (.*)", block)
        jobs.append(
            (
                name.group(1),
                dict(p.split("=", 1) for p in wildcards.group(1).split(", ")) if wildcards else {},
                dict(p.split("=", 1) for p in resources.group(1).split(", ") if "=" in p) if resources else {},
            )
        )
    return jobs
