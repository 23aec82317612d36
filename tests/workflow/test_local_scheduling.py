"""A local run schedules its jobs without Snakemake's job rate limiter (posir.scheduling).

The limiter re-wakes the scheduling loop once a second per finished job (a CPU leak measured in a default
run); the workflow removes it when a local run starts. Run here under the strictest limit Snakemake takes,
one job an hour: with the limiter in place the second job would wait an hour, without it both finish at once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from posir.scheduling import NOTICE
from tests._snakemake import snakemake
from tests.conftest import REPO

pytestmark = pytest.mark.workflow

TARGETS = ("results/sources/xquad_eng/xquad.en.json", "results/sources/xquad_spa/xquad.es.json")


def test_a_local_run_is_not_rate_limited(tmp_path: Path, mirror: Path) -> None:
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    limited = ("--cores", "2", "--max-jobs-per-timespan", "1/1h")
    done = snakemake(tmp_path, *limited, *TARGETS, mirror=mirror, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all((tmp_path / target).stat().st_size > 0 for target in TARGETS)
    assert NOTICE in done.stderr


def test_a_dry_run_starts_nothing_and_says_nothing(tmp_path: Path, mirror: Path) -> None:
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    dry = snakemake(tmp_path, "-n", "--cores", "2", *TARGETS, mirror=mirror, timeout=300)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert NOTICE not in dry.stderr + dry.stdout
