"""Results out in MTEB's format: `snakemake mteb_export` writes, for every model and benchmark, a TaskResult that
mteb's own loader reads (`mteb.ResultCache(cache_path=...)`, `mteb.TaskResult.from_disk`), whose main score is our
per-query nDCG@10 mean and whose `posir_position_bias` holds our buckets, PSI and intervals, and a model_meta.json
that MTEB's ModelMeta reads back.

On the build of tests/configs/faults_run.yaml (one SQuAD article; BM25, MiniLM, BM25 -> MiniLM MaxP), shared
with tests/faults/runs.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests._snakemake import cores
from tests.workflow.conftest import shared_build

BENCHMARK, SETTING = "squad-long", "eng-eng"
MODELS = ("minilm-l6", "bm25", "bm25.minilm-maxp")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    build = shared_build(tmp_path_factory, mirror, "faults-run", "reports_off", "faults_run")
    copy = build.copy_to(tmp_path_factory.mktemp("mteb-export"))
    done = copy.snakemake("--cores", cores(), "mteb_export")
    assert done.returncode == 0, done.stderr[-4000:]
    return copy.workdir


def test_mtebs_loader_reads_every_result_with_our_ndcg_as_main_score(exported: Path) -> None:
    import mteb

    cache = mteb.ResultCache(cache_path=exported / "results" / "export" / "mteb")
    results = cache.load_results(models=[f"posir/{m}" for m in MODELS], include_remote=False)
    by_model = {r.model_name: r for r in results.model_results}
    assert set(by_model) == {f"posir/{m}" for m in MODELS}
    for model in MODELS:
        (task,) = by_model[f"posir/{model}"].task_results
        assert task.task_name == f"posir-{BENCHMARK}"
        per_query = pd.read_csv(exported / "results" / "scores" / BENCHMARK / model / f"{SETTING}.tsv", sep="\t")
        (subset,) = task.scores["test"]
        assert subset["hf_subset"] == SETTING and subset["languages"] == ["eng-Latn"]
        # TaskResult.to_disk rounds every score to 6 decimals, as MTEB's own results are written
        assert subset["main_score"] == subset["ndcg_at_10"] == round(per_query["ndcg@10"].mean(), 6)
        assert subset["recall_at_100"] == round(per_query["recall@100"].mean(), 6)


def test_the_position_bias_numbers_are_ours(exported: Path) -> None:
    import mteb

    path = exported / "results" / "export" / "mteb" / "results" / "posir__minilm-l6" / "no_revision_available"
    task = mteb.TaskResult.from_disk(path / f"posir-{BENCHMARK}.json")
    bias = task.scores["test"][0]["posir_position_bias"]
    aggregates = exported / "results" / "aggregates" / BENCHMARK / "minilm-l6"
    summary = pd.read_csv(aggregates / f"{SETTING}.summary.tsv", sep="\t").set_index("bucket")
    bootstrap = pd.read_csv(aggregates / f"{SETTING}.bootstrap.tsv", sep="\t").set_index("bucket")
    assert bias["psi"] == round(summary.loc["all", "psi"], 6)
    assert bias["psi_ci"] == [round(v, 6) for v in bootstrap.loc["all", ["psi_ci_low", "psi_ci_high"]]]
    assert bias["ndcg_at_10_bin_mean"] == round(summary.loc["all", "ndcg@10_bin_mean"], 6)
    for bucket, numbers in bias["length_buckets"].items():
        assert numbers["n_queries"] == summary.loc[bucket, "n_queries"]
        if numbers["n_queries"] == 0:
            assert numbers["ndcg_at_10_bin_mean"] is None and numbers["psi"] is None
    assert sum(b["n_queries"] for b in bias["position_bins"]) == summary.loc["all", "n_queries"]
    assert len(bias["position_bins"]) == 20
    assert Path(bias["per_query_scores"]).as_posix().endswith(f"scores/{BENCHMARK}/minilm-l6/{SETTING}.tsv")


def test_model_meta_names_the_entry_and_what_it_was_adapted_from(exported: Path) -> None:
    from mteb.models.model_meta import ModelMeta

    root = exported / "results" / "export" / "mteb" / "results"
    minilm = ModelMeta.model_validate_json_resolved(
        (root / "posir__minilm-l6" / "no_revision_available" / "model_meta.json").read_text()
    )
    assert minilm.name == "posir/minilm-l6" and minilm.adapted_from == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.n_parameters == 22713216  # MTEB's own metadata of the public model
    pipeline = ModelMeta.model_validate_json_resolved(
        (root / "posir__bm25.minilm-maxp" / "no_revision_available" / "model_meta.json").read_text()
    )
    assert pipeline.name == "posir/bm25.minilm-maxp" and pipeline.adapted_from is None
