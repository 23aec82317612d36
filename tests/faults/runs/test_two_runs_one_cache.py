"""Two runs at once, in two directories, sharing one embedding and one score cache file (the single cache mode on
one host): both finish, each with the tables of a run alone, and the shared cache holds no corrupt value.

Before: nothing tested two whole runs on one cache at once (only two processes writing vectors,
tests/faults/test_cache_corruption.py).
"""

from __future__ import annotations

from pathlib import Path

from tests._snakemake import Build
from tests.faults.runs.conftest import OVERLAYS, assert_same_outputs, corrupt_values, start


def test_two_runs_sharing_a_cache_file_both_end_as_a_run_alone(
    uninterrupted: Build, tmp_path: Path, mirror: Path
) -> None:
    shared = tmp_path / "shared"
    caches = {"embedding_cache": str(shared / "embedding-cache.sqlite"), "score_cache": str(shared / "score.sqlite")}
    builds = [Build.prepare(tmp_path / name, mirror, OVERLAYS, caches) for name in ("first", "second")]
    runs = [start(build) for build in builds]
    logs = [run.communicate(timeout=1800)[0] for run in runs]
    for run, log in zip(runs, logs):
        assert run.returncode == 0, log[-4000:]
    for build in builds:
        assert_same_outputs(build.workdir, uninterrupted.workdir)
    assert corrupt_values(shared / "embedding-cache.sqlite", "embedding") == 0
