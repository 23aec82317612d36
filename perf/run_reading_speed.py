"""Reading runs' rankings in columns against line by line (posir.results.runs.iter_rankings), on a finished run.

Not a test: run it by hand on a run directory. Every run file is read both ways; the rankings must be equal, and the
files the column reader leaves to the line reader are counted.

    python -m perf.run_reading_speed /work/run55 [--limit N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from posir.results.runs import _plain_rankings, _rankings_line_by_line, iter_rankings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run directory (its results/runs)")
    parser.add_argument("--limit", type=int, default=None, help="read only the first N run files")
    args = parser.parse_args()
    files = sorted((args.run / "results" / "runs").rglob("*.trec"))[: args.limit]
    in_columns = by_lines = 0.0
    differ, left_to_lines = [], 0
    for path in files:
        start = time.perf_counter()
        columns = list(iter_rankings(path))
        in_columns += time.perf_counter() - start
        start = time.perf_counter()
        lines = list(_rankings_line_by_line(path))
        by_lines += time.perf_counter() - start
        left_to_lines += _plain_rankings(path) is None
        if columns != lines:
            differ.append(str(path))
    print(
        f"{len(files)} run files: {len(differ)} read differently, {left_to_lines} left to the line reader; "
        f"in columns {in_columns:.1f} s, line by line {by_lines:.1f} s ({by_lines / max(in_columns, 1e-9):.2f}x)"
    )
    for path in differ:
        print("differs:", path)


if __name__ == "__main__":
    main()
