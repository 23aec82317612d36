"""Whole runs of tests/configs/faults_run.yaml (one SQuAD article; BM25, MiniLM and BM25 -> MiniLM MaxP) that a fault
interrupts, and the uninterrupted run they must end equal to, byte for byte."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from posir.cache_shards import KINDS, kind_named
from posir.cache_store import CacheStore, shard_dir
from tests._snakemake import Build, command, cores, environment, job_blocks, printed_fields
from tests.workflow.conftest import shared_build

OVERLAYS = ("reports_off", "faults_run")
#: what a run leaves that must not depend on how it got there: tables, per-query scores, runs, aggregates
COMPARED = ("tables", "scores", "runs", "aggregates")


@pytest.fixture(scope="session")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Build:
    """The run nothing interrupted, over its own caches."""
    return shared_build(tmp_path_factory, mirror, "faults-run", *OVERLAYS)


#: the one record of how a run went rather than what it gave: a pipeline's card counts the windows its second stage
#: found in the cache and encoded, which depends on what earlier jobs (or lives of the run) had cached
EXECUTION_RECORD = "scorer_counts"


def compared_bytes(path: Path) -> bytes:
    if not path.name.endswith(".card.json"):
        return path.read_bytes()
    card = json.loads(path.read_text())
    card.pop(EXECUTION_RECORD, None)
    return json.dumps(card, sort_keys=True).encode()


def outputs(workdir: Path) -> dict[str, bytes]:
    """Every compared file of a run by its path under results/ (a run card less its execution record)."""
    results = workdir / "results"
    return {
        path.relative_to(results).as_posix(): compared_bytes(path)
        for folder in COMPARED
        for path in sorted((results / folder).rglob("*"))
        if path.is_file()
    }


def assert_same_outputs(workdir: Path, reference: Path) -> None:
    mine, theirs = outputs(workdir), outputs(reference)
    assert theirs and set(mine) == set(theirs), sorted(set(mine) ^ set(theirs))
    differing = [name for name in theirs if mine[name] != theirs[name]]
    assert not differing, f"differ from the uninterrupted run: {differing}"


def corrupt_values(cache: Path, kind: str) -> int:
    """Values of a cache file that fail their checksum or check, every row of every table read."""
    spec = kind_named(kind)
    with CacheStore(cache, spec, mode="single") as store:
        with sqlite3.connect(cache) as db:
            for table in spec.tables:
                keys = [tuple(row) for row in db.execute(f"SELECT {', '.join(table.keys)} FROM {table.name}")]
                store.get_many(table.name, keys)
        return store.counts.corrupt


def caches_of(workdir: Path) -> dict[Path, str]:
    """The run's cache files (results/<kind>-cache.sqlite) and their kinds."""
    found = {workdir / "results" / f"{kind}-cache.sqlite": kind for kind in KINDS}
    return {path: kind for path, kind in found.items() if path.exists()}


def assert_caches_sound(workdir: Path, logs: str, elsewhere: dict[Path, str] | None = None) -> None:
    """No cache of the run (under results/, or ``elsewhere``: file -> kind) reports a corrupt value, in a log or on
    a full read, and no shard waits to be folded."""
    reported = re.findall(r"[1-9]\d* corrupt value|[1-9]\d* damaged shard|damaged cache shard left out", logs)
    assert not reported, reported
    caches = {**caches_of(workdir), **(elsewhere or {})}
    assert any(kind == "embedding" for kind in caches.values()), caches
    for cache, kind in caches.items():
        assert corrupt_values(cache, kind) == 0, cache
        assert not list(shard_dir(cache).glob("*.shard")), f"{cache}: shards left unfolded"


#: what the README's resume command adds to a run: the jobs a kill cut short are run again
RESUME = "--rerun-incomplete"


def start(build: Build, *args: str) -> subprocess.Popen:
    """The run started as the README resumes it, in its own process group (driver and jobs killed together, as a
    dying node kills them)."""
    return subprocess.Popen(
        [*command(build.workdir, build.configfiles), "--cores", cores(), RESUME, *args],
        env=environment(build.mirror, None),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def jobs_of(log: str) -> dict[str, str]:
    """Snakemake's job id -> 'rule wildcards' of every job a run's log announces."""
    jobs = {}
    for rule, block in job_blocks(log, indented=False):
        jobid = re.search(r"\n\s+jobid: (\d+)", block)
        if jobid:
            jobs[jobid.group(1)] = f"{rule} {sorted(printed_fields(block, 'wildcards').items())}"
    return jobs


def finished_jobs(log: str) -> set[str]:
    """'rule wildcards' of every job a run's log reports finished."""
    jobs = jobs_of(log)
    return {jobs[i] for i in re.findall(r"Finished jobid: (\d+)", log) if i in jobs}
