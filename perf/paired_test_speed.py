"""The paired randomisation test of two runs' per-query nDCG@10: scipy's permutation_test against
posir.metrics.significance.sign_flip_p, side by side on the same scores, with their p-values compared.

    python perf/paired_test_speed.py results/scores/squad-long/bm25/eng-eng.tsv \
        results/scores/squad-long/minilm-l6/eng-eng.tsv --resamples 6239 --repeat 3

The queries the two runs score alike are left out first, as the setting tables do (posir.metrics.significance.
randomisation_p); the seed is the setting tables' (13). Prints each side's best wall time of --repeat, the ratio,
and whether the p-values are equal.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from posir.metrics.significance import _mean_difference, sign_flip_p
from posir.metrics.trend import two_sided_permutation_p
from posir.results.io import read_result_tsv

SEED = 13


def best_time(function, repeat: int) -> tuple[float, float]:
    """(best wall seconds of ``repeat`` calls, the value the calls returned)."""
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scores_a")
    parser.add_argument("scores_b")
    parser.add_argument("--resamples", type=int, default=6239)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    a_table, b_table = read_result_tsv(args.scores_a), read_result_tsv(args.scores_b)
    joined = a_table[["qid", "ndcg@10"]].merge(b_table[["qid", "ndcg@10"]], on="qid", validate="one_to_one")
    a, b = joined["ndcg@10_x"].to_numpy(dtype=float), joined["ndcg@10_y"].to_numpy(dtype=float)
    differs = a != b
    a, b = a[differs], b[differs]
    print(f"{len(joined)} queries, {len(a)} scored differently, {args.resamples} resamples")
    scipy_s, scipy_p = best_time(
        lambda: two_sided_permutation_p(a, b, _mean_difference, "samples", args.resamples, SEED), args.repeat
    )
    ours_s, ours_p = best_time(lambda: sign_flip_p(a, b, args.resamples, SEED), args.repeat)
    print(f"scipy permutation_test: {scipy_s:.3f} s, p = {scipy_p!r}")
    print(f"sign_flip_p:            {ours_s:.3f} s, p = {ours_p!r}")
    print(f"ratio {scipy_s / ours_s:.1f}x; p-values {'equal' if scipy_p == ours_p else 'DIFFER'}")
    if not np.isclose(scipy_p, ours_p, rtol=0, atol=0):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
