"""The grid of position curves keeps its title above the panels' titles: a grid of many rows (a benchmark of many models
and settings) once drew its title over the first row's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from posir.figures import position_grid
from posir.metrics.aggregate import bin_table

BUCKETS = ["Q1", "Q2"]


def _bins(seed: int) -> pd.DataFrame:
    import numpy as np

    rng = np.random.default_rng(seed)
    per_query = pd.DataFrame(
        {
            "ndcg@10": rng.uniform(0, 1, 200),
            "position_bin": rng.integers(0, 20, 200),
            "length_bucket": rng.choice(BUCKETS, 200),
        }
    )
    return bin_table(per_query, BUCKETS, 20)


@pytest.mark.parametrize("panels", [2, 9, 24, 40])
def test_the_title_of_a_grid_stays_above_its_first_row(tmp_path: Path, panels: int) -> None:
    figure = position_grid(
        {f"model {i}, eng-eng": _bins(i) for i in range(panels)},
        BUCKETS,
        10,
        "squad-long, eng-eng: nDCG@10 by evidence position",
        tmp_path / "grid.png",
    )
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    title = figure._suptitle.get_window_extent(renderer)
    first_row = [ax for ax in figure.axes if ax.get_visible() and ax.get_subplotspec().is_first_row()]
    assert first_row
    for ax in first_row:
        assert ax.title.get_window_extent(renderer).y1 <= title.y0
    assert (tmp_path / "grid.png").stat().st_size > 0
