"""Where tests and measurements live, so that the marks and the fast lane stay true (tests/README.md).

Every test that runs Snakemake lives under tests/workflow/ or tests/faults/runs/, whose tests tests/conftest.py marks
`workflow`: the
fast lane (`pytest -m "not workflow"`) runs no Snakemake. tests/ holds tests, their helpers and the fixture makers
(tests/fixtures/, one command line: `python -m tests.fixtures`), perf/ holds measurement scripts, which neither the
package nor the tests import, and no perf module takes the name of a posir module.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO, TESTS, runs_snakemake

#: what starts Snakemake from a test: the helpers of tests/_snakemake.py and tests/workflow/driver.py, or the CLI
RUNS_SNAKEMAKE = re.compile(r"tests\._snakemake|tests\.workflow\.driver|\"-m\",\s*\"snakemake\"|snakemake\.cli")


def modules_of(folder: Path) -> list[Path]:
    return sorted(folder.rglob("test_*.py"))


@pytest.mark.parametrize("module", modules_of(TESTS), ids=lambda p: p.relative_to(TESTS).as_posix())
def test_only_workflow_tests_run_snakemake(module: Path) -> None:
    if runs_snakemake(module):
        return
    found = RUNS_SNAKEMAKE.search(module.read_text(encoding="utf-8"))
    assert not found, f"{module} runs Snakemake ({found.group(0)}): move it under tests/workflow/ or tests/faults/runs/"


def test_the_fast_lane_leaves_out_every_snakemake_run(request: pytest.FixtureRequest) -> None:
    """The marks come from the folder: a collected workflow test carries `workflow`, no other test does."""
    assert request.session.items
    for item in request.session.items:
        in_workflow = runs_snakemake(item.path)
        assert (item.get_closest_marker("workflow") is not None) == in_workflow, item.nodeid


def test_tests_hold_no_scripts_and_perf_holds_no_tests() -> None:
    main_block = re.compile(r"^if __name__ == .__main__.:", re.M)
    scripts = [p for p in TESTS.rglob("*.py") if main_block.search(p.read_text(encoding="utf-8"))]
    assert not scripts, f"measurement scripts belong in perf/: {scripts}"
    assert sorted(TESTS.rglob("__main__.py")) == [TESTS / "fixtures" / "__main__.py"], "one command line: the fixtures'"
    assert not list((REPO / "perf").rglob("test_*.py")), "tests belong in tests/"


def test_neither_the_package_nor_the_tests_import_a_measurement() -> None:
    """A fixture maker or tool that a test or the package needs lives in tests/fixtures/ or posir.tools, not perf/."""
    imports_perf = re.compile(r"^\s*(?:from|import)\s+perf\b", re.M)
    importers = [
        p.relative_to(REPO).as_posix()
        for folder in (TESTS, REPO / "src", REPO / "scripts")
        for p in folder.rglob("*.py")
        if imports_perf.search(p.read_text(encoding="utf-8"))
    ]
    assert not importers, f"these import perf/, which holds measurements only: {importers}"


def test_no_perf_module_shares_a_name_with_a_posir_module() -> None:
    posir = {p.stem for p in (REPO / "src" / "posir").rglob("*.py")} | {
        p.name for p in (REPO / "src" / "posir").rglob("*") if p.is_dir()
    }
    perf = {p.stem for p in (REPO / "perf").glob("*.py")} - {"__init__"}
    assert not perf & posir, f"perf modules named like posir modules: {sorted(perf & posir)}"
