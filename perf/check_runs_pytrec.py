"""Every run of a finished workflow against pytrec_eval: its per-query nDCG@10 recomputed from the run file.

For each ``results/runs/<benchmark>/<model>/<setting>.trec`` the qrels are the positives its score file
names (one relevant document per query, ``doc_id``; in a one-vs-many setting, ``<lang>-mul``, every
language's copy ``<lang>:<doc_id>`` the run holds, as Multi-EuP counts them), the run is read with pandas
(not posir's reader), and
pytrec_eval's ``ndcg_cut.10`` over the whole run (trec_eval cuts and orders it itself) is compared with
the score file's ``ndcg@10``. Prints runs checked, queries, the largest difference and where.

    python perf/check_runs_pytrec.py results-dir/results [--jobs 2]
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
import pytrec_eval


def check_run(run_file: Path, score_file: Path) -> tuple[float, int]:
    """The largest |nDCG@10 (score file) - nDCG@10 (pytrec_eval on the run file)| over the run's queries."""
    scores = pd.read_csv(score_file, sep="\t", dtype={"qid": str, "doc_id": str})
    lines = pd.read_csv(
        run_file, sep=r"\s+", header=None, names=["qid", "q0", "doc", "rank", "score", "tag"], dtype={0: str, 2: str}
    )
    if run_file.stem.endswith("-mul"):
        languages = sorted({doc.split(":", 1)[0] for doc in lines["doc"] if ":" in doc})
        qrels = {row.qid: {f"{lang}:{row.doc_id}": 1 for lang in languages} for row in scores.itertuples()}
    else:
        qrels = {row.qid: {row.doc_id: 1} for row in scores.itertuples()}
    run: dict[str, dict[str, float]] = {}
    for qid, doc, score in zip(lines["qid"], lines["doc"], lines["score"]):
        run.setdefault(qid, {})[doc] = float(score)
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    reference = pd.Series({q: evaluated.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels})
    ours = scores.set_index("qid")["ndcg@10"]
    return float((ours - reference.reindex(ours.index)).abs().max()), len(ours)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--tolerance", type=float, default=1e-9)
    parser.add_argument("--jobs", type=int, default=1, help="processes checking runs side by side")
    args = parser.parse_args()
    pairs, missing = [], []
    for run_file in sorted((args.results / "runs").glob("*/*/*.trec")):
        relative = run_file.relative_to(args.results / "runs").with_suffix(".tsv")
        score_file = args.results / "scores" / relative
        if score_file.is_file():
            pairs.append((run_file, score_file))
        else:
            missing.append(str(relative))
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        checked = list(pool.map(check_run, *zip(*pairs))) if pairs else []
    queries = sum(n for _, n in checked)
    largest, where = max(
        ((d, str(r.relative_to(args.results))) for (d, _), (r, _) in zip(checked, pairs)), default=(0.0, "")
    )
    print(f"{len(checked)} runs, {queries} queries: largest |nDCG@10 - pytrec_eval| = {largest:.3g} ({where})")
    if missing:
        print(f"{len(missing)} runs without a score file: {missing[:5]}")
    sys.exit(0 if largest <= args.tolerance and not missing else 1)


if __name__ == "__main__":
    main()
