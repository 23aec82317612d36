"""The one bootstrap of the workflow: queries drawn with replacement, and the interval read off the resamples.

PosIR (section 5.2) and Zeng et al. (section 3.3) report point values only; every interval of the workflow comes
from here. Queries are the resampled unit:

* **draws** (:func:`draws`): index matrices of ``resamples`` rows of ``n`` query indices, in chunks that bound
  memory. Which queries a resample draws depends only on the seed, a label (a length bucket, a group of a
  controlled family; none for a pair of runs) and the query count, never on the scores: two models' tables of the
  same queries in the same order are resampled alike, which makes every comparison of them **paired**;
* **means** (:func:`resampled_means`): the mean of each resample, of one score per query or of a row of scores per
  query (a query drawn brings its scores at every position: paired across columns);
* **interval** (:func:`interval`): ``centered`` (the default) places the resamples' spread around the point
  estimate, ``[est - max(m - q_lo, 0), est + max(q_hi - m, 0)]`` with ``m`` the resamples' mean and ``q`` their
  quantiles, clipped to the statistic's range (``bounds``: a measure's range, or the range of a difference of two
  of its values); ``percentile`` is the plain ``[q_lo, q_hi]``. PSI is a max/min statistic and resampling inflates
  it (the bias ``m - est``): for nearly flat position curves the percentile interval can lie wholly above the point
  estimate, which the centered interval cannot. For means the bias is ~0 and both coincide.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Iterator

import numpy as np

from posir.metrics.params import BootstrapParams

INTERVALS = ("centered", "percentile")
#: Resample index matrices are drawn in chunks of at most this many entries (drawing in chunks gives the same
#: indices as drawing at once: the generator's stream does not depend on the chunks).
CHUNK_ENTRIES = 4_000_000
#: Rendered tables and figures show no interval for a statistic of fewer queries: resampling one query gives
#: ``[x, x]``, which reads as certainty, and a handful give an interval as wide as the data allows.
MIN_INTERVAL_QUERIES = 10


def generator(seed: int, label: str | None = None) -> np.random.Generator:
    """The generator of one set of resamples, fixed by the seed and, where several sets are drawn (the strata of a
    run, the groups of a family), the set's label."""
    if label is None:
        return np.random.default_rng(seed)
    return np.random.default_rng([seed, zlib.crc32(label.encode("utf-8"))])


def draws(
    n: int, resamples: int, rng: np.random.Generator, entries_per_row: int | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """``(first resample, indices)`` chunks of ``resamples`` rows of ``n`` query indices drawn with replacement; a
    chunk holds at most CHUNK_ENTRIES entries of ``entries_per_row`` each (default ``n``; more when every drawn
    query brings a row of scores)."""
    if n == 0:
        return
    chunk = max(1, min(resamples, CHUNK_ENTRIES // max(entries_per_row or n, 1)))
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        yield start, rng.integers(0, n, size=(rows, n))


def resampled_means(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The mean of each of ``resamples`` resamples of the queries (the rows of ``values``): shape (resamples,) for
    one score per query, (resamples, k) for k scores per query (a drawn query brings all k)."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    means = np.full((resamples, *values.shape[1:]), np.nan)
    for start, picks in draws(n, resamples, rng, n * int(np.prod(values.shape[1:], dtype=int))):
        means[start : start + len(picks)] = values[picks].mean(axis=1)
    return means


def interval(
    replicates: np.ndarray, point: np.ndarray, params: BootstrapParams, bounds: tuple[float, float] = (0.0, 1.0)
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, bias) over the resample axis 0; NaN replicates are ignored; a centered interval is clipped to
    ``bounds``, the statistic's range."""
    alpha = 1.0 - params.confidence
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(replicates, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
        centre = np.nanmean(replicates, axis=0)
    bias = centre - point
    if params.interval == "centered":
        low = np.clip(point - np.maximum(centre - low, 0.0), *bounds)
        high = np.clip(point + np.maximum(high - centre, 0.0), *bounds)
    return low, high, bias


def paired_difference(
    a: np.ndarray, b: np.ndarray, params: BootstrapParams, bounds: tuple[float, float]
) -> tuple[float, float, float]:
    """mean(a - b) over paired queries and its interval (the queries resampled with replacement, both sides alike)."""
    differences = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    point = float(differences.mean())
    replicates = resampled_means(differences, params.resamples, generator(params.seed))
    low, high, _ = interval(replicates, np.asarray(point), params, bounds)
    return point, float(low), float(high)
