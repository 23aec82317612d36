"""Two finished runs of the same config, compared: per-query nDCG@10 of every run, and the tables (issue 20).

"Numbers unchanged" for a change that should not move them (a new job order, a GPU, another machine): every
``results/scores/<benchmark>/<model>/<setting>.tsv`` of one run against the same file of the other, query
by query, and every file under ``results/tables/`` (csv, md, tex) byte for byte. Prints the score files
compared, queries, the largest |nDCG@10 difference| and where, score files only one run has, and the
tables that differ; exits 1 on a difference beyond ``--tolerance``, a score file only one run has or a
differing table.

    python -m perf.compare_runs /tmp/run3/results /tmp/run1/results
"""

from __future__ import annotations

import argparse
import filecmp
import sys
from dataclasses import dataclass, field
from pathlib import Path

from perf.compare_models import per_query_difference


@dataclass
class ScoreComparison:
    """Per-query nDCG@10 of the score files two results directories share."""

    files: int = 0
    queries: int = 0
    largest: float = 0.0
    where: str = "no common score file"
    only_in_one: list[str] = field(default_factory=list)


def compare_scores(results: Path, other: Path) -> ScoreComparison:
    """The largest |nDCG@10 difference| over every query of every score file both runs have, and where."""
    comparison = ScoreComparison()
    mine = {p.relative_to(results) for p in (results / "scores").glob("*/*/*.tsv")}
    theirs = {p.relative_to(other) for p in (other / "scores").glob("*/*/*.tsv")}
    comparison.only_in_one = sorted(str(p) for p in mine ^ theirs)
    for relative in sorted(mine & theirs):
        difference, _, n = per_query_difference(results / relative, other / relative)
        comparison.files, comparison.queries = comparison.files + 1, comparison.queries + n
        if difference >= comparison.largest:
            comparison.largest, comparison.where = difference, str(relative)
    return comparison


def differing_tables(results: Path, other: Path) -> tuple[int, list[str]]:
    """Table files (under ``tables/``) either run has, and those differing or missing from one of them."""
    mine = {p.relative_to(results) for p in (results / "tables").rglob("*") if p.is_file()}
    theirs = {p.relative_to(other) for p in (other / "tables").rglob("*") if p.is_file()}
    same = {t for t in mine & theirs if filecmp.cmp(results / t, other / t, shallow=False)}
    return len(mine | theirs), sorted(str(t) for t in (mine | theirs) - same)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a finished run's results directory")
    parser.add_argument("other", type=Path, help="the results directory to compare it with")
    parser.add_argument("--tolerance", type=float, default=0.0, help="largest per-query difference that passes")
    args = parser.parse_args()
    scores = compare_scores(args.results, args.other)
    print(
        f"{scores.files} score files, {scores.queries} queries: largest |nDCG@10 difference| = "
        f"{scores.largest:.3g} ({scores.where})"
    )
    if scores.only_in_one:
        print(f"{len(scores.only_in_one)} score files only one run has: {scores.only_in_one[:5]}")
    tables, differ = differing_tables(args.results, args.other)
    print(f"{tables} tables, {tables - len(differ)} identical byte for byte")
    for table in differ:
        print(f"  differs: {table}")
    sys.exit(0 if scores.largest <= args.tolerance and not scores.only_in_one and not differ else 1)


if __name__ == "__main__":
    main()
