"""Relative position bins and document-length buckets (PosIR sections 4.1 and 5.1).

Relative position is the reference span's midpoint divided by the positive
document's character length. It is cut into equal-width bins over [0, 1]
exactly as PosIR's analysis code cuts it,
``pd.cut(relpos, bins=np.linspace(0, 1, n + 1), include_lowest=True)``: every
bin is closed on the right, ``(a, b]``, and the first also holds 0. A span's
bin is computed from its integer offsets in exact arithmetic, so a position
that is exactly ``k / n`` always lands in bin ``k - 1`` and never one bin
later through floating-point noise.

Length buckets are half-open on the left, ``(lower, upper]`` tokens, as PosIR's
Q1 (0, 512]; the last bucket may be open (``upper`` is ``None``), as PosIR's
Q4 (1536, inf). A document outside every bucket is ``UNBUCKETED`` and counted
as such wherever buckets are reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# PosIR's buckets: 512-token intervals, the last one open-ended (ndcg_PSI_analysis.py cuts at 1536 and inf).
DEFAULT_BUCKETS: dict[str, int | None] = {"Q1": 512, "Q2": 1024, "Q3": 1536, "Q4": None}
UNBUCKETED = ""
# Tolerance for positions given as floats (read back from a table): far above binary noise, far below 1/n.
_FLOAT_EDGE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LengthBucket:
    name: str
    lower: int  # exclusive
    upper: int | None  # inclusive; None: no upper bound

    def contains(self, tokens: int) -> bool:
        return self.lower < tokens and (self.upper is None or tokens <= self.upper)

    @property
    def header(self) -> str:
        """``Q2 (1024)``, or ``Q4 (>1536)`` for an open bucket, as paper tables head their columns."""
        return f"{self.name} ({self.upper})" if self.upper is not None else f"{self.name} (>{self.lower})"


def length_buckets(upper_bounds: Mapping[str, int | None] = DEFAULT_BUCKETS) -> list[LengthBucket]:
    """Consecutive buckets from ``{name: inclusive upper bound}``, in increasing order.

    One bucket, the last, may have no upper bound (``None``).
    """
    bounded = sorted(((n, u) for n, u in upper_bounds.items() if u is not None), key=lambda item: item[1])
    open_ended = [n for n, u in upper_bounds.items() if u is None]
    if len(open_ended) > 1:
        raise ValueError(f"length buckets {open_ended} have no upper bound; only the last bucket may be open")
    buckets: list[LengthBucket] = []
    lower = 0
    for name, upper in bounded:
        if upper <= lower:
            raise ValueError(f"length bucket '{name}' has upper bound {upper} <= previous bound {lower}")
        buckets.append(LengthBucket(name, lower, int(upper)))
        lower = int(upper)
    buckets += [LengthBucket(name, lower, None) for name in open_ended]
    return buckets


def relative_position(span_start: int, span_end: int, doc_char_length: int) -> float:
    _check_span(span_start, span_end, doc_char_length)
    return (span_start + span_end) / 2.0 / doc_char_length


def span_bin(span_start: int, span_end: int, doc_char_length: int, n_bins: int = 20) -> int:
    """Bin of a span's relative position, in exact integer arithmetic (``(a, b]``, bin 0 also holds 0).

    The position is ``(start + end) / (2 * length)``; it lies in bin
    ``ceil(n * position) - 1``, i.e. ``ceil(n * (start + end) / (2 * length)) - 1``.
    """
    _check_span(span_start, span_end, doc_char_length)
    numerator, denominator = n_bins * (span_start + span_end), 2 * doc_char_length
    if numerator == 0:
        return 0
    return -(-numerator // denominator) - 1


def position_bin(relative: float, n_bins: int = 20) -> int:
    """Bin of a relative position given as a float (``(a, b]``, bin 0 also holds 0).

    A value within binary noise of an edge ``k / n`` counts as the edge itself;
    prefer :func:`span_bin` when the span's offsets are at hand.
    """
    if math.isnan(relative) or not 0.0 <= relative <= 1.0:
        raise ValueError(f"relative position {relative} is outside [0, 1]")
    return min(max(math.ceil(relative * n_bins - _FLOAT_EDGE_TOLERANCE) - 1, 0), n_bins - 1)


def _check_span(span_start: int, span_end: int, doc_char_length: int) -> None:
    if doc_char_length <= 0:
        raise ValueError("document has no characters")
    if not 0 <= span_start <= span_end <= doc_char_length:
        raise ValueError(f"span [{span_start}, {span_end}) lies outside a document of {doc_char_length} characters")


def bucket_of(tokens: int, buckets: Sequence[LengthBucket]) -> str:
    for bucket in buckets:
        if bucket.contains(tokens):
            return bucket.name
    return UNBUCKETED


def bin_edges(n_bins: int = 20) -> list[float]:
    return [i / n_bins for i in range(n_bins + 1)]
