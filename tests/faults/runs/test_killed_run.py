"""A run killed with SIGKILL at random moments (the driver and every job at once, as a node or a laptop dies) and
resumed as the README says (`snakemake --unlock`, then the same command with `--rerun-incomplete`) ends with the
uninterrupted run's tables, scores and runs, byte for byte; no cache reports a corrupt value; no job that had
finished runs again; no partial write of a killed writer is left.

The first two lives run in the shards cache mode (a cluster's), the last ones in the single mode (a laptop's): a
run resumed on another executor folds what the killed one left in shards. The kill moments are drawn with a fixed
seed within the run's usual span, so a failure reproduces.
"""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

from posir.atomic_files import parse_partial
from tests._snakemake import Build
from tests.faults.runs.conftest import (
    OVERLAYS,
    RESUME,
    assert_caches_sound,
    assert_same_outputs,
    finished_jobs,
    jobs_of,
    start,
)

SEED = 20261127
#: the cache mode of each killed life of the run
KILLED_LIVES = ("shards", "shards", "single")


def test_a_run_killed_at_random_moments_resumes_to_the_uninterrupted_tables(
    uninterrupted: Build, tmp_path: Path, mirror: Path
) -> None:
    killed = Build.prepare(tmp_path / "killed", mirror, OVERLAYS)
    draw = random.Random(SEED)
    finished: set[str] = set()
    logs, recomputed = [], []
    for mode in KILLED_LIVES:
        run = start(killed, "--config", f"cache_mode={mode}")
        time.sleep(draw.uniform(4.0, 30.0))
        os.killpg(run.pid, signal.SIGKILL)
        log = run.communicate()[0]
        logs.append(log)
        if run.returncode == 0:
            break  # it ended before the kill: nothing left to resume
        unlocked = killed.snakemake("--unlock")
        assert unlocked.returncode == 0, unlocked.stderr[-2000:]
        finished |= finished_jobs(log)
        # what the resume will run: no job that finished before a kill, only those never run or cut short
        dry = killed.snakemake("-n", "--cores", "1", RESUME)
        assert dry.returncode == 0, dry.stderr[-3000:]
        planned = set(jobs_of(dry.stdout).values())
        assert not planned & finished, f"finished before the kill, planned again: {sorted(planned & finished)}"
        recomputed.append(len(set(jobs_of(log).values()) - finished_jobs(log)))
    resumed = start(killed)
    log = resumed.communicate(timeout=1800)[0]
    assert resumed.returncode == 0, log[-4000:]
    logs.append(log)
    print(f"\nfinished before the kills: {len(finished)} jobs; cut short and run again, per kill: {recomputed}")
    assert_same_outputs(killed.workdir, uninterrupted.workdir)
    assert_caches_sound(killed.workdir, "\n".join(logs))
    # what writers the kills cut short left was swept at the resume's start (posir.atomic_files)
    left = [path for path in (killed.workdir / "results").rglob("*") if parse_partial(path) is not None]
    assert not left, f"partial writes left after the resumed run: {left}"
