"""The figures of a GPU run: wall time, encode throughput per model, GPU utilisation and the largest per-query
nDCG@10 difference to a CPU run of the same config (``run``, for perf/gpu_run.sh); and, per entry that
configs/gpu.yaml puts on cuda, its runs' per-query nDCG@10 against the CPU run's (``entries``: after the GPU
config ran on vectors ``posir gpu-encode`` filed into a copy of the CPU run's results).

    python -m perf.gpu_report run WORKDIR --wall-s SECONDS [--cpu-results DIR]
    python -m perf.gpu_report entries RESULTS_COPY RESULTS
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

from posir.tools.compare_models import per_query_difference
from perf.compare_runs import compare_scores
from posir.tools.gpu_encode import merged_config

ENCODED = re.compile(r"(\d+) texts: (\d+) from the embedding cache, (\d+) encoded")


def encode_throughput(results: Path) -> pd.DataFrame:
    """Per model: texts encoded (cache hits excluded), encode seconds (results/timing), texts/s."""
    texts: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    for log in (results / "logs" / "encode_texts").glob("*/*/*.log"):
        model = log.relative_to(results / "logs" / "encode_texts").parts[0]
        found = ENCODED.findall(log.read_text(errors="replace"))
        if found:
            texts[model] += int(found[-1][2])
            timing = results / "timing" / "encode_texts" / log.relative_to(results / "logs" / "encode_texts")
            timing = timing.with_suffix(".tsv")
            if timing.is_file():
                seconds[model] += float(pd.read_csv(timing, sep="\t")["s"].iloc[0])
    rows = [(m, texts[m], seconds[m], texts[m] / seconds[m] if seconds[m] else float("nan")) for m in sorted(texts)]
    return pd.DataFrame(rows, columns=["model", "texts_encoded", "encode_s", "texts_per_s"])


def compare_entries(repo: Path, results: Path, cpu_results: Path) -> list[dict[str, Any]]:
    """Per entry configs/gpu.yaml puts on cuda: its score files in both runs, their queries, how many moved
    (nDCG@10 beyond posir.tools.compare_models.TOLERANCE), the largest per-query move and the largest move of a run's mean."""
    _, gpu = merged_config(repo)
    rows = []
    for name, entry in sorted(gpu["models"].items()):
        if not str(entry.get("device", "cpu")).startswith("cuda"):
            continue
        files = sorted(p.relative_to(results) for p in (results / "scores").glob(f"*/{name}/*.tsv"))
        largest, moved, queries, mean_move = 0.0, 0, 0, 0.0
        for relative in files:
            difference, differing, n = per_query_difference(results / relative, cpu_results / relative)
            largest, moved, queries = max(largest, difference), moved + differing, queries + n
            means = [pd.read_csv(r / relative, sep="\t")["ndcg@10"].mean() for r in (results, cpu_results)]
            mean_move = max(mean_move, abs(means[0] - means[1]))
        rows.append(
            {
                "model": name,
                "score_files": len(files),
                "queries": queries,
                "queries_moved": moved,
                "largest_query_difference": largest,
                "largest_run_mean_difference": mean_move,
            }
        )
        print(json.dumps(rows[-1]))
    return rows


def report_run(workdir: Path, wall_s: float, cpu_results: Path | None) -> None:
    results = workdir / "results"
    print(f"wall time: {wall_s / 60:.1f} min")
    print(encode_throughput(results).to_string(index=False))
    samples = workdir / "gpu-utilisation.csv"
    if samples.is_file() and samples.stat().st_size:
        gpu = pd.read_csv(samples, header=None, names=["time", "utilisation", "memory_mib"])
        print(
            f"GPU utilisation: mean {gpu['utilisation'].mean():.0f}%, busy (>0%) {(gpu['utilisation'] > 0).mean():.0%}"
            f" of {len(gpu)} s, peak memory {gpu['memory_mib'].max():.0f} MiB"
        )
    if cpu_results:
        scores = compare_scores(results, cpu_results / "results")
        print(f"largest per-query nDCG@10 difference to the CPU run: {scores.largest:.6f} ({scores.where})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parts = parser.add_subparsers(dest="part", required=True)
    run = parts.add_parser("run", help="a GPU run's wall time, encode throughput and utilisation (perf/gpu_run.sh)")
    run.add_argument("workdir", type=Path)
    run.add_argument("--wall-s", type=float, required=True)
    run.add_argument("--cpu-results", type=Path, help="a CPU run's workdir, to compare per-query nDCG@10 with")
    entries = parts.add_parser("entries", help="per GPU entry: per-query nDCG@10 against the CPU run")
    entries.add_argument("results", type=Path, help="the results/ the GPU config ran in")
    entries.add_argument("cpu_results", type=Path, help="the CPU run's results/")
    args = parser.parse_args()
    if args.part == "run":
        report_run(args.workdir, args.wall_s, args.cpu_results)
    else:
        compare_entries(Path.cwd(), args.results, args.cpu_results)


if __name__ == "__main__":
    main()
