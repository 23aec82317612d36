"""TREC run files: ``qid Q0 docid rank score tag``, one retrieved document a line."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def write_trec_run(
    path: Path,
    qids: Sequence[str],
    doc_ids: Sequence[str],
    scores: np.ndarray,
    indices: np.ndarray,
    tag: str,
    head: int | None = None,
) -> dict[str, dict[str, float]] | None:
    """One line per retrieved document; index -1 marks an empty slot and is skipped.

    Ids with whitespace would shift the columns of every later reader: they are refused here,
    naming the id (builders map user ids with ``posir.benchmark.safe_id``).

    With ``head``, also returns the run as :func:`read_trec_run` would read it back, cut to what a measure of depth
    at most ``head`` can see: each query's first ``head`` documents and every later one whose written score ties
    with the last of them (trec_eval orders ties by document id, so any of them may be in its top ``head``). Its
    scores are the written ones read back, so a measure scores it as it scores the file. None where a query's
    scores do not fall down its row or a document comes twice: only the whole file then says what it holds.
    """
    from posir.benchmark import check_id

    for qid in qids:
        check_id(qid, f"{path}: query")
    for doc_id in doc_ids:
        check_id(doc_id, f"{path}: document")
    path.parent.mkdir(parents=True, exist_ok=True)
    kept: dict[str, dict[str, float]] | None = {} if head is not None else None
    with open(path, "w", encoding="utf-8") as out:
        # Python floats and ints (tolist) format several times faster than numpy scalars, to the same text
        for qid, row_scores, row_indices in zip(qids, np.asarray(scores).tolist(), np.asarray(indices).tolist()):
            ranked = [(index, score) for index, score in zip(row_indices, row_scores) if index >= 0]
            written = [f"{score:.6f}" for _, score in ranked]
            out.write(
                "".join(
                    f"{qid} Q0 {doc_ids[index]} {rank} {text} {tag}\n"
                    for rank, ((index, _), text) in enumerate(zip(ranked, written), start=1)
                )
            )
            if kept is not None and ranked:
                kept = _with_head(kept, qid, doc_ids, ranked, written, head)  # type: ignore[arg-type]
    return kept


def _with_head(
    kept: dict[str, dict[str, float]] | None,
    qid: str,
    doc_ids: Sequence[str],
    ranked: list[tuple[int, float]],
    written: list[str],
    head: int,
) -> dict[str, dict[str, float]] | None:
    """``kept`` with ``qid``'s head added (:func:`write_trec_run`); None once a row is out of order or repeats."""
    if kept is None:
        return None
    row_scores = [score for _, score in ranked]
    if any(later > earlier for earlier, later in zip(row_scores, row_scores[1:])):
        return None
    if len({index for index, _ in ranked}) < len(ranked):
        return None
    end = min(head, len(ranked))
    while end < len(ranked) and written[end] == written[end - 1]:
        end += 1
    kept[qid] = {doc_ids[index]: float(text) for (index, _), text in zip(ranked[:end], written[:end])}
    return kept


def write_ranked_run(path: Path, rankings: Mapping[str, Sequence[tuple[str, Any]]], tag: str) -> None:
    """One line per (query, document) of decided rankings, best first (a reranked run).

    The score column is the order itself: ``n - rank + 1`` for a ranking of ``n`` documents, distinct integers
    that every evaluator reads exactly (trec_eval and pytrec_eval read scores at float precision, so scores
    stepped apart by 1e-6 merge once they are larger than about 16, and ties are then broken by document id).
    Whatever the scorer's scores are (negative, tiny, huge, equal), the run is read in the decided order; the
    scores themselves are kept beside the run (:func:`write_ranking_scores`).
    """
    from posir.benchmark import check_id

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for qid, ranking in rankings.items():
            check_id(qid, f"{path}: query")
            for rank, (doc_id, _) in enumerate(ranking, start=1):
                check_id(doc_id, f"{path}: document")
                out.write(f"{qid} Q0 {doc_id} {rank} {len(ranking) - rank + 1} {tag}\n")


def write_ranking_scores(path: Path, rankings: Mapping[str, Sequence[tuple[str, float | None]]]) -> None:
    """The scores a ranking was decided by, one line per (query, document) with one (``qid doc_id rank score``;
    a document without a score, unscored or below the reranked depth, is not listed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write("qid\tdoc_id\trank\tscore\n")
        for qid, ranking in rankings.items():
            for rank, (doc_id, score) in enumerate(ranking, start=1):
                if score is not None:
                    out.write(f"{qid}\t{doc_id}\t{rank}\t{score!r}\n")


def ranked(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[tuple[str, float]]]:
    """Each query's documents in trec_eval's order (score descending, ties by document id descending)."""
    return {qid: sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True) for qid, docs in run.items()}


def _run_lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, the 6 fields) of each non-empty line of a TREC run file; a line of other fields is an error
    naming the file and the line."""
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise ValueError(
                    f"{path}, line {line_number}: a TREC run line has 6 fields (qid Q0 docid rank score tag)"
                )
            yield line_number, parts


def read_trec_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for _, parts in _run_lines(path):
        run.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return run


def iter_rankings(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(qid, document ids in trec_eval's order: score descending, then id descending) of each query of a run file,
    one query at a time (a run of 10,000 queries over a whole corpus is millions of lines). A query's lines must be
    consecutive, as every run the workflow writes has them; one split across the file is an error naming it."""
    from posir.metrics.per_query import trec_eval_order

    seen: set[str] = set()
    current: str | None = None
    scores: dict[str, float] = {}
    for line_number, parts in _run_lines(path):
        if parts[0] != current:
            if current is not None:
                yield current, trec_eval_order(scores)
            if parts[0] in seen:
                raise ValueError(
                    f"{path}, line {line_number}: query '{parts[0]}' continues after another query's lines"
                )
            current, scores = parts[0], {}
            seen.add(current)
        scores[parts[2]] = float(parts[4])
    if current is not None:
        yield current, trec_eval_order(scores)
