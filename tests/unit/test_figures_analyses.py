"""The analysis figures render from the analyses' own tables (posir.figures)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd

from posir.analyses.representation import summarize_segments
from posir.analyses.saliency import aggregate_curves, bin_columns, evidence_summary
from posir.figures import saliency_curves, segment_similarity


def _saliency_table(seen: float, rng: np.random.Generator) -> pd.DataFrame:
    centres = (np.arange(100) + 0.5) / 100
    curves = np.where(centres < seen, rng.uniform(0.1, 1, (6, 100)), 0.0)
    return pd.DataFrame(curves, columns=bin_columns(100)).assign(
        qid=[f"q{i}" for i in range(6)], seen_fraction=seen, evidence_start=0.45, evidence_end=0.5
    )


def test_saliency_figure_is_written(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    tables = {"truncating": _saliency_table(0.3, rng), "full": _saliency_table(1.0, rng)}
    path = tmp_path / "saliency.png"
    saliency_curves(
        {m: aggregate_curves(t) for m, t in tables.items()},
        "saliency",
        path,
        {m: evidence_summary(t) for m, t in tables.items()},
    )
    image = mpimg.imread(path)
    assert image.shape[:2] == (int(3.8 * 120), 7 * 120)
    assert image[..., :3].std() > 0.05  # something was drawn


def test_segment_figure_has_one_panel_per_model(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    sims = pd.DataFrame(
        {
            "doc_id": np.repeat([f"d{i}" for i in range(8)], 4),
            "length_bucket": np.repeat(["Q1", "Q2"] * 4, 4),
            "segment": np.tile(range(4), 8),
            "segment_chars": 100,
            "cosine": rng.uniform(0.4, 1.0, 32),
        }
    )
    summary = summarize_segments(sims, ["Q1", "Q2", "Q3"])
    one, two = tmp_path / "one.png", tmp_path / "two.png"
    segment_similarity({"a": summary}, ["Q1", "Q2", "Q3"], "segments", one)
    segment_similarity({"a": summary, "b": summary}, ["Q1", "Q2", "Q3"], "segments", two)
    assert mpimg.imread(one).shape[1] == int(4.5 * 120) and mpimg.imread(two).shape[1] == int(9 * 120)
