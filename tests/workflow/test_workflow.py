"""Snakemake end to end on a small config: real SQuAD articles, MiniLM and BM25."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval

from posir.benchmark import read_qrels
from posir.results.runs import read_trec_run
from tests._snakemake import Build, cores, planned_jobs
from tests.workflow.conftest import shared_build


@pytest.fixture(scope="session")
def build(tmp_path_factory, mirror, shared_caches) -> Build:
    """tests/configs/workflow.yaml: three SQuAD articles, every default model on English, the multilingual models
    on a few XQuAD settings, the analyses and the paper tables."""
    return shared_build(tmp_path_factory, mirror, "workflow", "workflow", local=shared_caches, after=("controlled",))


@pytest.fixture(scope="session")
def workdir(build: Build) -> Path:
    return build.workdir


def test_main_table_has_one_row_per_model_and_setting(workdir):
    table = pd.read_csv(workdir / "results/tables/squad-long/main.csv")
    assert sorted(table["model"]) == ["bm25", "me5-small", "minilm-l6", "minilm-l6-r2", "use-m3"]
    assert set(table["setting"]) == {"eng-eng"}
    n_queries = sum(1 for _ in open(workdir / "results/benchmarks/squad-long/queries.jsonl"))
    assert (table["n_queries"] == n_queries).all()
    assert {"ndcg@10", "ndcg@10_Q1", "ndcg@10_Q4", "psi", "psi_Q1", "psi_Q4"} <= set(table.columns)
    assert table["ndcg@10"].between(0, 1).all()
    assert (workdir / "results/tables/squad-long/main.md").read_text().startswith("| model")


def test_per_query_scores_equal_pytrec_eval_on_the_run_file(workdir):
    qrels = read_qrels(workdir / "results/benchmarks/squad-long/qrels/test.tsv")
    for model in ("minilm-l6", "bm25", "minilm-l6-r2", "me5-small", "use-m3"):
        run = read_trec_run(workdir / f"results/runs/squad-long/{model}/eng-eng.trec")
        reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        table = pd.read_csv(workdir / f"results/scores/squad-long/{model}/eng-eng.tsv", sep="\t", dtype={"qid": str})
        assert set(table["qid"]) == set(qrels)
        ours = dict(zip(table["qid"], table["ndcg@10"]))
        for qid in qrels:
            assert ours[qid] == pytest.approx(reference.get(qid, {}).get("ndcg_cut_10", 0.0))
    dense = pd.read_csv(workdir / "results/scores/squad-long/minilm-l6/eng-eng.tsv", sep="\t")
    assert (dense["doc_input_tokens"] <= 256).all()  # MiniLM truncates: what the model saw is recorded


def test_renormalized_model_reuses_embeddings_and_changes_the_ranking(workdir):
    assert not (workdir / "results/embeddings/minilm-l6-r2").exists()  # no second encoding
    assert (workdir / "results/embeddings/minilm-l6/python-docs/corpus.mean.npy").is_file()
    base = read_trec_run(workdir / "results/runs/squad-long/minilm-l6/eng-eng.trec")
    renormalized = read_trec_run(workdir / "results/runs/squad-long/minilm-l6-r2/eng-eng.trec")
    assert base.keys() == renormalized.keys() and base != renormalized


def test_multilingual_settings_and_language_bias(workdir):
    table = pd.read_csv(workdir / "results/tables/xquad-parallel/main.csv")
    assert set(table["setting"]) == {"deu-deu", "deu-mul"}
    shares = pd.read_csv(workdir / "results/tables/xquad-parallel/language_bias.csv")
    for _, group in shares.groupby(["model", "query_language"]):
        assert abs(group["share"].sum() - 1) < 1e-9
    cross = pd.read_csv(workdir / "results/tables/xquad-long/main.csv")
    assert set(cross["setting"]) == {"deu-eng"} and (cross["n_queries"] > 0).all()
    # the English corpus is embedded once and shared by the cross-lingual setting
    assert (workdir / "results/embeddings/me5-small/squad-long/corpus.npy").is_file()
    assert not list((workdir / "results/embeddings/me5-small").glob("xquad-long*/corpus.npy"))


def test_every_run_has_its_position_trend_and_the_tables_flag_psi_on_a_trend(workdir):
    trend = pd.read_csv(workdir / "results/aggregates/squad-long/minilm-l6/eng-eng.trend.tsv", sep="\t")
    assert trend["bucket"].tolist() == ["all", "Q1", "Q2", "Q3", "Q4"]
    assert {
        "slope",
        "spearman_rho",
        "spearman_p",
        "psi_trend_significant",
        "thirds_permutation_p",
        "thirds_cliffs_delta",
    } <= set(trend.columns)
    table = pd.read_csv(workdir / "results/tables/squad-long/main.csv", keep_default_na=False)
    assert {"psi_trend", "psi_trend_p", "psi_trend_Q4", "psi_trend_p_Q4"} <= set(table.columns)
    flagged = table["psi_trend"].isin(["primacy", "recency"])
    assert set(table["psi_trend"]) <= {"", "primacy", "recency"}
    assert ("§" in (workdir / "results/tables/squad-long/main.md").read_text()) == bool(flagged.any())
    trends = pd.read_csv(workdir / "results/tables/squad-long/trends.csv")
    assert len(trends) == 5 * 5 and set(trends["model"]) == set(table["model"])


def test_models_of_a_setting_are_compared_pairwise_with_holm(workdir):
    tests = pd.read_csv(workdir / "results/tables/squad-long/significance/eng-eng.csv")
    assert len(tests) == 10 * 5  # five models: ten pairs, overall and per bucket
    assert (tests["randomisation_p_holm"] >= tests["randomisation_p"]).all()
    assert (tests["significant"] == (tests["randomisation_p_holm"] < 0.05)).all()
    psi = pd.read_csv(workdir / "results/tables/squad-long/significance/eng-eng.psi.csv")
    defined = psi[["psi_difference_ci_low", "psi_difference_ci_high"]].notna().all(axis=1)  # NaN: too few bins
    assert defined.any() and (psi["psi_difference_ci_low"] <= psi["psi_difference_ci_high"])[defined].all()
    assert "Holm" in (workdir / "results/tables/squad-long/significance/eng-eng.md").read_text()
    assert (workdir / "results/tables/xquad-parallel/significance/deu-mul.tex").is_file()


def test_saliency_shows_minilms_unseen_tail_and_segments_their_similarity(workdir):
    pairs = pd.read_csv(workdir / "results/analyses/saliency/squad-long/minilm-l6.pairs.tsv", sep="\t")
    assert 0 < len(pairs) <= 6 and (pairs["n_seen_tokens"] <= 256).all()
    bins = pd.read_csv(workdir / "results/analyses/saliency/squad-long/minilm-l6.bins.tsv", sep="\t")
    assert len(bins) == 100
    unseen = bins["bin_start"] > pairs["seen_fraction"].max()
    assert unseen.any() and (bins.loc[unseen, "mean"] == 0).all() and (bins.loc[~unseen, "mean"] > 0).any()
    for model in ("minilm-l6", "use-m3"):
        summary = pd.read_csv(workdir / f"results/analyses/representation/squad-long/{model}.summary.tsv", sep="\t")
        overall = summary[summary["bucket"] == "all"]
        assert overall["segment"].tolist() == [0, 1, 2, 3] and overall["mean_cosine"].between(-1, 1).all()
        assert (workdir / f"results/figures/squad-long/segments-{model}.png").stat().st_size > 0
    assert (workdir / "results/figures/squad-long/saliency-minilm-l6.png").stat().st_size > 0


def test_outputs_people_open_are_there(workdir):
    for path in (
        "figures/squad-long/grid.png",
        "figures/squad-long/positions.png",
        "figures/squad-long/minilm-l6/eng-eng.png",
        "figures/squad-long/bm25/eng-eng.png",
        "benchmarks/squad-long/card.json",
        "benchmarks/squad-long/drops.tsv",
        "logs/build_benchmark/squad-long.log",
        "timing/encode_texts/minilm-l6/squad-long/corpus.tsv",
    ):
        assert (workdir / "results" / path).stat().st_size > 0, path


def test_rerun_has_nothing_to_do(build):
    dry = build.snakemake("-n", "--cores", cores())
    assert dry.returncode == 0
    assert "Nothing to be done" in dry.stdout + dry.stderr


def test_adding_a_model_entry_adds_only_that_models_jobs(build):
    config = build.config()
    evaluation = copy.deepcopy(config["evaluation"])
    evaluation[0]["models"].append("minilm-l6-bs16")
    entry = {**config["models"]["minilm-l6"], "batch_size": 16}
    added = {"models": {"minilm-l6-bs16": entry}, "evaluation": evaluation}
    jobs = build.planned(more=added)
    per_model = [(rule, w) for rule, w in jobs if "model" in w]
    assert per_model and all(w["model"] == "minilm-l6-bs16" for _, w in per_model)
    assert {rule for rule, _ in per_model} == {"encode_texts", "retrieve"}  # a first stage's retrieve scores its run
    others = {rule for rule, w in jobs if "model" not in w}
    # tables that list every model, the paired tests between the models of the setting, who gets seen, and the
    # summaries, trend tests and figures of the part of the benchmark's runs the new one joins
    assert others == {
        "main_table",
        "plot_position_grid",
        "paper_tables",
        "setting_tables",
        "exposure",
        "analyse_runs_squad_long_1",
        "all",
    }


def test_one_table_as_target_builds_only_what_it_needs(build):
    dry = build.snakemake("-n", "--cores", cores(), "--forceall", "results/tables/squad-long/main.csv")
    assert dry.returncode == 0
    rules = {rule for rule, _ in planned_jobs(dry.stdout)}
    assert "main_table" in rules and not rules & {"plot_position_grid", "plot_positional_distribution"}


def test_html_report(build):
    """The one report build of a test run (`make report` builds configs/ci.yaml's the same way, by hand)."""
    done = build.snakemake("--report", "report.html")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (build.workdir / "report.html").stat().st_size > 10_000


def test_bad_config_key_stops_the_run_naming_it(tmp_path, mirror):
    build = Build.prepare(tmp_path, mirror, ["workflow"], local={"metrics": {"position_binz": 20}})
    dry = build.snakemake("-n")
    assert dry.returncode != 0 and "position_binz" in dry.stdout + dry.stderr
