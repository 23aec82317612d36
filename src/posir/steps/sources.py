"""Step: provide a source file, from a mirror or its official URL, checksum verified."""

from __future__ import annotations

from pathlib import Path

from posir.jobs.benchmarks import FetchJob
from posir.sources import fetch, mirror_directories


def fetch_source(job: FetchJob) -> str:
    """Provide the job's source file at its output path; returns where it came from."""
    return fetch(job.source, Path(job.output["file"]), mirror_directories(job.mirrors))
