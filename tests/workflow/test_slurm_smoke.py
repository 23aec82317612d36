"""A tiny workflow through a real single-node SLURM with snakemake-executor-plugin-slurm and profiles/slurm.

Each job writes the SLURM_JOB_ID it ran under; `scontrol show job` then tells what SLURM granted
it, so the test fails if a job ran outside SLURM or got other resources than the rule declared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.workflow.driver import DriverRun, run_snakemake
from tests.workflow.slurm import SlurmCluster, single_node_slurm

# `${SLURM_JOB_ID:?}` makes a job that runs outside SLURM fail instead of writing an empty id.
SMOKE_SNAKEFILE = """
rule all:
    input: "out/summary.txt"

rule part:
    output: "out/part{i}.txt"
    threads: 1
    resources: mem_mb=200, runtime=5
    shell: 'echo "${{SLURM_JOB_ID:?not in a SLURM job}} ${{SLURM_CPUS_PER_TASK:-unset}}" > {output}'

rule summary:
    input: expand("out/part{i}.txt", i=[1, 2])
    output: "out/summary.txt"
    threads: 2
    resources: mem_mb=500, runtime=5
    shell: 'cat {input} > {output}; \
echo "${{SLURM_JOB_ID:?not in a SLURM job}} ${{SLURM_CPUS_PER_TASK:-unset}}" >> {output}'
"""

GPU_SNAKEFILE = """
rule encode_on_gpu:
    output: "gpu.txt"
    resources: gpu=1, mem_mb=200, runtime=5
    shell: "nvidia-smi > {output}"
"""


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    with single_node_slurm(tmp_path_factory.mktemp("slurm")) as cluster:
        yield cluster


def snakemake_via_slurm(workdir: Path, *extra: str, timeout_s: float = 300) -> DriverRun:
    return run_snakemake(
        [
            "--profile",
            str(REPO / "profiles" / "slurm"),
            "--snakefile",
            "Snakefile",
            "--slurm-keep-successful-logs",
            *extra,
        ],
        workdir,
        timeout_s=timeout_s,
    )


def job_seconds(fields: dict[str, str], start: str, end: str) -> float:
    return (datetime.fromisoformat(fields[end]) - datetime.fromisoformat(fields[start])).total_seconds()


def test_smoke_workflow_runs_every_job_through_slurm(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    (tmp_path / "Snakefile").write_text(SMOKE_SNAKEFILE)
    # The two `part` jobs form one group job: a profile's group-components must reach SLURM as one job.
    run = snakemake_via_slurm(tmp_path, "--groups", "part=small", "--group-components", "small=2")
    assert run.returncode == 0, f"{run.stderr[-6000:]}\n{slurm_cluster.log_tails()}"

    lines = (tmp_path / "out" / "summary.txt").read_text().split("\n")
    (part1_job, part1_cpus), (part2_job, _), (summary_job, summary_cpus) = (line.split() for line in lines[:3])
    assert part1_job == part2_job, "grouped jobs should share one SLURM job"
    assert summary_job != part1_job
    assert summary_cpus == "2" and part1_cpus == "1"  # the job step's srun -c: threads of the rule

    summary = slurm_cluster.job_fields(summary_job)
    assert summary["JobState"] == "COMPLETED"
    assert summary["Partition"] == slurm_cluster.partition
    assert summary["NumCPUs"] == "2"  # threads: 2 -> --cpus-per-task=2
    assert "mem=500M" in summary["TRES"]  # mem_mb=500 -> --mem 500
    assert summary["TimeLimit"] == "00:05:00"  # runtime=5 -> -t 5 (minutes)

    group = slurm_cluster.job_fields(part1_job)
    # Snakemake adds up the members of a group's level: 2 x 1 thread, 2 x 200 MB; runtime is the
    # level's longest (levels, not members, add up).
    assert group["NumCPUs"] == "2" and "mem=400M" in group["TRES"] and group["TimeLimit"] == "00:05:00"

    logs = {path.name for path in (tmp_path / ".snakemake" / "slurm_logs").rglob("*.log")}
    assert {f"{summary_job}.log", f"{part1_job}.log"} <= logs

    per_job = {
        job: job_seconds(fields, "StartTime", "EndTime") for job, fields in ((part1_job, group), (summary_job, summary))
    }
    print(
        f"\nSLURM smoke: 3 rule jobs in 2 SLURM jobs, {run.summary()}; "
        f"seconds from start to end of each SLURM job (the work itself is ~0 s): {per_job}"
    )


def test_gpu_request_is_refused_at_submission_on_a_node_without_gpus(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    (tmp_path / "Snakefile").write_text(GPU_SNAKEFILE)
    run = snakemake_via_slurm(tmp_path, timeout_s=120)
    output = run.stdout + run.stderr
    assert run.returncode != 0
    assert re.search(r"sbatch .*--gpus=1", output), output[-4000:]  # resources: gpu=1 -> --gpus=1
    assert "Requested node configuration is not available" in output, output[-4000:]
    assert not (tmp_path / "gpu.txt").exists()
