"""The workflow itself through a real single-node SLURM: a small real config, run once with
`--profile profiles/slurm` and once with `--profile profiles/local`, must give the same tables.

The SLURM run is a cluster run as the profile makes it: the caches in the shards mode (no job writes a cache file;
shards folded by the driver) and one job cancelled with `scancel` while it runs, which the profile's retry brings to
an end. Before: the profile left the caches in WAL mode, which sqlite rules out across hosts, and a cancelled job
failed the run.

tests/configs/slurm.yaml: two SQuAD articles, MiniLM, BM25 and BM25 -> MiniLM MaxP on eng-eng, both runs over
the test run's shared embedding and score caches. `all` and fetch_source are local
rules; the others become fewer SLURM jobs with the profile's groups (the two retrieve jobs, each searching
and scoring one model, share one; the pipeline's rerank and score_run are one).
Every SLURM job must have left its log under .snakemake/slurm_logs, be COMPLETED in
`scontrol show job` and appear as completed in slurmctld's own log; the daemons the helper
started must be gone afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from posir.cache_store import shard_dir
from tests._snakemake import Build
from tests.conftest import REPO
from tests.workflow.driver import DriverRun, run_snakemake
from tests.workflow.slurm import single_node_slurm

BENCHMARK, SETTING = "squad-long", "eng-eng"
#: tests/configs/slurm.yaml: a pipeline too, whose rerank -> score_run chain is a group of the profile
MODELS = ("minilm-l6", "bm25", "bm25.minilm-maxp")
OVERLAYS = ("reports_off", "slurm")


def tables(workdir: Path) -> list[Path]:
    """The compared outputs, relative to workdir: the main table and every per-query score file."""
    names = [Path(f"results/tables/{BENCHMARK}/main.csv")]
    names += [Path(f"results/scores/{BENCHMARK}/{model}/{SETTING}.tsv") for model in MODELS]
    return names


@dataclass(frozen=True)
class SlurmRun:
    local: DriverRun
    slurm: DriverRun
    local_dir: Path
    slurm_dir: Path
    job_logs: dict[str, Path]  # SLURM job id -> its log under .snakemake/slurm_logs
    job_states: dict[str, str]  # SLURM job id -> JobState in `scontrol show job`
    cancelled: str  # the SLURM job id cancelled while it ran
    completed_in_ctld_log: set[str]  # job ids slurmctld logged as done
    daemons: dict[str, int]  # name -> PID, those the helper started


def cancel_one_running_job(stop: threading.Event, cancelled: list[str]) -> None:
    """``scancel`` the first encode job seen running, a few seconds into its work (as a user or a preemption
    would), once."""
    while not stop.is_set():
        listed = subprocess.run(["squeue", "-h", "-o", "%i %T %k"], capture_output=True, text=True, check=False)
        for line in listed.stdout.splitlines():
            job, state, comment = (line.split(maxsplit=2) + ["", ""])[:3]
            if state == "RUNNING" and "rule_encode_texts" in comment:
                time.sleep(1)
                subprocess.run(["scancel", job], check=True)
                cancelled.append(job)
                return
        stop.wait(0.5)


def snakemake(build: Build, profile: str, *extra: str) -> DriverRun:
    env = {**os.environ, "POSIR_MIRROR": str(build.mirror)}
    profile_args = ["--snakefile", str(REPO / "Snakefile"), "--profile", str(REPO / "profiles" / profile)]
    # --configfile takes every word up to the next option: the profile's own options come first
    return run_snakemake(
        [*profile_args, *extra, "--configfile", *map(str, build.configfiles)], build.workdir, timeout_s=900, env=env
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, mirror: Path, shared_caches: dict[str, str]) -> SlurmRun:
    local_dir, slurm_dir = tmp_path_factory.mktemp("local"), tmp_path_factory.mktemp("via-slurm")
    # the SLURM run over caches of its own, so that its jobs encode (and write shards) and its encode job runs long
    # enough to be cancelled; the local run over the test run's shared caches
    local_build, slurm_build = (
        Build.prepare(local_dir, mirror, OVERLAYS, shared_caches),
        Build.prepare(slurm_dir, mirror, OVERLAYS),
    )
    with single_node_slurm(tmp_path_factory.mktemp("slurm")) as cluster:
        stop, cancelled = threading.Event(), []
        canceller = threading.Thread(target=cancel_one_running_job, args=(stop, cancelled), daemon=True)
        canceller.start()
        slurm = snakemake(slurm_build, "slurm", "--slurm-keep-successful-logs")
        stop.set()
        canceller.join()
        assert slurm.returncode == 0, f"{slurm.stderr[-6000:]}\n{cluster.log_tails()}"
        assert cancelled, "no encode job was seen running to cancel"
        job_logs = {path.stem: path for path in (slurm_dir / ".snakemake" / "slurm_logs").rglob("*.log")}
        # Finished jobs stay in slurmctld's memory for MinJobAge (300 s): ask before the cluster goes.
        job_states = {job: cluster.job_fields(job).get("JobState", "") for job in job_logs}
        ctld_log = (cluster.log_dir / "slurmctld.log").read_text(errors="replace")
        completed = set(re.findall(r"_job_complete: JobId=(\d+) done", ctld_log))
        daemons = dict(cluster.started)
    # Locally after the cluster is gone: one workflow at a time on the machine's two cores.
    local = snakemake(local_build, "local")
    assert local.returncode == 0, local.stderr[-6000:]
    print(f"\nsmall config via SLURM: {slurm.summary()}; locally: {local.summary()}")
    return SlurmRun(local, slurm, local_dir, slurm_dir, job_logs, job_states, cancelled[0], completed, daemons)


def test_the_slurm_jobs_wrote_shards_that_the_driver_folded(runs: SlurmRun) -> None:
    folded = re.search(
        r"embedding-cache\.sqlite: folded ([1-9]\d*) shard\(s\): added ([1-9]\d*) value", runs.slurm.stderr
    )
    assert folded, runs.slurm.stderr[-3000:]
    cache = runs.slurm_dir / "results" / "embedding-cache.sqlite"
    assert not list(shard_dir(cache).glob("*.shard")) and not Path(f"{cache}-wal").exists()
    assert "folded" not in runs.local.stderr  # the local profile keeps the single mode: no shards


def test_slurm_and_local_runs_give_identical_tables(runs: SlurmRun) -> None:
    for name in tables(runs.local_dir):
        local, via_slurm = (runs.local_dir / name).read_bytes(), (runs.slurm_dir / name).read_bytes()
        assert local, name
        assert via_slurm == local, f"{name} differs between the SLURM and the local run"


def test_every_job_ran_as_a_completed_slurm_job(runs: SlurmRun) -> None:
    assert runs.job_logs, "no SLURM job logs under .snakemake/slurm_logs"
    states = dict(runs.job_states)
    assert states.pop(runs.cancelled) == "CANCELLED"
    assert set(states.values()) == {"COMPLETED"}, states
    assert set(runs.job_logs) - {runs.cancelled} <= runs.completed_in_ctld_log
    # The same jobs in both runs; through SLURM all but the local rules (`all`, fetch_source).
    local_jobs = Counter(re.findall(r"^localrule (\w+):", runs.local.stderr, re.M))
    local_rules = Counter(re.findall(r"^localrule (\w+):", runs.slurm.stderr, re.M))
    remote = Counter(re.findall(r"^\s*rule (\w+):", runs.slurm.stderr, re.M))
    # the cancelled job is announced once more when it is submitted again
    assert local_jobs + Counter(encode_texts=1) == local_rules + remote
    assert set(local_rules) == {"all", "fetch_source"}
    # One SLURM job per job outside a group (its log under rule_<rule>/) and one per group job
    # (group_<group>_<its rules>/).
    alone = Counter(f"rule_{rule}" for rule in re.findall(r"^rule (\w+):", runs.slurm.stderr, re.M))
    groups = Counter(f"group_{group}" for group in re.findall(r"Group job (\w+) ", runs.slurm.stderr))
    logged = Counter()
    for log in runs.job_logs.values():
        kind = log.relative_to(runs.slurm_dir / ".snakemake" / "slurm_logs").parts[0]
        logged[next((g for g in groups if kind.startswith(f"{g}_")), kind)] += 1
    assert logged == alone + groups
    assert sum(logged.values()) < remote.total()  # the profile's groups took effect


def test_the_daemons_it_started_are_stopped(runs: SlurmRun) -> None:
    assert {"slurmctld", "slurmd"} <= set(runs.daemons)
    for name, pid in runs.daemons.items():
        alive = psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        assert not alive or name not in " ".join(psutil.Process(pid).cmdline()), f"{name} (PID {pid}) still runs"
