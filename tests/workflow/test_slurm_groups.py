"""The SLURM profile's groups never make a group depend on itself, for any config and any hash seed.

Snakemake refuses a plan in which a group job would wait for a job that waits for the group ("Group
<name> depends on itself"). A probe saw it under `--profile profiles/slurm` with a pipeline in the
config, for some PYTHONHASHSEED values: retrieve and score_run were one group, and a pipeline's score_run
waits for its rerank, which waits for its first stage's retrieve. The groups now follow the job
structure: independent retrieve jobs (each searches and scores a first stage), a pipeline's rerank ->
score_run chain, independent plots; no outside job sits between two members of a group. This builds the
grouped plan of config.yaml and every file in configs/ under several hash seeds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._snakemake import snakemake
from tests.conftest import REPO

pytestmark = pytest.mark.workflow

CONFIGS = [None, *sorted((REPO / "configs").glob("*.yaml"))]
SEEDS = ("0", "1", "7")


@pytest.mark.parametrize("configfile", CONFIGS, ids=lambda p: p.name if p else "config.yaml")
def test_the_grouped_plan_builds_under_every_hash_seed(configfile: Path | None, tmp_path: Path, mirror) -> None:
    (tmp_path / "config.yaml").write_text((REPO / "config.yaml").read_text())
    extra = ["--configfile", str(configfile)] if configfile else []
    for seed in SEEDS:
        done = snakemake(
            tmp_path,
            "--profile",
            str(REPO / "profiles" / "slurm"),
            "-n",
            *extra,
            mirror=mirror,
            env={"PYTHONHASHSEED": seed},
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0 and "depends on itself" not in output, f"PYTHONHASHSEED={seed}: {output[-3000:]}"
        assert "Group job" in output or configfile is not None  # the default config's plan uses the groups
