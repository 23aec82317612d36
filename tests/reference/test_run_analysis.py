"""A run's summary, trend tests and position figure come from its benchmark's analysis job, which reads the files the
run's own job wrote (per-query scores, bins, bin intervals): what it writes is, byte for byte, what one process
writes from the tables it holds in memory (the path before the split). Real data: BM25 twice on a SQuAD-dev
long-document benchmark, so that each run's files are read for that run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from posir.jobs.evaluation import RunAnalysisJob
from posir.metrics.params import MetricParams
from posir.steps.evaluation import analyse_runs, bin_scores, bootstrap_scores, summarize_run
from tests._realdata import bm25_per_query, build_squad_benchmark

#: a small bootstrap and permutation count: the test compares two paths, it does not need tight intervals
METRICS = MetricParams.from_config({"bootstrap": {"resamples": 50}, "statistics": {"resamples": 199}})
RUNS = {"bm25": 1.5, "bm25-k1": 0.9}
SETTING = "eng-eng"


@pytest.fixture(scope="module")
def runs() -> dict[str, dict]:
    """Per run: the run job's files (per-query scores, bins, bands) and its in-memory per-query table and bins."""
    out = Path(tempfile.mkdtemp(prefix="posir-analysis-"))
    build_squad_benchmark(out / "bench", 4)
    written = {}
    for name, k1 in RUNS.items():
        per_query = bm25_per_query(out / "bench", out, name, k1=k1)
        files = {"per_query": out / f"{name}.tsv", "bins": out / f"{name}.bins.tsv", "bands": out / f"{name}.bb.tsv"}
        bins = bin_scores(per_query, METRICS, files["bins"])
        bootstrap_scores(per_query, METRICS, out / f"{name}.bootstrap.tsv", files["bands"])
        written[name] = {"files": files, "per_query": per_query, "bins": bins}
    return written


def test_the_analysis_job_writes_what_one_process_writes_from_memory(runs: dict[str, dict], tmp_path: Path) -> None:
    names = list(RUNS)
    outputs = {
        "summaries": [str(tmp_path / f"{n}.summary.tsv") for n in names],
        "trends": [str(tmp_path / f"{n}.trend.tsv") for n in names],
        "figures": [str(tmp_path / f"{n}.png") for n in names],
    }
    job = RunAnalysisJob(
        benchmark="squad-test",
        runs=[(n, SETTING) for n in names],
        languages_outside_model=[[], ["hin"]],
        metrics=METRICS,
        input={key: [str(runs[n]["files"][key]) for n in names] for key in ("per_query", "bins", "bands")},
        output=outputs,
    )
    analyse_runs(job)
    for i, name in enumerate(names):
        memory = tmp_path / "memory"
        memory.mkdir(exist_ok=True)
        summarize_run(
            runs[name]["per_query"],
            runs[name]["bins"],
            METRICS,
            memory / "summary.tsv",
            job.languages_outside_model[i],
            METRICS.statistics,
            memory / "trend.tsv",
        )
        assert Path(outputs["summaries"][i]).read_bytes() == (memory / "summary.tsv").read_bytes(), name
        assert Path(outputs["trends"][i]).read_bytes() == (memory / "trend.tsv").read_bytes(), name
        assert Path(outputs["figures"][i]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # each run's files are its own: two BM25 settings score differently, and only the second is flagged
    summaries = [Path(p).read_text() for p in outputs["summaries"]]
    assert summaries[0] != summaries[1]
    assert "\thin\t" not in summaries[0] and "\thin\t" in summaries[1]
