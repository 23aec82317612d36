"""A cache on a file system that fills up mid-run: the run fails with an error naming the file and the fix, nothing
is taken as complete, and once space is freed the resume ends with the uninterrupted run's tables.

The embedding cache lies on a tmpfs of 1 MiB (mounting needs root; skipped otherwise), which the run's vectors
outgrow (1.8 MB at its end); space is freed by remounting it larger.

Before: nothing tested it; sqlite's own "database or disk is full" came through as a CacheError naming the file, but
whether the failed job's outputs were left as complete was never checked.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests._snakemake import Build
from tests.faults.runs.conftest import OVERLAYS, RESUME, assert_caches_sound, assert_same_outputs, start


@pytest.fixture
def small_file_system(tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_fails_naming_the_file_and_the_resume_ends_equal(
    uninterrupted: Build, tmp_path: Path, mirror: Path, small_file_system: Path
) -> None:
    cache = small_file_system / "embedding-cache.sqlite"
    build = Build.prepare(tmp_path / "run", mirror, OVERLAYS, {"embedding_cache": str(cache)})
    failed = start(build)
    log = failed.communicate(timeout=1800)[0]
    assert failed.returncode != 0
    assert re.search(rf"{re.escape(str(cache))}.*disk is full.*free space or set embedding_cache", log), log[-3000:]
    # nothing of a failed job counts as done: a dry run plans every encoding whose job failed
    dry = build.snakemake("-n", "--cores", "1", RESUME)
    assert dry.returncode == 0, dry.stderr[-3000:]
    failed_rules = set(re.findall(r"Error in rule (\w+):", log))
    assert failed_rules and failed_rules <= set(re.findall(r"^rule (\w+):", dry.stdout, re.M))
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_file_system)], check=True)
    resumed = start(build)
    resumed_log = resumed.communicate(timeout=1800)[0]
    assert resumed.returncode == 0, resumed_log[-4000:]
    assert_same_outputs(build.workdir, uninterrupted.workdir)
    assert_caches_sound(build.workdir, resumed_log, {cache: "embedding"})
