"""Position groupings and the scores by group, by hand on the edges: a start of exactly 100, a start before the first
edge, an empty group, a query in two FineWeb groups, a query without a span (posir.metrics.groupings,
posir.metrics.group_scores)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from posir.metrics.group_scores import (
    GROUPS_SKIPPED,
    GROUPS_USED,
    QUERIES_LEFT_OUT,
    TREND_DIRECTION,
    TREND_P,
    TREND_TAU,
    group_scores,
    group_trend,
)
from posir.metrics.groupings import (
    BEFORE_FIRST_EDGE,
    NO_LABEL,
    NO_SPAN,
    GroupingError,
    Labels,
    RelativeBins,
    StartOffsets,
    Thirds,
)
from posir.metrics.params import BootstrapParams
from posir.schema import ConfigError

PAPER = StartOffsets(edges=(0, 100, 200, 300, 400, 500), closed="both")
BOOTSTRAP = BootstrapParams(resamples=200, seed=3)


def frame(starts, lengths=None, labels=None, scores=None) -> pd.DataFrame:
    n = len(starts if starts is not None else labels)
    data = {
        "qid": [f"q{i}" for i in range(n)],
        "span_start": starts if starts is not None else [np.nan] * n,
        "doc_char_length": lengths if lengths is not None else [4000] * n,
        "ndcg@10": scores if scores is not None else [1.0] * n,
    }
    if labels is not None:
        data["position_label"] = labels
    return pd.DataFrame(data)


def members(grouping, starts=None, **kwargs) -> dict[str, list[str]]:
    """Each query's groups, by name."""
    data = frame(starts, **kwargs)
    names = grouping.names(20)
    matrix = grouping.membership(data, 20)
    return {qid: [names[j] for j in np.flatnonzero(row)] for qid, row in zip(data["qid"], matrix)}


def test_start_offsets_closed_both_count_a_start_on_an_edge_in_both_neighbours():
    assert PAPER.names(20) == ("0-100", "100-200", "200-300", "300-400", "400-500", "500+")
    found = members(PAPER, [0, 99, 100, 101, 500, 501, 3120])
    assert found == {
        "q0": ["0-100"],
        "q1": ["0-100"],
        "q2": ["0-100", "100-200"],  # Zeng et al.'s min <= start <= max, for both groups
        "q3": ["100-200"],
        "q4": ["400-500", "500+"],
        "q5": ["500+"],
        "q6": ["500+"],
    }


def test_start_offsets_closed_left_give_half_open_groups():
    half_open = StartOffsets(edges=(0, 100, 200), closed="left")
    assert members(half_open, [0, 99, 100, 199, 200, 10_000]) == {
        "q0": ["0-100"],
        "q1": ["0-100"],
        "q2": ["100-200"],
        "q3": ["100-200"],
        "q4": ["200+"],
        "q5": ["200+"],
    }


def test_a_start_before_the_first_edge_and_a_query_without_a_span_are_left_out_counted():
    grouping = StartOffsets(edges=(50, 100))
    data = frame([10, 60, np.nan])
    assert members(grouping, [10, 60, np.nan]) == {"q0": [], "q1": ["50-100"], "q2": []}
    assert grouping.left_out(data, 20) == {BEFORE_FIRST_EDGE: 1, NO_SPAN: 1}


def test_edges_must_increase_and_the_error_names_the_key():
    with pytest.raises(ConfigError, match=r"edges: \[0, 100, 100\] is not strictly increasing"):
        StartOffsets.parse({"by": "start_offset", "edges": [0, 100, 100]}, "benchmarks.x.positions")


def test_thirds_cut_on_exact_integer_thirds_of_the_document():
    # a document of 300 characters: starts 0-99 begin, 100-199 are the middle, 200-299 the end
    found = members(Thirds(), [0, 99, 100, 199, 200, 299], lengths=[300] * 6)
    assert found == {
        "q0": ["beginning"],
        "q1": ["beginning"],
        "q2": ["middle"],
        "q3": ["middle"],
        "q4": ["end"],
        "q5": ["end"],
    }
    # 301 characters: a third is 100.33, so 100 still begins
    assert members(Thirds(), [100, 101, 200, 201], lengths=[301] * 4) == {
        "q0": ["beginning"],
        "q1": ["middle"],
        "q2": ["middle"],
        "q3": ["end"],
    }


