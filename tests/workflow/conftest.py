"""Builds of the checked-in test configs (tests/configs), made once per test run and shared by the tests that read
them, over one embedding and one score cache for the whole run.

The caches' keys are content hashes (the encoding or scorer identity and the text), so a text that several builds
encode (the same SQuAD articles' documents and questions, read by MiniLM in six configs) is encoded once per test
run. A build whose test asserts on its own cache's misses keeps the default per-directory cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock, Timeout

from tests._snakemake import Build
from tests.conftest import converted_models_dir, run_root

REPORTS_OFF = "reports_off"


@pytest.fixture(scope="session")
def shared_caches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The embedding and score cache of this test run, for every build (on every xdist worker)."""
    root = run_root(tmp_path_factory) / "shared-caches"
    root.mkdir(exist_ok=True)
    return {"embedding_cache": str(root / "embedding-cache.sqlite"), "score_cache": str(root / "score-cache.sqlite")}


def shared_build(
    tmp_path_factory: pytest.TempPathFactory,
    mirror: Path,
    name: str,
    *overlays: str,
    local: dict[str, Any] | None = None,
    before_run=None,
    after: tuple[str, ...] = (),
) -> Build:
    """The build of ``overlays`` (checked-in test configs, in order) and ``local``, made once per test run: the
    first worker that asks builds it under a lock, the others find it built.

    ``after``: builds whose encodings hold this one's texts (over the shared caches): one that another worker is
    making is waited for, so that those texts are encoded once instead of twice at the same time (measured: the
    workflow and controlled builds, both started first, each encoding SQuAD's first three articles with MiniLM and
    USE). The test run's model conversion comes first: at a run's start it gives the worker making the other build
    the moment it needs to take that build's lock. A build nobody is making is not waited for."""
    root = run_root(tmp_path_factory) / "builds"
    root.mkdir(exist_ok=True)
    workdir, done = root / name, root / f"{name}.done"
    if after and not done.exists():
        converted_models_dir(tmp_path_factory)
        for other in after:
            wait_while_building(root, other)
    with FileLock(str(root / f"{name}.lock")):
        if not done.exists():
            build = Build.prepare(workdir, mirror, overlays, local, models=converted_models_dir(tmp_path_factory))
            if before_run is not None:
                before_run(workdir)
            build.run()
            done.touch()
    return Build.of(workdir, mirror, overlays, local)


def wait_while_building(root: Path, name: str) -> None:
    """Return once no other process holds the lock of build ``name`` (under ``root``): at once when none does."""
    lock = FileLock(str(root / f"{name}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        lock.acquire()  # the other worker's build ends (or fails: then this build encodes its own texts)
    lock.release()
