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
from filelock import FileLock

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
) -> Build:
    """The build of ``overlays`` (checked-in test configs, in order) and ``local``, made once per test run: the
    first worker that asks builds it under a lock, the others find it built."""
    root = run_root(tmp_path_factory) / "builds"
    root.mkdir(exist_ok=True)
    workdir, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.exists():
            build = Build.prepare(workdir, mirror, overlays, local, models=converted_models_dir(tmp_path_factory))
            if before_run is not None:
                before_run(workdir)
            build.run()
            done.touch()
    return Build.of(workdir, mirror, overlays, local)
