"""TREC run files: ``qid Q0 docid rank score tag``, one retrieved document a line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def write_trec_run(
    path: Path, qids: Sequence[str], doc_ids: Sequence[str], scores: np.ndarray, indices: np.ndarray, tag: str
) -> None:
    """One line per retrieved document; index -1 marks an empty slot and is skipped.

    Ids with whitespace would shift the columns of every later reader: they are refused here,
    naming the id (builders map user ids with ``posir.benchmark.safe_id``).
    """
    from posir.benchmark import check_id

    for qid in qids:
        check_id(qid, f"{path}: query")
    for doc_id in doc_ids:
        check_id(doc_id, f"{path}: document")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for qid, row_scores, row_indices in zip(qids, scores, indices):
            rank = 0
            for score, index in zip(row_scores, row_indices):
                if index < 0:
                    continue
                rank += 1
                out.write(f"{qid} Q0 {doc_ids[index]} {rank} {float(score):.6f} {tag}\n")


def write_ranked_run(path: Path, rankings: Mapping[str, Sequence[tuple[str, float]]], tag: str) -> None:
    """One line per (query, document) of ready rankings, best first (a reranked run)."""
    from posir.benchmark import check_id

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for qid, ranking in rankings.items():
            check_id(qid, f"{path}: query")
            for rank, (doc_id, score) in enumerate(ranking, start=1):
                check_id(doc_id, f"{path}: document")
                out.write(f"{qid} Q0 {doc_id} {rank} {float(score):.6f} {tag}\n")


def ranked(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[tuple[str, float]]]:
    """Each query's documents in trec_eval's order (score descending, ties by document id descending)."""
    return {qid: sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True) for qid, docs in run.items()}


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise ValueError(f"{path}, line {line_number}: a TREC run line has 6 fields (qid Q0 docid rank score tag)")
            run.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return run
