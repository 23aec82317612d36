"""tests/_timeline.py: the test run's timeline read back into each worker's modules and the scheduler's lines."""

from __future__ import annotations

import json
from pathlib import Path

from tests._timeline import LISTED_FROM_S, summary


def _write(folder: Path, worker: str, tests: list[tuple[str, float, float, float]]) -> None:
    with (folder / f"{worker}.jsonl").open("w") as handle:
        for test, start, end, cpu in tests:
            handle.write(json.dumps({"worker": worker, "test": test, "start": start, "end": end, "cpu": cpu}) + "\n")


def test_a_module_spans_its_first_tests_start_to_its_last_tests_end_on_its_worker(tmp_path: Path) -> None:
    _write(tmp_path, "gw0", [("tests/a/test_long.py::one", 100, 150, 40), ("tests/a/test_long.py::two", 150, 400, 9)])
    _write(tmp_path, "gw1", [("tests/b/test_short.py::x", 100, 110, 10), ("tests/b/test_mid.py::y", 110, 130, 5)])
    text = summary(tmp_path)
    assert "the run's tests took 300 s" in text
    assert "gw1: idle for the last 270 s" in text and "gw0: idle for the last 0 s" in text
    assert "300 s on the worker     49 CPU s  tests/a/test_long.py" in text
    listed = text.split("MODULE_SECONDS (tests/conftest.py):\n", 1)[1].splitlines()
    # longest first, and nothing under the threshold
    assert listed == ['    "a/test_long.py": 300,', '    "b/test_mid.py": 20,']
    assert 10 < LISTED_FROM_S <= 20
