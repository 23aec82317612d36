"""Embeddings on disk: one ``.npy`` matrix per (model, text set) and a sidecar of ids.

The sidecar also records how many tokens of each text the model saw, since
truncation is a cause of position bias.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

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