def test_labels_put_a_query_in_every_group_it_names_and_refuse_an_unknown_one():
    found = members(Labels(), None, labels=["beginning", "beginning,middle", "end", ""])
    assert found == {"q0": ["beginning"], "q1": ["beginning", "middle"], "q2": ["end"], "q3": []}
    assert Labels().left_out(frame(None, labels=["end", ""]), 20) == {NO_LABEL: 1}
    with pytest.raises(GroupingError, match=r"query q1: its position label names 'ending'"):
        Labels().membership(frame(None, labels=["end", "ending"]), 20)


def test_relative_bins_are_the_position_bins():
    data = pd.DataFrame({"span_start": [1, 2, 3], "position_bin": [0, 19, 7]})
    matrix = RelativeBins().membership(data, 20)
    assert [int(np.flatnonzero(row)[0]) for row in matrix] == [0, 19, 7]
    assert RelativeBins().names(4) == ("0.00-0.25", "0.25-0.50", "0.50-0.75", "0.75-1.00")


def test_group_scores_by_hand_with_a_query_in_two_groups_and_an_empty_group():
    # groups 0-100 (queries 0, 1 and 2, the last on the edge), 100-200 (2 and 3), 200-300 empty, 300+ (4, 5)
    grouping = StartOffsets(edges=(0, 100, 200, 300), closed="both")
    scores = [1.0, 0.5, 0.0, 1.0, 0.25, 0.75]
    result = group_scores(frame([10, 50, 100, 150, 301, 900], scores=scores), grouping, 20, 1, BOOTSTRAP)
    table = result.groups.set_index("group")
    assert table["n_queries"].tolist() == [3, 2, 0, 2]
    assert table.loc["0-100", "ndcg@10"] == pytest.approx(0.5)
    assert table.loc["100-200", "ndcg@10"] == pytest.approx(0.5)
    assert math.isnan(table.loc["200-300", "ndcg@10"])
    assert table.loc["300+", "ndcg@10"] == pytest.approx(0.5)
    assert result.run["psi"] == pytest.approx(0.0)
    assert result.run[GROUPS_USED] == 3 and result.run[GROUPS_SKIPPED] == ""
    assert result.run[QUERIES_LEFT_OUT] == ""
    assert table["group_order"].tolist() == [1, 2, 3, 4]


def test_psi_over_groups_leaves_out_groups_below_the_minimum_and_says_which():
    grouping = StartOffsets(edges=(0, 100))
    data = frame([0] * 10 + [150] * 2, scores=[0.8] * 10 + [0.2] * 2)
    result = group_scores(data, grouping, 20, 5, BOOTSTRAP)
    assert result.run["psi"] == 0.0 and result.run[GROUPS_USED] == 1  # one group left, compared with itself
    assert result.run[GROUPS_SKIPPED] == "100+"
    counted = group_scores(data, grouping, 20, 2, BOOTSTRAP)
    assert counted.run["psi"] == pytest.approx(1 - 0.2 / 0.8)


def test_group_intervals_keep_each_groups_count_and_hold_the_estimate():
    rng = np.random.default_rng(0)
    starts = rng.integers(0, 700, 400)
    scores = rng.uniform(0, 1, 400)
    result = group_scores(frame(list(starts), scores=list(scores)), PAPER, 20, 10, BOOTSTRAP)
    groups = result.groups
    assert (groups["ndcg@10_ci_low"] <= groups["ndcg@10"]).all()
    assert (groups["ndcg@10"] <= groups["ndcg@10_ci_high"]).all()
    assert result.run["psi_ci_low"] <= result.run["psi"] <= result.run["psi_ci_high"]
    again = group_scores(frame(list(starts), scores=list(scores)), PAPER, 20, 10, BOOTSTRAP)
    pd.testing.assert_frame_equal(groups, again.groups)  # seeded


def test_the_trend_over_ordered_groups_reads_its_sign():
    falling = np.array([[1, 0, 0]] * 5 + [[0, 1, 0]] * 5 + [[0, 0, 1]] * 5, dtype=bool)
    scores = np.array([1.0] * 5 + [0.5] * 5 + [0.0] * 5)
    tau, p = group_trend(scores, falling)
    assert tau == pytest.approx(-1.0 * 0.9, abs=0.1) and p < 0.01
    result = group_scores(
        frame([0] * 5 + [150] * 5 + [250] * 5, scores=list(scores)),
        StartOffsets(edges=(0, 100, 200)),
        20,
        1,
        BOOTSTRAP,
    )
    assert result.run[TREND_DIRECTION] == "primacy" and result.run[TREND_TAU] < 0 and result.run[TREND_P] < 0.01
    assert math.isnan(group_trend(np.ones(15), falling)[0])  # constant scores: no trend to test
