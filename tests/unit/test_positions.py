import pytest

from posir.metrics.positions import (
    LengthBucket,
    bucket_of,
    length_buckets,
    position_bin,
    relative_position,
    span_bin,
)


def test_relative_position_is_span_midpoint_over_length():
    assert relative_position(10, 20, 100) == pytest.approx(0.15)
    assert relative_position(0, 100, 100) == pytest.approx(0.5)


@pytest.mark.parametrize("start,end,length", [(-1, 2, 10), (5, 11, 10), (6, 5, 10)])
def test_relative_position_rejects_spans_outside_the_document(start, end, length):
    with pytest.raises(ValueError):
        relative_position(start, end, length)


@pytest.mark.parametrize(
    "relative,expected",
    # PosIR's pd.cut(..., np.linspace(0, 1, 21), include_lowest=True): (a, b], the first bin also holds 0
    [(0.0, 0), (0.0499999, 0), (0.05, 0), (0.0500001, 1), (0.5, 9), (0.95, 18), (0.9999, 19), (1.0, 19)],
)
def test_twenty_equal_bins_are_closed_on_the_right(relative, expected):
    assert position_bin(relative, 20) == expected


@pytest.mark.parametrize("k", range(1, 21))
def test_a_span_exactly_on_an_edge_lands_below_it_whatever_the_rounding(k):
    # midpoint k/20 of a 2000-character document: (start + end) / 2 = 100 k
    start, end = (100 * k - 3, 100 * k + 3) if k < 20 else (2000, 2000)
    assert span_bin(start, end, 2000, 20) == k - 1
    # the same position computed in floating point, and nudged by binary noise either way
    relative = relative_position(start, end, 2000)
    for noisy in (relative, relative * (1 + 2e-16), relative * (1 - 2e-16)):
        assert position_bin(min(noisy, 1.0), 20) == k - 1


def test_span_bin_agrees_with_pandas_cut_as_posir_cuts():
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    spans = [(s, s + w, 997) for s in range(0, 990, 7) for w in (0, 1, 5)]
    relative = [relative_position(*span) for span in spans]
    cut = pd.cut(relative, bins=np.linspace(0, 1, 21), include_lowest=True, labels=False)
    assert [span_bin(*span, 20) for span in spans] == list(cut)


def test_bins_reject_positions_outside_unit_interval():
    with pytest.raises(ValueError):
        position_bin(1.01, 20)
    with pytest.raises(ValueError):
        position_bin(float("nan"), 20)


def test_posir_buckets_are_left_open_right_closed_and_the_last_is_open_ended():
    buckets = length_buckets()
    assert buckets[0] == LengthBucket("Q1", 0, 512)
    assert buckets[-1] == LengthBucket("Q4", 1536, None)
    cases = {1: "Q1", 512: "Q1", 513: "Q2", 1024: "Q2", 1025: "Q3", 1536: "Q3", 1537: "Q4", 2048: "Q4", 90000: "Q4"}
    for tokens, name in cases.items():
        assert bucket_of(tokens, buckets) == name
    assert bucket_of(0, buckets) == ""


def test_bounded_buckets_leave_longer_documents_outside():
    buckets = length_buckets({"Q1": 512, "Q2": 1024, "Q3": 1536, "Q4": 2048})
    assert bucket_of(2048, buckets) == "Q4"
    assert bucket_of(2049, buckets) == ""


def test_buckets_are_ordered_by_bound_not_by_mapping_order():
    buckets = length_buckets({"long": 200, "short": 100})
    assert [(b.name, b.lower, b.upper) for b in buckets] == [("short", 0, 100), ("long", 100, 200)]


def test_only_one_bucket_may_be_open():
    with pytest.raises(ValueError, match="only the last bucket may be open"):
        length_buckets({"a": None, "b": None})
