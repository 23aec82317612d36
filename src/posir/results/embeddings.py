"""Embeddings on disk: one ``.npy`` matrix per (model, text set) and a sidecar of ids.

The sidecar also records how many tokens of each text the model saw, since
truncation is a cause of position bias. Multi-vector and sparse entries write their token vectors and sparse
vectors as rows of entries with a table of rows (:class:`RowSet`; docs/late-interaction.md, "On disk").
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


def save_embeddings(
    path: Path,
    ids: Sequence[str],
    vectors: np.ndarray,
    input_tokens: Sequence[int],
    spans: Sequence[tuple[int, int]] | None = None,
) -> None:
    """``spans`` (a chunked corpus): each row is a window ``[start, end)`` of its document, ids repeat."""
    if len(ids) != len(vectors) or len(ids) != len(input_tokens) or (spans is not None and len(spans) != len(ids)):
        raise ValueError(f"{path}: {len(ids)} ids, {len(vectors)} vectors, {len(input_tokens)} lengths")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.ascontiguousarray(vectors, dtype=np.float32))
    with open(sidecar_path(path), "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        if spans is None:
            writer.writerow(["id", "input_tokens"])
            writer.writerows(zip(ids, input_tokens))
        else:
            writer.writerow(["id", "input_tokens", "window_start", "window_end"])
            writer.writerows((i, t, s, e) for i, t, (s, e) in zip(ids, input_tokens, spans))


def sidecar_path(path: Path) -> Path:
    return Path(path).with_suffix(".ids.tsv")


def load_embeddings(path: Path) -> tuple[list[str], np.ndarray, list[int]]:
    vectors = np.load(path, mmap_mode="r")
    with open(sidecar_path(path), encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if len(rows) != len(vectors):
        raise ValueError(
            f"{path}: {len(vectors)} vectors but {len(rows)} ids in {sidecar_path(path)}; re-run the encode rule"
        )
    return [r["id"] for r in rows], np.asarray(vectors), [int(r["input_tokens"]) for r in rows]


# --- token vectors and sparse vectors (docs/late-interaction.md, "On disk") ------------------------------------


@dataclass(frozen=True)
class RowSet:
    """A multi-vector or sparse text set as written: the rows (a query, a document, a window) and their entries.

    ``entries`` are the token records (:data:`posir.models.rows.TOKEN_RECORD`) or term records
    (:data:`~posir.models.rows.TERM_RECORD`) of every row, row after row; row ``r``'s are
    ``entries[offsets[r]:offsets[r + 1]]``; ``vectors`` (multi-vector only) are aligned with them. ``windows`` are
    each row's ``(start, end)`` in its document for a chunked corpus, else None. Arrays read from disk are
    memory-mapped.
    """

    ids: list[str]
    input_tokens: list[int]
    offsets: np.ndarray
    entries: np.ndarray
    vectors: np.ndarray | None = None
    windows: list[tuple[int, int]] | None = None

    def row(self, index: int) -> slice:
        return slice(int(self.offsets[index]), int(self.offsets[index + 1]))


def row_set(rows: Sequence[Any], ids: Sequence[str], windows: Sequence[tuple[int, int]] | None = None) -> RowSet:
    """Rows (:class:`~posir.models.rows.TokenVectors` or :class:`~posir.models.rows.TermWeights`) as one
    :class:`RowSet`, their spans in the coordinates of their documents (a window's moved by its start)."""
    if windows is not None:
        rows = [row.shifted(start) for row, (start, _) in zip(rows, windows)]
    multi_vector = bool(rows) and hasattr(rows[0], "vectors")
    parts = [row.tokens if multi_vector else row.terms for row in rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(part) for part in parts])
    vectors = None
    if multi_vector:
        vectors = np.concatenate([row.vectors for row in rows]) if rows else None
    entries = np.concatenate(parts) if parts else np.zeros(0)
    return RowSet(list(ids), [row.input_tokens for row in rows], offsets, entries, vectors, _windows(windows))


def _windows(windows: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]] | None:
    return None if windows is None else [(int(s), int(e)) for s, e in windows]


