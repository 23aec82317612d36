"""Real per-query tables for the paper-table tests: SQuAD v1.1 dev as a long-document benchmark, BM25 runs.

Built once per test session with the workflow's own step functions, from the
shared data directory (``POSIR_TEST_DATA``, default ``../shared/data``).
"""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from posir.config import MetricParams

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("POSIR_TEST_DATA", REPO.parent / "shared" / "data"))
SQUAD = DATA / "squad" / "dev-v1.1.json"
EXCERPT = DATA / "posir-published" / "2_models_eval_metrics.json"
METRICS = MetricParams.from_section({})


def require(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"real data file {path} is not available (set POSIR_TEST_DATA)")
    return path


@lru_cache(maxsize=2)
def squad_bm25_per_query(max_articles: int | None = 12) -> pd.DataFrame:
    """Per-query nDCG@10 with evidence positions: BM25 on a SQuAD-dev long-document benchmark."""
    from posir import steps
    from posir.models.spec import ModelSpec

    require(SQUAD)
    out = Path(tempfile.mkdtemp(prefix="posir-test-"))
    entry = {"builder": "squad_long_documents", "language": "eng", "sources": {"squad": "squad"},
             "params": {"seed": 13, "max_articles": max_articles}}
    steps.build_benchmark("squad-test", entry, {"squad": SQUAD}, METRICS, out / "bench")
    spec = ModelSpec.from_config("bm25", {"backend": "bm25", "params": {"k1": 1.5, "b": 0.75}})
    steps.lexical_search(spec, out / "bench" / "queries.jsonl", out / "bench" / "corpus.jsonl", "eng", "eng", 100,
                         out / "run.trec")
    return steps.score_run(out / "bench" / "qrels" / "test.tsv", out / "bench" / "positions.tsv", out / "run.trec",
                           out / "per_query.tsv")
