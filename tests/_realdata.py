"""Real per-query tables for the paper-table tests: SQuAD v1.1 dev as a long-document benchmark, BM25 runs.

Built once per test session with the workflow's own step functions, from the
real data mirror (``POSIR_MIRROR``, default ``../shared/data``).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pandas as pd
import pytest

from posir.metrics.params import MetricParams
from tests.conftest import mirror_dir

DATA = mirror_dir()
SQUAD = DATA / "squad" / "dev-v1.1.json"
EXCERPT = DATA / "posir-published" / "2_models_eval_metrics.json"
METRICS = MetricParams.from_config({})


def require(path: Path) -> Path:
    if not path.is_file():
        pytest.fail(f"real data file {path} is missing from the mirror {DATA} (set POSIR_MIRROR)")
    return path


def bm25_per_query(bench: Path, out: Path, name: str = "bm25", k1: float = 1.5, b: float = 0.75) -> pd.DataFrame:
    """Per-query nDCG@10 with evidence positions of BM25 (``k1``, ``b``) on the benchmark in ``bench``."""
    from posir.languages import Setting
    from posir.models.declarations.spec import ModelSpec
    from posir.steps.evaluation import score_run
    from posir.steps.retrieval import ranked_by_model

    spec = ModelSpec.from_config(name, {"backend": "bm25", "params": {"k1": k1, "b": b}})
    run = out / f"{name}.trec"
    ranked_by_model(
        spec, bench / "queries.jsonl", [bench / "corpus.jsonl"], ["eng"], [], Setting("eng", "eng"), 100, run
    )
    return score_run(bench / "qrels" / "test.tsv", bench / "positions.tsv", run, out / f"{name}.tsv")


@lru_cache(maxsize=2)
def squad_bm25_per_query(max_articles: int | None = 12) -> pd.DataFrame:
    """Per-query nDCG@10 with evidence positions: BM25 on a SQuAD-dev long-document benchmark."""
    require(SQUAD)
    out = Path(tempfile.mkdtemp(prefix="posir-test-"))
    # lru_cache keeps the table for the session, so the folder goes when the session does
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    build_squad_benchmark(out / "bench", max_articles)
    return bm25_per_query(out / "bench", out)


def build_squad_benchmark(
    out_dir: Path,
    max_articles: int | None = 12,
    name: str = "squad-test",
    metrics: MetricParams = METRICS,
    **params: object,
) -> dict:
    """A long-document benchmark from real SQuAD dev, written to ``out_dir`` by the workflow's own step."""
    from posir.builders.squad import SquadBenchmark
    from posir.plan.jobs import BuildJob
    from posir.steps.benchmarks import build_benchmark

    entry = SquadBenchmark.from_config(
        name,
        {
            "builder": "squad_long_documents",
            "language": "eng",
            "sources": {"squad": "squad"},
            "params": {"seed": 13, "max_articles": max_articles, **params},
        },
    )
    job = BuildJob(
        entry=entry,
        metrics=metrics.positions(),
        input={"squad": str(require(SQUAD))},
        output={"card": str(Path(out_dir) / "card.json")},
    )
    return build_benchmark(job)
