"""tests/workflow/slurm.py itself: slurm.conf is always put back, and only the daemons it started are stopped."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from tests.workflow import slurm
from tests.workflow.slurm import MARKER, SlurmStartError, single_node_slurm


@pytest.fixture
def conf_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    conf, backup = tmp_path / "etc" / "slurm.conf", tmp_path / "etc" / "slurm.conf.posir-backup"
    monkeypatch.setattr(slurm, "SLURM_CONF", conf)
    monkeypatch.setattr(slurm, "BACKUP", backup)
    return conf, backup


def test_an_existing_slurm_conf_is_restored_even_after_an_error(conf_paths: tuple[Path, Path]) -> None:
    conf, backup = conf_paths
    conf.parent.mkdir()
    conf.write_text("ClusterName=real\n")
    with pytest.raises(RuntimeError, match="boom"):
        with slurm._installed_conf(f"{MARKER}\nClusterName=test\n"):
            assert conf.read_text().startswith(MARKER)
            raise RuntimeError("boom")
    assert conf.read_text() == "ClusterName=real\n"
    assert not backup.exists()


def test_no_slurm_conf_before_means_none_after(conf_paths: tuple[Path, Path]) -> None:
    conf, backup = conf_paths
    with slurm._installed_conf(f"{MARKER}\n"):
        assert conf.exists()
    assert not conf.exists() and not backup.exists()


def test_a_run_that_died_leaves_ours_and_the_backup_and_the_next_run_restores_the_original(
    conf_paths: tuple[Path, Path],
) -> None:
    conf, backup = conf_paths
    conf.parent.mkdir()
    conf.write_text(f"{MARKER}\nClusterName=stale\n")
    backup.write_text("ClusterName=real\n")
    with slurm._installed_conf(f"{MARKER}\nClusterName=test\n"):
        assert backup.read_text() == "ClusterName=real\n"  # not overwritten by the stale file
    assert conf.read_text() == "ClusterName=real\n"


def test_a_run_that_died_without_an_original_leaves_nothing_after_the_next(conf_paths: tuple[Path, Path]) -> None:
    conf, backup = conf_paths
    conf.parent.mkdir()
    conf.write_text(f"{MARKER}\nClusterName=stale\n")
    with slurm._installed_conf(f"{MARKER}\nClusterName=test\n"):
        pass
    assert not conf.exists() and not backup.exists()


def _conf_state() -> str | None:
    return slurm.SLURM_CONF.read_text() if slurm.SLURM_CONF.exists() else None


def _original_conf() -> str | None:
    """What the helper must leave behind: the file as found, or, if a killed run left ours, the original.

    A run killed inside `single_node_slurm` (a CI timeout, a session that ended) leaves our file and maybe
    the backup; the next run restores the backup or removes ours, so "as found" would be the wrong promise.
    """
    current = _conf_state()
    if current is None or not current.startswith(MARKER):
        return current
    return slurm.BACKUP.read_text() if slurm.BACKUP.exists() else None


def _slurm_daemons() -> set[int]:
    return {p.pid for p in psutil.process_iter(["name"]) if p.info["name"] in ("slurmctld", "slurmd", "munged")}


@pytest.mark.slurm
def test_twice_in_a_row_in_the_same_directory_and_only_its_own_daemons_stopped(tmp_path: Path) -> None:
    slurm.skip_unless_possible()
    before, conf_before = _slurm_daemons(), _original_conf()
    for attempt in range(2):
        # The same directory both times: the second run finds the first one's state, pid files and logs.
        with single_node_slurm(tmp_path) as cluster:
            assert {"slurmctld", "slurmd"} <= set(cluster.started)
            assert not set(cluster.started.values()) & before
            assert slurm._node_state(cluster.node) == "idle"
        for name, pid in cluster.started.items():
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, (
                f"run {attempt + 1}: {name} (pid {pid}) still running"
            )
        assert _slurm_daemons() == before
        assert _conf_state() == conf_before


@pytest.mark.slurm
def test_a_node_that_never_gets_idle_fails_with_the_daemons_logs_and_cleans_up(tmp_path: Path) -> None:
    slurm.skip_unless_possible()
    before, conf_before = _slurm_daemons(), _original_conf()
    # More CPUs than the machine has: slurmd registers, slurmctld marks the node invalid.
    too_many = (os.cpu_count() or 1) + 2
    with pytest.raises(SlurmStartError) as failure:
        with single_node_slurm(tmp_path, cpus=too_many, timeout_s=10):
            pytest.fail("the cluster should not have come up")
    message = str(failure.value)
    assert "idle" in message and "sinfo:" in message
    assert "slurmctld.log" in message and "slurmd.log" in message
    assert _slurm_daemons() == before
    assert _conf_state() == conf_before


def test_not_root_is_a_skip_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm.os, "geteuid", lambda: 1000)
    assert "needs root" in (slurm.missing_prerequisites() or "")
    with pytest.raises(pytest.skip.Exception, match="needs root"):
        slurm.skip_unless_possible()


def test_a_missing_binary_is_a_skip_reason_naming_it_and_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slurm.os, "geteuid", lambda: 0)
    monkeypatch.setattr(slurm, "BINARIES", ("sh", "no-such-slurm-binary"))
    reason = slurm.missing_prerequisites() or ""
    assert "missing no-such-slurm-binary;" in reason and "apt-get install" in reason
    with pytest.raises(pytest.skip.Exception, match="no-such-slurm-binary"):
        slurm.skip_unless_possible()
