"""PSI, the Position Sensitivity Index (Zeng et al., section 3.3), and the position means it compares.

PSI = 1 - min/max of a measure's mean at each evidence position: over the relative position bins of a length bucket
(PosIR section 5.2, where different queries sit at different positions) or over the target positions of a controlled
family (where every query is measured at every position). Positions holding fewer than ``min_bin_queries`` queries
are left out (NaN); PSI is NaN when no position is left or the best scores 0 (undefined, Zeng et al. Eq. 1).

:func:`psi` is the one computation of the index, on one set of means or on a stack of them (bootstrap resamples,
models); a bucket's score is the mean of its non-empty bin means (``<measure>_bin_mean``, PosIR's convention), with
the plain mean over its queries beside it (``<measure>_query_mean``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from posir.metrics.measure import Measure, RankingMeasure
from posir.metrics.measures.ndcg import NDCG


def psi(means: np.ndarray | list[float], axis: int = -1) -> np.ndarray:
    """1 - min/max of ``means`` along ``axis``, NaN values left out; NaN where none is left or the best is not
    positive. A 0-d array for one set of means."""
    values = np.asarray(means, dtype=float)
    if values.shape[axis] == 0:
        return np.full(np.delete(values.shape, axis if axis >= 0 else values.ndim + axis), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a stack row with every position left out: NaN, as wanted
        best = np.nanmax(values, axis=axis)
        worst = np.nanmin(values, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isfinite(best) & (best > 0), 1.0 - worst / np.where(best > 0, best, 1.0), np.nan)


@dataclass(frozen=True)
class PositionSensitivity(Measure):
    """PSI of ``of``'s position means, over the positions holding at least ``min_bin_queries`` queries."""

    family = "PSI"
    stem = "psi"
    bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)

    of: RankingMeasure = field(default_factory=lambda: NDCG(cutoff=10))
    min_bin_queries: int = 10

    @property
    def bins_used(self) -> str:
        """How many bins PSI compared (at least ``min_bin_queries`` queries each)."""
        return self.of_psi("bins_used")

    @property
    def bins_skipped(self) -> str:
        """The non-empty bins below the minimum, comma-separated."""
        return self.of_psi("bins_skipped")

    @property
    def defined_share(self) -> str:
        """The share of bootstrap resamples in which PSI is defined."""
        return self.of_psi("defined_share")

    @property
    def bin_mean(self) -> str:
        """A bucket's score as PosIR reports it: the mean of its non-empty bin means (PosIR section 5.2)."""
        return self.of.of("bin_mean")

    @property
    def query_mean(self) -> str:
        """A bucket's plain mean over its queries, reported beside the bin mean."""
        return self.of.of("query_mean")

    def of_psi(self, suffix: str) -> str:
        return f"{self.column}_{suffix}"

    def eligible(self, means: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The means PSI compares: NaN where a position holds fewer than ``min_bin_queries`` queries (or none)."""
        return np.where(np.asarray(counts) >= max(int(self.min_bin_queries), 1), means, np.nan)

    def __call__(self, means: np.ndarray, counts: np.ndarray | None = None, axis: int = -1) -> np.ndarray:
        return psi(means if counts is None else self.eligible(means, counts), axis)