def _write_rows(path: Path, rows: RowSet) -> None:
    if len(rows.ids) != len(rows.input_tokens) or len(rows.offsets) != len(rows.ids) + 1:
        raise ValueError(f"{path}: {len(rows.ids)} ids, {len(rows.input_tokens)} lengths, {len(rows.offsets)} offsets")
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        header = ["id", "input_tokens", "first_entry", "entries"]
        starts, counts = rows.offsets[:-1], np.diff(rows.offsets)
        if rows.windows is None:
            writer.writerow(header)
            writer.writerows(zip(rows.ids, rows.input_tokens, starts.tolist(), counts.tolist()))
        else:
            writer.writerow([*header, "window_start", "window_end"])
            writer.writerows(
                (i, t, f, n, s, e)
                for i, t, f, n, (s, e) in zip(
                    rows.ids, rows.input_tokens, starts.tolist(), counts.tolist(), rows.windows
                )
            )


def _read_rows(path: Path, entries: int, where: Path) -> tuple[list[str], list[int], np.ndarray, list | None]:
    with open(path, encoding="utf-8") as handle:
        table = list(csv.DictReader(handle, delimiter="\t"))
    offsets = np.zeros(len(table) + 1, dtype=np.int64)
    for index, row in enumerate(table):
        if int(row["first_entry"]) != offsets[index]:
            raise ValueError(
                f"{path}: row {index + 1} does not start where the row before ends; re-run the encode rule"
            )
        offsets[index + 1] = offsets[index] + int(row["entries"])
    if offsets[-1] != entries:
        raise ValueError(f"{path}: its rows hold {offsets[-1]} entries, {where} has {entries}; re-run the encode rule")
    windows = None
    if table and "window_start" in table[0]:
        windows = [(int(r["window_start"]), int(r["window_end"])) for r in table]
    return [r["id"] for r in table], [int(r["input_tokens"]) for r in table], offsets, windows


def save_token_vectors(paths: Mapping[str, str | Path], rows: RowSet) -> None:
    """A multi-vector text set: ``paths`` are :meth:`posir.results.paths.ResultPaths.token_vector_outputs`."""
    if rows.vectors is None or len(rows.vectors) != len(rows.entries):
        raise ValueError(f"{paths['vectors']}: token vectors and token records do not align")
    Path(paths["vectors"]).parent.mkdir(parents=True, exist_ok=True)
    np.save(paths["vectors"], np.ascontiguousarray(rows.vectors))
    np.save(paths["tokens"], np.ascontiguousarray(rows.entries))
    _write_rows(Path(paths["rows"]), rows)


def load_token_vectors(vectors_path: str | Path) -> RowSet:
    """A multi-vector text set written by :func:`save_token_vectors`, named by its ``.tokens.npy`` file."""
    vectors_path = Path(vectors_path)
    stem = str(vectors_path).removesuffix(".npy")
    vectors = np.load(vectors_path, mmap_mode="r")
    entries = np.load(f"{stem}.spans.npy", mmap_mode="r")
    if len(entries) != len(vectors):
        raise ValueError(
            f"{vectors_path}: {len(vectors)} vectors but {len(entries)} token records; re-run the encode rule"
        )
    ids, tokens, offsets, windows = _read_rows(Path(f"{stem}.rows.tsv"), len(entries), vectors_path)
    return RowSet(ids, tokens, offsets, entries, vectors, windows)


def save_sparse_vectors(paths: Mapping[str, str | Path], rows: RowSet) -> None:
    """A sparse text set: ``paths`` are :meth:`posir.results.paths.ResultPaths.sparse_vector_outputs`."""
    Path(paths["terms"]).parent.mkdir(parents=True, exist_ok=True)
    np.save(paths["terms"], np.ascontiguousarray(rows.entries))
    _write_rows(Path(paths["rows"]), rows)


def load_sparse_vectors(terms_path: str | Path) -> RowSet:
    """A sparse text set written by :func:`save_sparse_vectors`, named by its ``.sparse.npy`` file."""
    terms_path = Path(terms_path)
    entries = np.load(terms_path, mmap_mode="r")
    rows_path = Path(str(terms_path).removesuffix(".npy") + ".rows.tsv")
    ids, tokens, offsets, windows = _read_rows(rows_path, len(entries), terms_path)
    return RowSet(ids, tokens, offsets, entries, None, windows)
