"""Running the workflow's Snakefile from tests: a subprocess in a work directory, the checked-in test configs
(`tests/configs/*.yaml`, overlays merged over config.yaml as `snakemake --configfile` merges them), builds shared
by a whole test run, and the jobs a dry run plans."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import REPO, cores_per_worker

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
CONFIGS = REPO / "tests" / "configs"


def cores() -> str:
    """``--cores`` of a test's Snakemake run (tests/conftest.py: workers x cores stays within the machine)."""
    return str(cores_per_worker())


def command(workdir: Path, configfiles: tuple[Path, ...] = ()) -> list[str]:
    """The command line that runs the workflow's Snakefile in ``workdir`` over config.yaml and ``configfiles``."""
    # --configfile takes every word up to the next option: --directory closes the list
    overlays = ["--configfile", *map(str, configfiles)] if configfiles else []
    return [*SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), *overlays, "--directory", str(workdir)]


def environment(mirror: Path | None, env: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, **({"POSIR_MIRROR": str(mirror)} if mirror is not None else {}), **(env or {})}


def snakemake(
    workdir: Path,
    *args: str,
    mirror: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: int = 1800,
    configfiles: tuple[Path, ...] = (),
) -> subprocess.CompletedProcess:
    """The workflow's Snakefile run in ``workdir`` over its config.yaml and ``configfiles``; ``env`` adds
    variables (e.g. PYTHONHASHSEED)."""
    return subprocess.run(
        [*command(workdir, configfiles), *args],
        env=environment(mirror, env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def config_file(name: str) -> Path:
    """A checked-in test config; run it by hand with ``snakemake --configfile tests/configs/<name>.yaml``."""
    path = CONFIGS / f"{name}.yaml"
    assert path.is_file(), f"no test config {path}"
    return path


def merged_config(*overlays: str | Path | dict[str, Any]) -> dict[str, Any]:
    """config.yaml with ``overlays`` (test config names, files or mappings) merged over it as Snakemake merges
    ``--configfile`` files: the overlays into one, in order, then that one over config.yaml (mappings merged, every
    other value replaced; so a block one overlay clears with null and the next refills is merged with config.yaml's,
    and an entry is removed with ``<name>: null`` instead)."""
    from snakemake.utils import update_config

    merged: dict[str, Any] = {}
    for overlay in overlays:
        if not isinstance(overlay, dict):
            path = config_file(overlay) if isinstance(overlay, str) else overlay
            overlay = yaml.safe_load(path.read_text()) or {}
        update_config(merged, overlay)
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    update_config(config, merged)
    return config


@dataclass(frozen=True)
class Build:
    """A work directory holding config.yaml and the config files every run in it reads: the checked-in test
    config and the test's own overlay (shared cache files, a local endpoint)."""

    workdir: Path
    mirror: Path
    configfiles: tuple[Path, ...]

    @classmethod
    def of(cls, workdir: Path, mirror: Path, overlays: Sequence[str | Path], local: dict[str, Any] | None) -> Build:
        """The build in ``workdir`` of the test configs ``overlays`` (names under tests/configs, or paths) and the
        test's own overlay ``local`` (written as local.yaml by :meth:`prepare`)."""
        files = [config_file(o) if isinstance(o, str) else Path(o) for o in overlays]
        return cls(workdir, mirror, (*files, *([workdir / "local.yaml"] if local else [])))

    @classmethod
    def prepare(
        cls,
        workdir: Path,
        mirror: Path,
        overlays: Sequence[str | Path] = (),
        local: dict[str, Any] | None = None,
        models: Path | None = None,
    ) -> Build:
        """:meth:`of`, with config.yaml and local.yaml written into ``workdir``; ``models``: a directory of converted
        model folders (the ``converted_models`` fixture) linked in as ``results/models``, so the build reads the
        test run's one conversion instead of converting again."""
        workdir.mkdir(parents=True, exist_ok=True)
        if models is not None:
            for folder in models.iterdir():
                if folder.is_dir():
                    shutil.copytree(folder, workdir / "results" / "models" / folder.name, copy_function=os.link)
        shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
        if local:
            (workdir / "local.yaml").write_text(yaml.safe_dump(local))
        return cls.of(workdir, mirror, overlays, local)

    def snakemake(self, *args: str, timeout: int = 1800, env: dict[str, str] | None = None, more: dict | None = None):
        """Snakemake in the work directory on its configs (and ``more``, an overlay of this call only)."""
        files = self.configfiles
        if more is not None:
            (self.workdir / "more.yaml").write_text(yaml.safe_dump(more))
            files = (*files, self.workdir / "more.yaml")
        return snakemake(self.workdir, *args, mirror=self.mirror, env=env, timeout=timeout, configfiles=files)

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        """Snakemake started in the work directory, its output (stdout and stderr together) left to read."""
        return subprocess.Popen(
            [*command(self.workdir, self.configfiles), *args],
            env=environment(self.mirror, env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def run(self, *targets: str, timeout: int = 1800) -> Build:
        """The targets (default: everything) built; a failed run fails the test with its log."""
        done = self.snakemake("--cores", cores(), *targets, timeout=timeout)
        assert done.returncode == 0, done.stderr[-4000:]
        return self

    def config(self) -> dict[str, Any]:
        """The config its runs read."""
        return merged_config(*self.configfiles)

    def copy_to(self, workdir: Path) -> Build:
        """A copy to change (rerun, force, delete) without touching what other tests read; Snakemake's records
        come along, so the copy is as up to date as the original."""
        shutil.copytree(self.workdir, workdir, symlinks=True, dirs_exist_ok=True)
        files = tuple(workdir / f.name if f.parent == self.workdir else f for f in self.configfiles)
        return replace(self, workdir=workdir, configfiles=files)

    def planned(self, *args: str, more: dict | None = None) -> list[tuple[str, dict[str, str]]]:
        """The jobs a dry run plans (with ``more`` merged over the configs)."""
        dry = self.snakemake("-n", "--cores", cores(), *args, more=more)
        assert dry.returncode == 0, dry.stderr[-3000:]
        return planned_jobs(dry.stdout)


def job_blocks(output: str, indented: bool) -> list[tuple[str, str]]:
    """(rule, printed block) of each job of a dry run; ``indented`` also finds a group's members."""
    lead = r"\s*" if indented else ""
    blocks = []
    for block in re.split(rf"\n(?={lead}(?:local)?rule \w+:)", output):
        name = re.match(rf"{lead}(?:local)?rule (\w+):", block)
        if name:
            blocks.append((name.group(1), block))
    return blocks


def printed_fields(block: str, key: str) -> dict[str, str]:
    """A job's ``key: a=1, b=2`` line as a dict (empty where the job prints none)."""
    line = re.search(rf"\n\s+{key}: (.*)", block)
    return dict(p.split("=", 1) for p in line.group(1).split(", ") if "=" in p) if line else {}


def planned_jobs(output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of each job a dry run prints."""
    return [(rule, printed_fields(block, "wildcards")) for rule, block in job_blocks(output, indented=False)]


def planned_resources(output: str) -> list[tuple[str, dict[str, str], dict[str, str]]]:
    """(rule, wildcards, resources) of each job a dry run prints, group members included."""
    return [
        (rule, printed_fields(block, "wildcards"), printed_fields(block, "resources"))
        for rule, block in job_blocks(output, indented=True)
    ]


def planned_priorities(output: str) -> list[tuple[str, dict[str, str], int]]:
    """(rule, wildcards, priority) of each job a dry run prints; Snakemake prints no priority line for 0."""
    jobs = []
    for rule, block in job_blocks(output, indented=False):
        line = re.search(r"\n\s+priority: (\S+)", block)
        jobs.append((rule, printed_fields(block, "wildcards"), int(float(line.group(1))) if line else 0))
    return jobs
