"""TREC run files: ``qid Q0 docid rank score tag``, one retrieved document a line."""

from __future__ import annotations

import codecs
import re
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
    one query at a time, in the file's order. A query's lines must be consecutive, as every run the workflow writes
    has them; one split across the file is an error naming it.

    A run as the workflow writes it (:func:`_plain_rankings`) is read in columns, several times faster than line by
    line (a run of 10,000 queries over a whole corpus is millions of lines); any other file is read a line at a time,
    which says what is wrong with it. Both give the same rankings (tests/unit/test_run_reading.py)."""
    plain = _plain_rankings(path)
    yield from plain if plain is not None else _rankings_line_by_line(path)


def _rankings_line_by_line(path: Path) -> Iterator[tuple[str, list[str]]]:
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


_RUN_COLUMNS = ["qid", "q0", "doc_id", "rank", "score", "tag"]
#: what ``str.split`` splits a line at besides the space and the newline (every ``str.isspace`` character), in UTF-8
_OTHER_WHITESPACE = [
    c.encode()
    for c in "\t\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
]
_ASCII_WHITESPACE = [c for c in _OTHER_WHITESPACE if len(c) == 1]


def _after_lead_byte() -> dict[bytes, re.Pattern[bytes]]:
    """Per first byte of the others, a pattern of them all (their common first byte written once, so that the
    regex engine skips to it as a byte search does)."""
    by_lead: dict[bytes, list[bytes]] = {}
    for c in _OTHER_WHITESPACE:
        if len(c) > 1:
            by_lead.setdefault(c[:1], []).append(c[1:])
    return {
        lead: re.compile(re.escape(lead) + b"(?:" + b"|".join(re.escape(rest) for rest in rests) + b")")
        for lead, rests in by_lead.items()
    }


_SEVERAL_BYTE_WHITESPACE = _after_lead_byte()


def _splits_elsewhere(data: bytes) -> bool:
    """Whether UTF-8 ``data`` holds a character ``str.split`` splits at other than the space and the newline: a
    byte search for each ASCII one and for the first byte of the others (a pattern only where that byte is)."""
    if any(c in data for c in _ASCII_WHITESPACE):
        return True
    if data.isascii():
        return False
    return any(lead in data and pattern.search(data) for lead, pattern in _SEVERAL_BYTE_WHITESPACE.items())


def _lines_and_spaces(path: Path, block: int = 1 << 24) -> tuple[int, int] | None:
    """How many lines and spaces a file holds, read a block at a time; None where it holds whitespace that
    ``str.split`` splits at other than the space and the newline (:func:`_splits_elsewhere`), or starts with a byte
    order mark (pandas drops it; the line reader keeps it, in the first query's id)."""
    lines = spaces = 0
    tail = last = b""
    with open(path, "rb") as handle:
        if handle.read(3) == codecs.BOM_UTF8:
            return None
        handle.seek(0)
        while data := handle.read(block):
            # the block searched after the last two bytes before it: a character of three bytes may start there
            if _splits_elsewhere(tail + data):
                return None
            lines += data.count(b"\n")
            spaces += data.count(b" ")
            tail, last = (tail + data)[-2:], data[-1:]
    return lines + (last not in (b"", b"\n")), spaces


def _plain_rankings(path: Path) -> Iterator[tuple[str, list[str]]] | None:
    """The rankings of a plain run file, read whole in columns by pandas' C parser and ordered by numpy; None for a
    file that is not plain: not UTF-8, a line that is not six fields one space apart, a blank line, a score that
    pandas does not read as a number or that is NaN (where pandas reads one, ``float`` reads the same bits), a query
    whose lines are not consecutive, a document twice in one query, query or document ids that all read as
    numbers. The order is :func:`trec_eval_order`'s: ids compared by Python's string order, equal scores (``0.0``
    and ``-0.0`` too) by id descending."""
    import csv

    import pandas as pd
    from pandas.api.types import is_string_dtype

    # counted in a pass of its own, a block at a time: memory holds the parsed columns, never the file's bytes
    counted = _lines_and_spaces(path)
    if counted is None:
        return None
    lines, spaces = counted
    try:
        frame = pd.read_csv(
            path,
            sep=" ",
            header=None,
            names=_RUN_COLUMNS,
            usecols=["qid", "doc_id", "score", "tag"],
            dtype={"qid": "category", "doc_id": "category", "score": np.float64, "tag": "category"},
            engine="c",
            na_filter=False,
            quoting=csv.QUOTE_NONE,
        )
    except ValueError:  # pandas' ParserError and EmptyDataError are ValueErrors
        return None
    # six fields a line: none has fewer (its tag, or its score, would be empty) and the file has five spaces a line,
    # so none has more (pandas reading four columns does not count them) nor an empty field
    if frame.empty or len(frame) != lines or spaces != 5 * lines or (frame["tag"] == "").any():
        return None
    queries, documents = frame["qid"].cat, frame["doc_id"].cat
    if not (is_string_dtype(queries.categories) and is_string_dtype(documents.categories)):
        return None  # ids that all read as numbers are parsed as numbers ("007" as 7): only the text says them
    query_codes, doc_codes = queries.codes.to_numpy(), documents.codes.to_numpy().astype(np.int64)
    scores = frame["score"].to_numpy()
    same_query = query_codes[1:] == query_codes[:-1]
    starts = np.flatnonzero(np.r_[True, ~same_query])
    if len(starts) != len(queries.categories) or np.isnan(scores).any():
        return None
    query_index = np.cumsum(np.r_[False, ~same_query])
    n_docs = len(documents.categories)
    if pd.Series(query_index * n_docs + doc_codes).duplicated().any():
        return None
    doc_ids = documents.categories.tolist()
    by_python_order = sorted(range(n_docs), key=doc_ids.__getitem__)
    doc_rank = np.empty(n_docs, dtype=np.int64)
    doc_rank[by_python_order] = np.arange(n_docs)
    order = _trec_eval_order(query_index, same_query, scores, doc_rank[doc_codes], n_docs)
    ranked_ids = np.asarray(doc_ids, dtype=object)[doc_codes if order is None else doc_codes[order]].tolist()
    qids = queries.categories.tolist()
    ends = [*starts[1:].tolist(), len(frame)]
    return ((qids[query_codes[start]], ranked_ids[start:end]) for start, end in zip(starts.tolist(), ends))


def _trec_eval_order(
    query_index: np.ndarray, same_query: np.ndarray, scores: np.ndarray, doc_rank: np.ndarray, n_docs: int
) -> np.ndarray | None:
    """The permutation that puts each query's lines (consecutive, ``query_index`` rising) in trec_eval's order:
    score descending, then ``doc_rank`` (the id's place in Python's string order) descending; None where the lines
    are in it already."""
    if np.any(same_query & (scores[:-1] < scores[1:])):
        return np.lexsort((-doc_rank, -scores, query_index))
    # scores already fall down each query, as the workflow writes them: only runs of equal scores need their
    # documents put in id order, a stable sort of (run of equal scores, id descending)
    tie_run = np.cumsum(np.r_[False, ~same_query | (scores[:-1] != scores[1:])])
    key = tie_run * n_docs + (n_docs - 1 - doc_rank)
    return None if np.all(key[1:] > key[:-1]) else np.argsort(key, kind="stable")
