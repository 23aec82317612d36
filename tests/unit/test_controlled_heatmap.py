"""The controlled heat map's grid: lengths as rows in size order, positions as columns, every cell filled."""

from __future__ import annotations

import pandas as pd

from posir.figures import heatmap_grid


def positions(lengths: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"length": length, "target_position": target, "mean": 0.5 + 0.1 * i - 0.2 * target}
            for i, length in enumerate(lengths)
            for target in (0.0, 0.5, 1.0)
        ]
    )


def test_insert_lengths_are_numbers_and_every_cell_is_filled():
    """Before: the rows were looked up by their text ('512') in an index of numbers (512): an empty map."""
    grid = heatmap_grid(positions([1024, 512, 2048]))
    assert list(grid.index) == ["512", "1024", "2048"] and list(grid.columns) == [0.0, 0.5, 1.0]
    assert not grid.isna().any().any()
    assert grid.loc["512", 0.0] == 0.6


def test_move_buckets_are_names_in_order():
    grid = heatmap_grid(positions(["Q2", "Q1", "Q4"]))
    assert list(grid.index) == ["Q1", "Q2", "Q4"] and not grid.isna().any().any()
