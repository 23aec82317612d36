"""Two finished runs of the same config, compared: per-query nDCG@10 of every run, and the tables.

"Numbers unchanged" for a change that should not move them (a new job order, a GPU, another machine): every
``results/scores/<benchmark>/<model>/<setting>.tsv`` of one run against the same file of the other, query
by query, and every file under ``results/tables/`` (csv, md, tex) byte for byte. Prints the score files
compared, queries, the largest |nDCG@10 difference| and where, score files only one run has, and the
tables that differ; exits 1 on a difference beyond ``--tolerance``, a score file only one run has or a
differing table. ``--per-run FILE`` writes, for a change that moves numbers on purpose, one row per score file:
queries, how many moved beyond 1e-4, the largest per-query difference, and the change of the run's nDCG@10
(points) and PSI; the printout then sums it up per model.

    python -m perf.compare_runs /tmp/run3/results /tmp/run1/results
    python -m perf.compare_runs /tmp/w1/results /tmp/w2/results --per-run /tmp/changes.csv
"""

from __future__ import annotations

import argparse
import filecmp
import sys
from dataclasses import dataclass, field
from pathlib import Path

from posir.results.schemas import PSI, QUERY_MEAN
from posir.tools.compare_models import NDCG_POINTS, TOLERANCE, per_query_difference, summary


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


def per_run_changes(results: Path, other: Path) -> list[dict[str, object]]:
    """Per score file both runs have: queries, moved beyond TOLERANCE, largest per-query difference, and the
    change of the run's nDCG@10 query mean (points) and PSI, ``results`` minus ``other``."""
    rows: list[dict[str, object]] = []
    for path in sorted((results / "scores").glob("*/*/*.tsv")):
        relative = path.relative_to(results)
        if not (other / relative).is_file():
            continue
        benchmark, model, setting = relative.parts[1], relative.parts[2], path.stem
        largest, moved, queries = per_query_difference(path, other / relative)
        if not (results / "aggregates" / benchmark / model / f"{setting}.summary.tsv").is_file():
            raise FileNotFoundError(f"{results}: no aggregates for {relative}; is the run finished?")
        mine, theirs = summary(results, benchmark, model, setting), summary(other, benchmark, model, setting)
        rows.append(
            {
                "benchmark": benchmark,
                "model": model,
                "setting": setting,
                "queries": queries,
                f"moved_over_{TOLERANCE:g}": moved,
                "largest_per_query": largest,
                NDCG_POINTS: 100 * (mine[QUERY_MEAN] - theirs[QUERY_MEAN]),
                PSI: mine[PSI] - theirs[PSI],
            }
        )
    return rows


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
    parser.add_argument("--per-run", type=Path, help="write each score file's changes here (csv)")
    args = parser.parse_args()
    if args.per_run:
        import pandas as pd

        changes = pd.DataFrame(per_run_changes(args.results, args.other))
        changes.to_csv(args.per_run, index=False)
        moved = f"moved_over_{TOLERANCE:g}"
        by_model = changes.groupby("model").agg(
            runs=("setting", "size"),
            queries=("queries", "sum"),
            moved=(moved, "sum"),
            largest_per_query=("largest_per_query", "max"),
            largest_mean_change_points=(NDCG_POINTS, lambda v: v.abs().max()),
            largest_psi_change=(PSI, lambda v: v.abs().max()),
        )
        print(by_model.to_markdown(floatfmt=".3g"))
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
