"""Where a test run's time went: each worker's long modules in the order they ran, its idle tail, and the
``MODULE_SECONDS`` lines tests/conftest.py's scheduler reads (tests/README.md, "Workers").

    POSIR_TEST_TIMELINE=/tmp/timeline make test
    python -m perf.suite_timeline /tmp/timeline
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests._timeline import summary

if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m perf.suite_timeline DIR (the POSIR_TEST_TIMELINE folder of a test run)")
    print(summary(Path(sys.argv[1])))
