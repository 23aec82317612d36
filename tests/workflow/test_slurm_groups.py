"""The SLURM profile's groups never make a group depend on itself, for any config and any hash seed.

Snakemake refuses a plan in which a group job would wait for a job that waits for the group ("Group
<name> depends on itself"). A probe saw it under `--profile profiles/slurm` with a pipeline in the
config, for some PYTHONHASHSEED values: retrieve and score_run were one group, and a pipeline's score_run
waits for its rerank, which waits for its first stage's retrieve. The groups now follow the job
structure: independent retrieve jobs (each searches and scores a first stage), a pipeline's rerank ->
score_run chain, independent plots; no outside job sits between two members of a group. This builds the
grouped plan of config.yaml under several hash seeds and of every file in configs/ under one each.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._snakemake import Build
from tests.conftest import REPO

SEEDS = ("0", "1", "7")
#: config.yaml (whose plan the probe saw fail) under every seed; every example config under one, the seeds taken in
#: turn, so that the matrix still varies the seed at a third of the planning calls
CONFIGS = [None, *sorted((REPO / "configs").glob("*.yaml"))]
PLANS = [(None, SEEDS)] + [(config, (SEEDS[i % len(SEEDS)],)) for i, config in enumerate(CONFIGS[1:])]
PLAN_IDS = [f"{config.name if config else 'config.yaml'}-seeds-{'-'.join(seeds)}" for config, seeds in PLANS]


@pytest.mark.parametrize("configfile,seeds", PLANS, ids=PLAN_IDS)
def test_the_grouped_plan_builds_under_every_hash_seed(
    configfile: Path | None, seeds: tuple[str, ...], tmp_path: Path, mirror
) -> None:
    build = Build.prepare(tmp_path, mirror, [configfile] if configfile else [])
    # the seeds' planning calls run side by side: each is one process, most of it Snakemake's own start and DAG
    plans = {
        seed: build.start("--profile", str(REPO / "profiles" / "slurm"), "-n", env={"PYTHONHASHSEED": seed})
        for seed in seeds
    }
    for seed, plan in plans.items():
        output, _ = plan.communicate(timeout=600)
        assert plan.returncode == 0 and "depends on itself" not in output, f"PYTHONHASHSEED={seed}: {output[-3000:]}"
        assert "Group job" in output or configfile is not None  # the default config's plan uses the groups
