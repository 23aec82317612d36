"""Rank agreement with a reference benchmark (PosIR section 5.1, Table 2's last rows).

PosIR correlates MMTEB (Retrieval) scores with PosIR nDCG@10, overall and per
length bucket, with Spearman's rank correlation over the evaluated models. The
p-value is scipy's default for ``spearmanr``: two-sided, from the t
distribution with n - 2 degrees of freedom. Over the paper's ten models this
reproduces Table 2's rho values and its p-values for PosIR, Q2 and Q3; for Q1 and
Q4 the paper prints 0.01 and 0.20 where the test gives 0.016 and 0.26 (an exact
permutation test gives 0.020 and 0.263), so those two printed p-values follow no
standard test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posir.metrics.columns import P_VALUE

MIN_MODELS = 3
COLUMN, SCORE_COLUMN, RHO, N_MODELS = "column", "score_column", "rho", "n_models"
#: PosIR Table 2's last rows: per score column (its display name first), Spearman's rho with the reference.
CORRELATION_COLUMNS = (COLUMN, SCORE_COLUMN, RHO, P_VALUE, N_MODELS)


@dataclass(frozen=True)
class Correlation:
    rho: float
    p_value: float
    n: int


def spearman(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Spearman's rho and its two-sided p-value over the pairs where both values are finite.

    NaN when fewer than three pairs remain or either side is constant.
    """
    from scipy.stats import spearmanr

    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"spearman: {a.shape[0]} reference values against {b.shape[0]} scores")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = int(keep.sum())
    if n < MIN_MODELS or np.ptp(a) == 0 or np.ptp(b) == 0:
        return Correlation(math.nan, math.nan, n)
    result = spearmanr(a, b)
    return Correlation(float(result.statistic), float(result.pvalue), n)


def correlation_table(frame: pd.DataFrame, reference_column: str, columns: Mapping[str, str]) -> pd.DataFrame:
    """One row per score column: Spearman's rho and p-value between ``reference_column`` and it.

    ``columns`` maps a column of ``frame`` to the name its row gets (e.g. ``Q1``).
    """
    rows = []
    for column, name in columns.items():
        result = spearman(frame[reference_column].tolist(), frame[column].tolist())
        rows.append(dict(zip(CORRELATION_COLUMNS, (name, column, result.rho, result.p_value, result.n))))
    return pd.DataFrame(rows, columns=list(CORRELATION_COLUMNS))
