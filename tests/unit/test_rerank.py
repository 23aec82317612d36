"""Reranking pipelines (posir.rerank): the reordered run and the stratified query sample."""

from __future__ import annotations

import pytest

from posir.rerank import PipelineSpec, SampleError, SampleSpec, rerank, stratified_sample
from posir.results.runs import ranked, read_trec_run, write_ranked_run
from posir.schema import ConfigError


def first_stage(n: int = 30) -> list[str]:
    return [f"d{i}" for i in range(n)]


def test_the_top_depth_is_reordered_and_the_tail_keeps_its_order_below_it():
    run = first_stage(30)
    scores = {doc: float(k * 7 % 10) + k / 100 for k, doc in enumerate(run[:10])}
    out = rerank(run, scores, depth=10)
    head, tail = out[:10], out[10:]
    assert {d for d, _ in head} == set(run[:10])
    assert [d for d, _ in head] == sorted(scores, key=lambda d: -scores[d])
    assert [d for d, _ in tail] == run[10:]
    values = [s for _, s in head]
    assert all(a > b for a, b in zip(values, values[1:]))  # the scorer's scores, best first
    assert all(s is None for _, s in tail)  # the tail has no second-stage score: its order is the first stage's


def test_ties_keep_the_first_stage_order_and_unscored_documents_sink_below_the_scored():
    run = first_stage(6)
    scores = {"d0": 0.5, "d1": None, "d2": 0.9, "d3": 0.5}
    out = [d for d, _ in rerank(run, scores, depth=4)]
    assert out == ["d2", "d0", "d3", "d1", "d4", "d5"]


def test_a_ranking_shorter_than_the_depth_and_an_empty_one():
    assert [d for d, _ in rerank(first_stage(3), {"d0": 0.1, "d1": 0.3, "d2": 0.2}, depth=100)] == ["d1", "d2", "d0"]
    assert rerank([], {}, depth=10) == []


def test_the_written_run_reads_back_in_the_reranked_order(tmp_path):
    run = first_stage(120)
    scores = {doc: float((i * 37) % 101) for i, doc in enumerate(run[:100])}
    rankings = {"q1": rerank(run, scores, depth=100), "q2": rerank(run[:5], {}, depth=100)}
    write_ranked_run(tmp_path / "run.trec", rankings, tag="test")
    back = ranked(read_trec_run(tmp_path / "run.trec"))
    assert [d for d, _ in back["q1"]] == [d for d, _ in rankings["q1"]]
    assert [d for d, _ in back["q2"]] == ["d0", "d1", "d2", "d3", "d4"]


def test_tied_and_nearly_tied_scores_read_back_in_the_first_stages_order(tmp_path):
    """A 0-4 grade ties often; trec_eval breaks ties by document id, descending. Before: d0, d1, d2 (all graded
    3) read back as d2, d1, d0, and scores 5e-7 apart were written equal."""
    run = first_stage(8)
    scores = {"d0": 3.0, "d1": 3.0, "d2": 3.0, "d3": 0.7000004, "d4": 0.7, "d5": 0.7000001, "d6": 4.0}
    rankings = {"q": rerank(run, scores, depth=7)}
    write_ranked_run(tmp_path / "run.trec", rankings, tag="test")
    back = [d for d, _ in ranked(read_trec_run(tmp_path / "run.trec"))["q"]]
    assert back == ["d6", "d0", "d1", "d2", "d3", "d5", "d4", "d7"]


def cells(per_cell: dict[tuple[str, int], int]) -> dict[str, tuple[str, int]]:
    out = {}
    for (bucket, position), n in per_cell.items():
        out.update({f"{bucket}-{position}-{i}": (bucket, position) for i in range(n)})
    return out


SIZES = {("Q1", 0): 50, ("Q1", 19): 3, ("Q2", 5): 200, ("Q4", 10): 1, ("Q3", 7): 40}


def test_the_sample_keeps_every_filled_cell_and_its_size():
    spec = SampleSpec.from_config({"queries": 60, "min_per_cell": 5})
    chosen = stratified_sample(cells(SIZES), spec)
    assert len(chosen) == 60
    kept = {cell: sum(1 for q in chosen if cells(SIZES)[q] == cell) for cell in SIZES}
    assert all(kept[cell] >= min(5, n) for cell, n in SIZES.items())
    assert kept[("Q4", 10)] == 1 and kept[("Q1", 19)] == 3
    assert kept[("Q2", 5)] > kept[("Q1", 0)] > kept[("Q3", 7)] - 5  # the rest in proportion to what is left


def test_the_sample_is_reproducible_by_seed_and_changes_with_it():
    all_cells = cells(SIZES)
    first = stratified_sample(all_cells, SampleSpec.from_config({"queries": 40, "min_per_cell": 2, "seed": 1}))
    again = stratified_sample(
        dict(reversed(list(all_cells.items()))), SampleSpec.from_config({"queries": 40, "min_per_cell": 2, "seed": 1})
    )
    other = stratified_sample(all_cells, SampleSpec.from_config({"queries": 40, "min_per_cell": 2, "seed": 2}))
    assert set(first) == set(again) and set(first) != set(other)
    assert first == [q for q in all_cells if q in set(first)]  # input order


def test_a_sample_at_least_as_large_as_the_benchmark_keeps_every_query():
    all_cells = cells(SIZES)
    assert stratified_sample(all_cells, SampleSpec.from_config({"queries": 10_000})) == list(all_cells)


def test_a_sample_too_small_for_its_cells_is_refused_with_the_fix():
    with pytest.raises(SampleError, match="raise queries or lower min_per_cell"):
        stratified_sample(cells(SIZES), SampleSpec.from_config({"queries": 20, "min_per_cell": 10}))


def test_pipeline_defaults_come_from_the_declaration():
    spec = PipelineSpec.from_config("p", {"first_stage": "bm25", "second_stage": "minilm-maxp"})
    assert spec.name == "p" and spec.depth == 100 and spec.sample is None
    assert SampleSpec.from_config({"queries": 10}).min_per_cell == 10
    with pytest.raises(ConfigError, match=r"config: pipelines\.p\.second_stage: missing"):
        PipelineSpec.from_config("p", {"first_stage": "bm25"})


def test_a_sample_smaller_than_one_cell_is_refused_at_config_time():
    with pytest.raises(
        ConfigError,
        match=r"config: pipelines\.p\.sample\.queries: 5 is fewer than min_per_cell "
        r"\(10\).*raise queries or lower min_per_cell",
    ):
        PipelineSpec.from_config("p", {"first_stage": "bm25", "second_stage": "minilm-maxp", "sample": {"queries": 5}})
