"""The figures of a GPU run (perf/gpu_run.sh): wall time, encode throughput per model, GPU utilisation and the
largest per-query nDCG@10 difference to a CPU run of the same config.

    python -m perf.gpu_report WORKDIR --wall-s SECONDS [--cpu-results DIR]
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

import pandas as pd

from perf.compare_runs import compare_scores

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--wall-s", type=float, required=True)
    parser.add_argument("--cpu-results", type=Path)
    args = parser.parse_args()
    results = args.workdir / "results"
    print(f"wall time: {args.wall_s / 60:.1f} min")
    print(encode_throughput(results).to_string(index=False))
    samples = args.workdir / "gpu-utilisation.csv"
    if samples.is_file() and samples.stat().st_size:
        gpu = pd.read_csv(samples, header=None, names=["time", "utilisation", "memory_mib"])
        print(
            f"GPU utilisation: mean {gpu['utilisation'].mean():.0f}%, busy (>0%) {(gpu['utilisation'] > 0).mean():.0%}"
            f" of {len(gpu)} s, peak memory {gpu['memory_mib'].max():.0f} MiB"
        )
    if args.cpu_results:
        scores = compare_scores(results, args.cpu_results / "results")
        print(f"largest per-query nDCG@10 difference to the CPU run: {scores.largest:.6f} ({scores.where})")


if __name__ == "__main__":
    main()
