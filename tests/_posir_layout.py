"""PosIR's published parquet layout (corpus.parquet, queries.parquet, qrels/test.parquet), written by tests from a
benchmark we built from real SQuAD documents, so an import can be compared with what it came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from posir.builders.posir_import import ImportSpec, import_subset
from posir.builders.squad import SquadParams, build_squad_long
from posir.config import MetricParams
from posir.text import qwen3_token_counter

SUBSET = "eng-Latn/squad"
METRICS = MetricParams.from_config({})


def one_article_benchmark(squad_dev: dict):
    """squad-long's builder on SQuAD dev's first article."""
    return build_squad_long(
        squad_dev, SquadParams.from_config({"max_articles": 1}), qwen3_token_counter(), METRICS.buckets, METRICS.n_bins
    )


def query_rows(built, positions, span=lambda p: [p.span_start, p.span_end]) -> list[dict[str, Any]]:
    """queries.parquet's rows for ``positions`` (``span`` writes pos_char_span, e.g. as parquet doubles)."""
    texts = {q.qid: q.text for q in built.queries}
    return [
        {
            "_id": p.qid,
            "text": texts[p.qid],
            "pos_char_span": span(p),
            "pos_char_length": p.doc_char_length,
            "pos_token_length": p.doc_token_length,
        }
        for p in positions
    ]


def write_layout(root: Path, built, texts: list[str | None], rows: list[dict], qrels: list[dict]) -> Path:
    """The subset's folder under ``root`` with these document texts, query rows and qrels."""
    folder = root / SUBSET
    (folder / "qrels").mkdir(parents=True)
    documents = {"_id": [d.doc_id for d in built.documents], "text": texts, "title": [d.title for d in built.documents]}
    pq.write_table(pa.table(documents), folder / "corpus.parquet")
    pq.write_table(pa.Table.from_pylist(rows), folder / "queries.parquet")
    pq.write_table(pa.Table.from_pylist(qrels), folder / "qrels" / "test.parquet")
    return folder


def import_layout(root: Path):
    """The subset under ``root`` read by the PosIR import (Qwen3 token counts, PosIR's bins and buckets)."""
    spec = ImportSpec.from_config({"path": str(root), "subset": SUBSET})
    return import_subset(spec, qwen3_token_counter(), METRICS.buckets, METRICS.n_bins)
