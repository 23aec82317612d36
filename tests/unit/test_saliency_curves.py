"""Saliency curves, pair selection and aggregation without a model (posir.analyses.saliency)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from posir.analyses.saliency import (
    SaliencyParams,
    aggregate_curves,
    bin_columns,
    curve_matrix,
    interpolate_to_bins,
    relative_curve,
    select_pairs,
)
from posir.schema import ConfigError


def test_a_ramp_over_token_centres_reads_as_the_bin_centres() -> None:
    n_tokens = 200
    ramp = (np.arange(n_tokens) + 0.5) / n_tokens  # value = the token's own relative position
    assert interpolate_to_bins(ramp, 100) == pytest.approx((np.arange(100) + 0.5) / 100, abs=1e-12)


def test_fewer_tokens_than_bins_interpolate_linearly_and_hold_the_ends() -> None:
    # tokens at 1/4 and 3/4; bin centres 1/8, 3/8, 5/8, 7/8
    assert interpolate_to_bins(np.array([0.0, 1.0]), 4) == pytest.approx([0.0, 0.25, 0.75, 1.0])


def test_curve_is_max_normalised_and_the_unseen_tail_is_zero() -> None:
    norms = np.array([1.0, 2.0, 4.0, 2.0])  # four tokens seen of eight
    assert relative_curve(norms, 8, 8) == pytest.approx([0.25, 0.5, 1.0, 0.5, 0, 0, 0, 0])
    # four bins: centres 1/8 .. 7/8 fall midway between token centres 1/16, 3/16, ...
    assert relative_curve(norms, 8, 4) == pytest.approx([0.375, 0.75, 0.0, 0.0])
    assert relative_curve(np.zeros(3), 3, 5) == pytest.approx(np.zeros(5))
    with pytest.raises(ValueError, match="exceed"):
        relative_curve(norms, 3, 4)


def _positions() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": [f"q{i:02d}" for i in range(12)],
            "doc_id": ["d"] * 12,
            "doc_token_length": [900, 1000, 1100, 1152, 1153, 895, 1000, 1000, 1000, 1000, 1000, 1000],
            "relative_position": [0.5, 0.4, 0.6, 0.45, 0.5, 0.5, 0.39, 0.61, 0.5, 0.5, 0.55, 0.42],
            "span_start": 0,
            "span_end": 1,
        }
    )


def test_pairs_fit_the_length_range_and_window_inclusively() -> None:
    chosen = select_pairs(
        _positions(), SaliencyParams.from_config({"token_length": [896, 1152], "position_window": [0.4, 0.6]})
    )
    assert chosen["qid"].tolist() == ["q00", "q01", "q02", "q03", "q08", "q09", "q10", "q11"]


def test_the_cap_draws_a_seeded_sample_in_qid_order() -> None:
    params = SaliencyParams.from_config({"max_pairs": 3, "seed": 1})
    first = select_pairs(_positions(), params)
    assert len(first) == 3 and first["qid"].is_monotonic_increasing
    assert first.equals(select_pairs(_positions().sample(frac=1, random_state=0), params))
    others = {
        tuple(select_pairs(_positions(), SaliencyParams.from_config({"max_pairs": 3, "seed": s}))["qid"])
        for s in range(6)
    }
    assert len(others) > 1


def test_params_from_config_are_checked() -> None:
    params = SaliencyParams.from_config({"token_length": [512, 1024], "position_window": [0.3, 0.7], "max_pairs": 10})
    assert params.token_length == (512, 1024) and params.position_window == (0.3, 0.7) and params.n_bins == 100
    with pytest.raises(
        ConfigError,
        match=r"config: analyses\.saliency\.position_window: \[0\.7, 0\.3\] is not a "
        r"range; use \[start, end\] with start <= end",
    ):
        SaliencyParams.from_config({"position_window": [0.7, 0.3]}, "analyses.saliency")
    # a range is [low, high]: one number lacks its second
    with pytest.raises(ConfigError, match=r"config: analyses\.saliency\.token_length\[1\]: missing; add it"):
        SaliencyParams.from_config({"token_length": [10]}, "analyses.saliency")


def test_aggregate_is_a_t_interval_over_pairs() -> None:
    from scipy import stats

    rng = np.random.default_rng(0)
    curves = np.column_stack([rng.uniform(0, 1, 7), rng.uniform(0, 1, 7), np.zeros(7)])
    table = pd.DataFrame(curves, columns=bin_columns(3)).assign(qid=[f"q{i}" for i in range(7)])
    assert curve_matrix(table) == pytest.approx(curves)
    band = aggregate_curves(table, confidence=0.9)
    for k in range(2):
        low, high = stats.t.interval(0.9, 6, loc=curves[:, k].mean(), scale=stats.sem(curves[:, k]))
        assert (band.loc[k, "ci_low"], band.loc[k, "ci_high"]) == pytest.approx((low, high))
    assert band.loc[2, ["mean", "ci_low", "ci_high"]].tolist() == [0.0, 0.0, 0.0]
    assert band["n_pairs"].eq(7).all() and band["bin_centre"].tolist() == pytest.approx([1 / 6, 0.5, 5 / 6])
