"""A job on a `device: cuda` model asks SLURM for a GPU, a job on a CPU model does not.

The rules declare `gpu=N` (snakemake-executor-plugin-slurm turns it into `sbatch --gpus=N`; `gpus=N`
would reach only the job step's srun, see docs/cluster.md). Checked twice: the resources a dry run
plans, and the `sbatch` command line the real plugin builds, captured by a stand-in `sbatch` first
on PATH (with stand-ins for the other SLURM commands): no cluster, no root needed.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from tests._snakemake import Build, cores, planned_resources
from tests.conftest import REPO

CUDA_MODEL, CPU_MODEL = "minilm-l6", "me5-small"  # tests/configs/gpu_request.yaml
OVERLAYS = ("reports_off", "gpu_request")


def test_dry_run_plans_gpu_1_for_the_cuda_model_only(tmp_path: Path, mirror: Path) -> None:
    dry = Build.prepare(tmp_path, mirror, OVERLAYS).snakemake("-n", "--cores", cores())
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned_resources(dry.stdout)
    encode = {(w["model"], w["kind"]): r for rule, w, r in jobs if rule == "encode_texts"}
    assert {model for model, _ in encode} == {CUDA_MODEL, CPU_MODEL}
    for (model, _), resources in encode.items():
        assert resources.get("gpu", "0") == ("1" if model == CUDA_MODEL else "0"), (model, resources)
    rerank = [r for rule, _, r in jobs if rule == "rerank"]
    assert rerank and all(r.get("gpu") == "1" for r in rerank)  # its second stage encodes with the cuda model
    assert all("gpus" not in r for _, _, r in jobs)  # the plugin's trap: sbatch would ask for no GPU
    others = [r for rule, _, r in jobs if rule not in ("encode_texts", "rerank")]
    assert others and all(r.get("gpu", "0") == "0" for r in others)


STAND_IN = """#!/bin/sh
# {name} stand-in of tests/workflow/test_slurm_gpu_request.py
{body}
"""


def stand_in_slurm(bin_dir: Path, sbatch_calls: Path) -> None:
    """sbatch records its arguments and refuses the job; the rest answer as a cluster with no accounting."""
    bin_dir.mkdir()
    bodies = {
        "sbatch": f'printf "%s\\n" "$*" >> {shlex.quote(str(sbatch_calls))}\n'
        'echo "sbatch: error: stand-in sbatch submits nothing" >&2\nexit 1',
        "sinfo": 'echo "posir*"',
        "squeue": "exit 0",
        "sacct": 'echo "sacct: error: Slurm accounting storage is disabled" >&2\nexit 1',
        "sacctmgr": "exit 1",
        "sshare": "exit 1",
        "scontrol": "exit 1",
        "scancel": "exit 0",
    }
    for name, body in bodies.items():
        path = bin_dir / name
        path.write_text(STAND_IN.format(name=name, body=body))
        path.chmod(0o755)


def test_the_plugin_submits_the_cuda_encode_job_with_gpus(
    tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch, converted_models: Path
) -> None:
    build = Build.prepare(tmp_path, mirror, OVERLAYS, models=converted_models)
    # The encode jobs' input, so that they are the only jobs (--allowed-rules) and are submitted at once.
    queries = tmp_path / "results/benchmarks/squad-long/queries.jsonl"
    queries.parent.mkdir(parents=True)
    queries.write_text('{"_id": "q1", "text": "a question"}\n')
    targets = [f"results/embeddings/{model}/squad-long/queries.npy" for model in (CUDA_MODEL, CPU_MODEL)]
    sbatch_calls = tmp_path / "sbatch-calls.txt"
    stand_in_slurm(tmp_path / "bin", sbatch_calls)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    # Targets first: --allowed-rules takes every word after it.
    run = build.snakemake(
        *targets, "--profile", str(REPO / "profiles" / "slurm"), "--keep-going", "--allowed-rules", "encode_texts"
    )
    output = run.stdout + run.stderr
    assert run.returncode != 0 and "stand-in sbatch submits nothing" in output, output[-4000:]
    # What sbatch itself reads: the arguments before --wrap (the wrapped command is the job step's).
    heads = [line.split(" --wrap=")[0] for line in sbatch_calls.read_text().splitlines()]
    calls = {head.split("--comment ")[1].split()[0]: head for head in heads}
    assert len(calls) == 2, calls
    cuda = next(line for comment, line in calls.items() if f"wildcards_{CUDA_MODEL}_" in comment)
    cpu = next(line for comment, line in calls.items() if f"wildcards_{CPU_MODEL}_" in comment)
    assert "--gpus=1" in cuda.split() and "--ntasks=1" not in cuda.split(), cuda
    assert not any(arg.startswith(("--gpus", "--gres")) for arg in cpu.split()) and "--ntasks=1" in cpu.split(), cpu
    models = build.config()["models"]
    for line, model in ((cuda, CUDA_MODEL), (cpu, CPU_MODEL)):  # the models' mem_mb, runtime 240, one thread
        mem_mb = models[model]["mem_mb"]
        assert f"--mem {mem_mb}" in line and "-t 240" in line and "--cpus-per-task=1" in line, line
