"""The record formats every stage shares: JSONL, TSV tables with a header, JSON documents, each written whole.

The benchmark contract (:mod:`posir.benchmark`) writes its files with them, and so do the stages' own tables
(``drops.tsv``, ``counts.json``, a generation stage's records).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_table(path: Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def read_table(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def _json_default(value: Any) -> Any:
    """Sets (a scorer spec's frozensets, say) as sorted lists, so a card or counts file is stable across runs."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def write_json(path: Path, value: Any) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(
        json.dumps(value, indent=2, ensure_ascii=False, default=_json_default) + "\n", encoding="utf-8"
    )
