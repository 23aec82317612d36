import pytest

from posir.metrics.positions import LengthBucket, bucket_of, length_buckets, position_bin, relative_position


def test_relative_position_is_span_midpoint_over_length():
    assert relative_position(10, 20, 100) == pytest.approx(0.15)
    assert relative_position(0, 100, 100) == pytest.approx(0.5)


@pytest.mark.parametrize("start,end,length", [(-1, 2, 10), (5, 11, 10), (6, 5, 10)])
def test_relative_position_rejects_spans_outside_the_document(start, end, length):
    with pytest.raises(ValueError):
        relative_position(start, end, length)


@pytest.mark.parametrize(
    "relative,expected",
    [(0.0, 0), (0.0499999, 0), (0.05, 1), (0.5, 10), (0.95, 19), (0.9999, 19), (1.0, 19)],
)
def test_twenty_equal_bins_hold_their_lowest_edge(relative, expected):
    assert position_bin(relative, 20) == expected


def test_bins_reject_positions_outside_unit_interval():
    with pytest.raises(ValueError):
        position_bin(1.01, 20)
    with pytest.raises(ValueError):
        position_bin(float("nan"), 20)


def test_posir_buckets_are_left_open_right_closed():
    buckets = length_buckets()
    assert buckets[0] == LengthBucket("Q1", 0, 512)
    cases = {1: "Q1", 512: "Q1", 513: "Q2", 1024: "Q2", 1025: "Q3", 1536: "Q3", 1537: "Q4", 2048: "Q4"}
    for tokens, name in cases.items():
        assert bucket_of(tokens, buckets) == name
    assert bucket_of(0, buckets) == ""
    assert bucket_of(2049, buckets) == ""


def test_buckets_are_ordered_by_bound_not_by_mapping_order():
    buckets = length_buckets({"long": 200, "short": 100})
    assert [(b.name, b.lower, b.upper) for b in buckets] == [("short", 0, 100), ("long", 100, 200)]
