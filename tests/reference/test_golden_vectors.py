"""Every backend, output and long-input mode the tests can run gives the vectors stored in ``tests/data/golden/`` for
fixed texts, unless its version moved (tests/fixtures/golden_vectors.py).

Cached vectors are keyed on what shapes them, not on our code (posir.models.identity): the weights' identity, the
libraries, the entry's keys and a version each implementation declares (posir.models.declarations.backends). Code may
change freely as long as the vectors do not; a change that moves a vector must raise the version of what moved it, so
that no cache serves the old vector under the new code. This test holds that: a vector that differs from its golden
with its versions unchanged fails. The goldens were made by 0c5626e, the last checkout that keyed on code: the
vectors of every cache it wrote are these.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.golden_vectors import CASES, GOLDEN_DIR, MANIFEST, differences, encode_case, versions_of, workspace

MANIFEST_DATA = json.loads((GOLDEN_DIR / MANIFEST).read_text())
REMAKE = "python -m tests.fixtures golden-vectors --only {}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, converted_models: Path) -> Path:
    place = tmp_path_factory.mktemp("golden")
    (place / "results").mkdir()
    (place / "results" / "models").symlink_to(converted_models)
    return place


def test_every_case_has_goldens() -> None:
    assert set(MANIFEST_DATA) == set(CASES)
    assert all((GOLDEN_DIR / f"{name}.npz").is_file() for name in CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_vectors_move_only_with_their_version(name: str, root: Path) -> None:
    with workspace(root):
        recorded, current = MANIFEST_DATA[name]["versions"], versions_of(name, root)
        moved = differences(encode_case(name, root), dict(np.load(GOLDEN_DIR / f"{name}.npz")))
    if current == recorded:
        assert not moved, (
            f"{name}: {'; '.join(moved)}, with the versions unchanged ({current}): a cache would serve the old vectors "
            f"under the new code. Raise the version of what changed them (posir.models.declarations.backends) and "
            f"remake the goldens ({REMAKE.format(name)})"
        )
    else:
        assert moved, (
            f"{name}: versions {recorded} -> {current}, vectors unchanged: {REMAKE.format(name)} --record-versions"
        )
        pytest.fail(
            f"{name}: versions {recorded} -> {current}, the vectors moved: remake its goldens ({REMAKE.format(name)})"
        )
