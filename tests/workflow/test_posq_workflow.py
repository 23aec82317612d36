"""Zeng et al.'s benchmarks through the workflow: SQuAD-PosQ on SQuAD v1.1 dev scored by BM25 against a
reimplementation of their recipe (bm25s configured as theirs, scikit-learn's ``ndcg_score`` over the top 100), and a
benchmark in FineWeb-PosQ's row format whose positions are labels only: its groups' table, no span analysis, its
MTEB export."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from posir.sources import sha256_of
from tests._snakemake import Build
from tests.fixtures.posq_rows import posq_rows, write_jsonl

GROUPS_TABLE = "results/tables/{}/position_groups.csv"
PAPER_GROUPS = [(0, 100), (100, 200), (200, 300), (300, 400), (400, 500), (500, 10**9)]


def zeng_recipe(squad: dict) -> tuple[list[int], list[float], float]:
    """Zeng et al.'s exp_SQuAD-PosQ.py and utils.find_topk_by_bm25, rewritten: every answerable question a query
    judged against the paragraph its text was last asked of, the corpus the sorted distinct paragraphs, bm25s over
    English stopwords and the Snowball stemmer (queries stemmed only), the top 100, and per group scikit-learn's
    ndcg_score@10 of the binary hits; groups by the first answer's start, every bound inclusive."""
    import bm25s
    import Stemmer
    from sklearn.metrics import ndcg_score

    asked, passages, paragraph_of = [], [], {}
    for article in squad["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                if qa["answers"]:
                    asked.append((qa["question"], qa["answers"][0]["answer_start"]))
                    paragraph_of[qa["question"]] = paragraph["context"]
            passages.append(paragraph["context"])
    passages = sorted(set(passages))
    index = {text: i for i, text in enumerate(passages)}
    labels = np.array([[index[paragraph_of[question]]] for question, _ in asked])
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(passages, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    queries = bm25s.tokenize([q for q, _ in asked], stemmer=stemmer, show_progress=False)
    found, scores = retriever.retrieve(queries, k=100, show_progress=False)
    counts, means = [], []
    for low, high in PAPER_GROUPS:
        chosen = [i for i, (_, start) in enumerate(asked) if low <= start <= high]
        counts.append(len(chosen))
        means.append(float(ndcg_score(found[chosen] == labels[chosen], scores[chosen], k=10)))
    return counts, means, 1 - min(means) / max(means)


@pytest.fixture(scope="module")
def build(tmp_path_factory, mirror, squad_dev) -> Build:
    workdir = tmp_path_factory.mktemp("posq")
    rows = write_jsonl(posq_rows(squad_dev), workdir / "mirror" / "posq.jsonl")
    local = {
        "mirrors": [str(rows.parent)],
        "sources": {"posq_rows": {"url": "https://example.invalid/posq.jsonl", "sha256": sha256_of(rows)}},
    }
    return Build.prepare(workdir, mirror, ["reports_off", "posq"], local).run(
        GROUPS_TABLE.format("squad-posq-dev"),
        GROUPS_TABLE.format("posq-rows"),
        "results/export/mteb/results/posir__bm25/no_revision_available/posir-posq-rows.json",
    )


@pytest.fixture()
def squad_groups(build) -> pd.DataFrame:
    return pd.read_csv(build.workdir / GROUPS_TABLE.format("squad-posq-dev"))


def test_bm25_on_squad_posq_dev_equals_zeng_et_als_recipe(squad_groups, squad_dev):
    counts, means, psi = zeng_recipe(squad_dev)
    ours = squad_groups[squad_groups["source"] == "this workflow"].sort_values("group_order")
    assert ours["group"].tolist() == ["0-100", "100-200", "200-300", "300-400", "400-500", "500+"]
    assert ours["n_queries"].astype(int).tolist() == counts
    assert np.abs(100 * ours["ndcg@10"].to_numpy() - 100 * np.array(means)).max() < 0.5
    assert abs(ours["psi"].iloc[0] - psi) < 0.01
    # the published rows sit beside ours, marked, with the source's numbers
    published = squad_groups[squad_groups["model"] == "BM25"]
    assert published["source"].unique().tolist() == ["Zeng et al. 2025, Table 1"]
    assert published["ndcg@10"].round(4).tolist() == [0.7662, 0.7937, 0.8061, 0.8106, 0.8143, 0.7949]
    assert published["psi"].unique().tolist() == [0.059] and published["n_queries"].isna().all()


def test_a_benchmark_of_position_labels_has_its_groups_and_no_span_tables(build, squad_dev):
    table = pd.read_csv(build.workdir / GROUPS_TABLE.format("posq-rows"))
    rows = [r for r in posq_rows(squad_dev) if r["question"]]
    expected = {group: sum(group in r["span_class"] for r in rows) for group in ("beginning", "middle", "end")}
    for model in ("bm25", "minilm-l6"):
        run = table[table["model"] == model].set_index("group")
        assert run["n_queries"].to_dict() == expected  # a query labelled twice counts in both groups
        scores = pd.read_csv(build.workdir / f"results/scores/posq-rows/{model}/eng-eng.tsv", sep="\t")
        labels = scores["position_label"].str.split(",")
        for group in expected:
            members = scores[labels.apply(lambda names, g=group: g in names)]
            assert run.at[group, "ndcg@10"] == pytest.approx(members["ndcg@10"].mean())
        assert run["psi"].iloc[0] == pytest.approx(1 - run["ndcg@10"].min() / run["ndcg@10"].max())
        log = (build.workdir / f"results/logs/retrieve/posq-rows/{model}/eng-eng.log").read_text()
        assert f"{len(rows)} of {len(rows)} queries have a position group and no evidence span" in log
    markdown = (build.workdir / "results/tables/posq-rows/position_groups.md").read_text()
    assert "| beginning | middle | end |" in markdown and "the source's own position groups" in markdown
    assert (build.workdir / "results/figures/posq-rows/position_groups.png").stat().st_size > 10_000
    planned = {rule for rule, wildcards in build.planned("--forceall") if wildcards.get("benchmark") == "posq-rows"}
    assert "position_groups" in planned and not planned & {"main_table", "plot_position_grid", "setting_tables"}


def test_the_mteb_export_holds_the_position_groups(build):
    exported = json.loads(
        (
            build.workdir / "results/export/mteb/results/posir__bm25/no_revision_available/posir-posq-rows.json"
        ).read_text()
    )
    (subset,) = exported["scores"]["test"]
    groups = subset["posir_position_bias"]["position_groups"]
    assert [g["group"] for g in groups["groups"]] == ["beginning", "middle", "end"]
    assert groups["grouping"] == {"by": "label", "groups": ["beginning", "middle", "end"]}
    table = pd.read_csv(build.workdir / GROUPS_TABLE.format("posq-rows"))
    bm25 = table[table["model"] == "bm25"]
    # MTEB's TaskResult keeps six decimals
    assert [g["ndcg_at_10"] for g in groups["groups"]] == pytest.approx(bm25["ndcg@10"].tolist(), abs=1e-6)
    assert groups["psi"] == pytest.approx(bm25["psi"].iloc[0], abs=1e-6)
