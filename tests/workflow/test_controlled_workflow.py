"""Controlled-position variants end to end: real SQuAD articles, BM25, USE and MiniLM, Snakemake.

A ``controlled`` benchmark entry becomes a family of benchmarks (one per position) that the usual rules
evaluate; ``controlled_tables`` sets the positions of the same queries side by side. BM25 scores a bag of
words, so through the whole workflow its per-query nDCG@10 must be the same at every position; USE reads every
token (a deep averaging network), so it must stay nearly flat; MiniLM reads 256 tokens, so it must fall for
queries whose evidence was moved past what it reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from posir.benchmark import read_corpus, read_queries, read_table
from tests._snakemake import Build
from tests.conftest import REPO
from tests.workflow.conftest import shared_build

POSITIONS = 3
MODELS = ("bm25", "use-m3", "minilm-l6")
VARIANTS = [f"squad-long-moved-r0-p{i}" for i in range(POSITIONS)]


@pytest.fixture(scope="session")
def workdir(tmp_path_factory, mirror, shared_caches) -> Path:
    """tests/configs/controlled.yaml: four SQuAD articles, a move family of 3 positions x 15 queries, BM25, USE
    and MiniLM."""
    build = shared_build(tmp_path_factory, mirror, "controlled", "reports_off", "controlled", local=shared_caches)
    return build.workdir


def scores(workdir, variant: str, model: str) -> pd.Series:
    table = pd.read_csv(workdir / f"results/scores/{variant}/{model}/eng-eng.tsv", sep="\t", dtype={"qid": str})
    return table.set_index("qid")["ndcg@10"].sort_index()


def test_each_position_is_a_corpus_where_only_the_sampled_positives_changed(workdir):
    source = {doc.doc_id: doc.text for doc in read_corpus(workdir / "results/benchmarks/squad-long/corpus.jsonl")}
    sampled = None
    for variant in VARIANTS:
        directory = workdir / "results/benchmarks" / variant
        rows = read_table(directory / "controlled.tsv")
        queries = {query.qid for query in read_queries(directory / "queries.jsonl")}
        assert queries == {row["qid"] for row in rows}  # the variant asks only the sampled queries
        sampled = sampled or queries
        assert queries == sampled  # the same queries at every position
        corpus = {doc.doc_id: doc.text for doc in read_corpus(directory / "corpus.jsonl")}
        assert corpus.keys() == source.keys()
        changed = {doc_id for doc_id, text in corpus.items() if text != source[doc_id]}
        moved = {row["doc_id"] for row in rows}
        assert changed <= moved  # every other document is the source's, byte for byte
        assert len(moved) == len(rows)  # at most one sampled query per document in a corpus
        for row in rows:
            assert sorted(corpus[row["doc_id"]]) == sorted(source[row["doc_id"]])  # same characters, moved
    assert 5 <= len(sampled) <= 15


def test_bm25_gives_every_query_the_same_ndcg_at_every_position_and_minilm_does_not(workdir):
    bm25 = [scores(workdir, variant, "bm25") for variant in VARIANTS]
    for other in bm25[1:]:
        pd.testing.assert_series_equal(bm25[0], other, check_exact=True, check_names=False)
    minilm = [scores(workdir, variant, "minilm-l6") for variant in VARIANTS]
    assert any(not first.equals(other) for first, other in zip(minilm[:1] * len(minilm), minilm[1:]))
    assert minilm[-1].mean() < minilm[0].mean()  # the evidence moved past MiniLM's 256 tokens is found less


def test_a_model_that_reads_every_token_stays_nearly_flat(workdir):
    use = [scores(workdir, variant, "use-m3") for variant in VARIANTS]
    means = [s.mean() for s in use]
    assert max(means) - min(means) <= 0.02  # only the words at the moved paragraph's edges change
    controlled = pd.read_csv(workdir / "results/tables/squad-long-moved/controlled.csv")
    psi = controlled[controlled["length"] == "all"].set_index("model")["psi"]
    assert psi["use-m3"] <= 0.05 < psi["minilm-l6"]


def test_the_family_tables_set_natural_beside_controlled_psi(workdir):
    tables = workdir / "results/tables/squad-long-moved"
    controlled = pd.read_csv(tables / "controlled.csv")
    overall = controlled[controlled["length"] == "all"].set_index("model")
    assert overall.loc["bm25", "psi"] == 0 and overall.loc["bm25", "note"] == "no_variation"
    assert overall.loc["minilm-l6", "psi"] > 0
    assert overall.loc["minilm-l6", "psi_ci_low"] <= overall.loc["minilm-l6", "psi"]
    assert overall.loc["minilm-l6", "psi"] <= overall.loc["minilm-l6", "psi_ci_high"]
    positions = pd.read_csv(tables / "controlled_positions.csv")
    assert sorted(positions["position_index"].unique()) == list(range(POSITIONS))
    comparison = pd.read_csv(tables / "natural_vs_controlled.csv")
    both = comparison[comparison["bucket"] == "all"].set_index("model")
    assert set(both.index) == set(MODELS)
    assert both["natural_psi"].notna().all() and both["controlled_psi"].notna().all()
    natural = pd.read_csv(workdir / "results/tables/squad-long/main_long.csv")
    assert set(natural["model"]) >= set(MODELS)
    assert (workdir / "results/figures/squad-long-moved/controlled.png").stat().st_size > 10_000


def test_the_card_says_what_the_model_saw_and_why_queries_were_left_out(workdir):
    directory = workdir / "results/benchmarks" / VARIANTS[-1]
    rows = read_table(directory / "controlled.tsv")
    assert all(0 < float(row["relative_position"]) <= 1 for row in rows)
    assert all(int(row["doc_tokens"]) > 0 for row in rows)
    card = json.loads((directory / "card.json").read_text())["controlled"]
    assert card["queries_sampled"] == len(rows) and card["targets"] == [0.0, 0.5, 1.0]
    views = [query["model_views"]["minilm-l6"] for query in card["queries"]]
    assert all(view["budget"] == 254 for view in views)  # MiniLM: 256 tokens, 254 of them text
    # at the end of the document, evidence past MiniLM's budget is never seen
    assert any(view["first_token"] >= view["budget"] and view["tokens_seen"] == 0 for view in views)
    drops = read_table(directory / "drops.tsv")
    assert drops and all(row["reason"] for row in drops)  # 4 articles hold documents of too few paragraphs


def test_the_insert_example_plans_a_position_by_length_grid(tmp_path, mirror):
    """configs/controlled_insert.yaml: 5 positions x 3 haystack lengths, one corpus each, and the heat map."""
    jobs = Build.prepare(tmp_path, mirror, [REPO / "configs" / "controlled_insert.yaml"]).planned()
    variants = sorted(w["benchmark"] for rule, w in jobs if rule == "build_controlled_variant")
    assert len(variants) == 15 and len({v.rsplit("-l", 1)[1] for v in variants}) == 3
    assert [w["benchmark"] for rule, w in jobs if rule == "controlled_tables"] == ["squad-long-haystack"]
