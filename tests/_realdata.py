"""Real per-query tables for the paper-table tests: SQuAD v1.1 dev as a long-document benchmark, BM25 runs.

Built once per test session with the workflow's own step functions, from the
real data mirror (``POSIR_MIRROR``, default ``../shared/data``).
"""

from __future__ import annotations

import tempfile
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from posir.config import MetricParams

from tests.conftest import mirror_dir

DATA = mirror_dir()
SQUAD = DATA / "squad" / "dev-v1.1.json"
EXCERPT = DATA / "posir-published" / "2_models_eval_metrics.json"
METRICS = MetricParams.from_config({})


def require(path: Path) -> Path:
    if not path.is_file():
        pytest.fail(f"real data file {path} is missing from the mirror {DATA} (set POSIR_MIRROR)")
    return path


@lru_cache(maxsize=2)
def squad_bm25_per_query(max_articles: int | None = 12) -> pd.DataFrame:
    """Per-query nDCG@10 with evidence positions: BM25 on a SQuAD-dev long-document benchmark."""
    from posir.config import Setting
    from posir.models.spec import ModelSpec
    from posir.steps.benchmarks import build_benchmark
    from posir.steps.evaluation import score_run
    from posir.steps.retrieval import lexical_search

    require(SQUAD)
    out = Path(tempfile.mkdtemp(prefix="posir-test-"))
    entry = {"builder": "squad_long_documents", "language": "eng", "sources": {"squad": "squad"},
             "params": {"seed": 13, "max_articles": max_articles}}
    build_benchmark("squad-test", entry, {"squad": SQUAD}, METRICS, out / "bench")
    spec = ModelSpec.from_config("bm25", {"backend": "bm25", "params": {"k1": 1.5, "b": 0.75}})
    lexical_search(spec, out / "bench" / "queries.jsonl", [out / "bench" / "corpus.jsonl"], ["eng"], [],
                   Setting("eng", "eng"), 100, out / "run.trec")
    return score_run(out / "bench" / "qrels" / "test.tsv", out / "bench" / "positions.tsv", out / "run.trec",
                           out / "per_query.tsv")
