"""Paired comparisons of a setting's models (posir.metrics.significance) laid out for Markdown and LaTeX."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from posir.metrics.columns import (
    ALL,
    BUCKET,
    CI_HIGH,
    CI_LOW,
    CONFIDENCE,
    MODEL_A,
    MODEL_B,
    N_RESAMPLES,
    suffixed,
)
from posir.metrics.significance import MEAN_DIFFERENCE, PSI_DIFFERENCE, RANDOMISATION_P_HOLM
from posir.tables.layout import (
    MISSING,
    SCORE_LABEL,
    SIGNIFICANT_MARK,
    Block,
    Cell,
    Rendering,
    display_decimal,
    number_cell,
)

# --- paired comparisons of models (posir.metrics.significance) ----------------------------------------


def _pair_rows(
    frame: pd.DataFrame, buckets: Sequence[str], value_column: str, labels: Mapping[str, str] | None, cell: Any
) -> list[list[Cell]]:
    """One row per model pair (in the frame's order): the two names, then ``cell(entry)`` per bucket (ALL first),
    or a missing cell where the bucket has no finite ``value_column``."""
    names = labels or {}
    table = frame.set_index([MODEL_A, MODEL_B, BUCKET])
    rows = []
    for model_a, model_b in dict.fromkeys(zip(frame[MODEL_A], frame[MODEL_B])):
        cells = [Cell(names.get(model_a, model_a)), Cell(names.get(model_b, model_b))]
        for bucket in [ALL, *buckets]:
            key = (model_a, model_b, bucket)
            if key not in table.index or not math.isfinite(table.loc[key, value_column]):
                cells.append(Cell(None))
                continue
            cells.append(cell(table.loc[key]))
        rows.append(cells)
    return rows


def significance_rendering(
    tests: pd.DataFrame,
    buckets: Sequence[str],
    alpha: float = 0.05,
    caption: str = "",
    label: str = "",
    labels: Mapping[str, str] | None = None,
) -> Rendering:
    """One row per model pair: nDCG@10 difference (a - b, in points) overall and per bucket.

    A † follows a difference whose randomisation-test p-value after Holm's correction within its
    bucket lies below ``alpha``; "–" marks a bucket without queries. Render it with
    :func:`render_markdown` or :func:`render_latex` (booktabs, the † as ``$^{\\dagger}$``).
    ``labels`` renames models for display.
    """

    def difference(entry: pd.Series) -> Cell:
        return number_cell(
            100 * entry[MEAN_DIFFERENCE], marks=SIGNIFICANT_MARK if entry[RANDOMISATION_P_HOLM] < alpha else ""
        )

    rows = _pair_rows(tests, buckets, MEAN_DIFFERENCE, labels, difference)
    n = int(tests[N_RESAMPLES].iloc[0]) if N_RESAMPLES in tests.columns else None
    notes = [
        f"Difference in mean {SCORE_LABEL} (model A - model B, points). † p < {alpha:g} in Fisher's paired "
        f"randomisation test{f' ({n} resamples)' if n else ''}, Holm-corrected over the model pairs of each "
        "bucket."
    ]
    return Rendering(
        ["model A", "model B", *(SCORE_LABEL if b == ALL else b for b in [ALL, *buckets])],
        "ll" + "r" * (1 + len(buckets)),
        [Block(rows)],
        notes,
        caption,
        label,
    )


def psi_difference_rendering(
    differences: pd.DataFrame,
    buckets: Sequence[str],
    caption: str = "",
    label: str = "",
    labels: Mapping[str, str] | None = None,
) -> Rendering:
    """One row per model pair: PSI(a) - PSI(b) overall and per bucket with its paired bootstrap interval.

    A † marks an interval that excludes 0. Cells read ``0.12 [0.05, 0.20]``.
    """

    def shown(value: float) -> str:
        rounded = display_decimal(value)
        return MISSING if rounded is None else f"{rounded:.2f}"

    def interval(entry: pd.Series) -> Cell:
        low, high = entry[suffixed(PSI_DIFFERENCE, CI_LOW)], entry[suffixed(PSI_DIFFERENCE, CI_HIGH)]
        excludes_zero = bool(low > 0 or high < 0)
        return Cell(
            f"{shown(entry[PSI_DIFFERENCE])} [{shown(low)}, {shown(high)}]", SIGNIFICANT_MARK if excludes_zero else ""
        )

    rows = _pair_rows(differences, buckets, PSI_DIFFERENCE, labels, interval)
    confidence = float(differences[CONFIDENCE].iloc[0]) if len(differences) else 0.95
    notes = [
        f"PSI(model A) - PSI(model B) with a paired stratified bootstrap {confidence:.0%} interval (the same "
        "resampled queries for both models). † the interval excludes 0."
    ]
    return Rendering(
        ["model A", "model B", *("PSI" if b == ALL else f"PSI {b}" for b in [ALL, *buckets])],
        "ll" + "r" * (1 + len(buckets)),
        [Block(rows)],
        notes,
        caption,
        label,
    )
