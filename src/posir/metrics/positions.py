"""Relative position bins and document-length buckets (PosIR sections 4.1 and 5.1).

Relative position is the reference span's midpoint divided by the positive
document's character length; it is cut into equal-width bins over [0, 1], each
bin holding its lowest edge (the last bin also holds 1.0). Length buckets are
half-open on the left, ``(lower, upper]`` tokens, as PosIR's Q1 (0, 512].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

DEFAULT_BUCKETS: dict[str, int] = {"Q1": 512, "Q2": 1024, "Q3": 1536, "Q4": 2048}
UNBUCKETED = ""


@dataclass(frozen=True)
class LengthBucket:
    name: str
    lower: int  # exclusive
    upper: int  # inclusive

    def contains(self, tokens: int) -> bool:
        return self.lower < tokens <= self.upper


def length_buckets(upper_bounds: Mapping[str, int] = DEFAULT_BUCKETS) -> list[LengthBucket]:
    """Consecutive buckets from ``{name: inclusive upper bound}``, in increasing order."""
    buckets: list[LengthBucket] = []
    lower = 0
    for name, upper in sorted(upper_bounds.items(), key=lambda item: item[1]):
        if upper <= lower:
            raise ValueError(f"length bucket '{name}' has upper bound {upper} <= previous bound {lower}")
        buckets.append(LengthBucket(name, lower, int(upper)))
        lower = int(upper)
    return buckets


def relative_position(span_start: int, span_end: int, doc_char_length: int) -> float:
    if doc_char_length <= 0:
        raise ValueError("document has no characters")
    if not 0 <= span_start <= span_end <= doc_char_length:
        raise ValueError(f"span [{span_start}, {span_end}) lies outside a document of {doc_char_length} characters")
    return (span_start + span_end) / 2.0 / doc_char_length


def position_bin(relative: float, n_bins: int = 20) -> int:
    """Index of the equal-width bin holding ``relative``; 1.0 falls in the last bin."""
    if not 0.0 <= relative <= 1.0 or math.isnan(relative):
        raise ValueError(f"relative position {relative} is outside [0, 1]")
    return min(int(relative * n_bins), n_bins - 1)


def bucket_of(tokens: int, buckets: Sequence[LengthBucket]) -> str:
    for bucket in buckets:
        if bucket.contains(tokens):
            return bucket.name
    return UNBUCKETED


def bin_edges(n_bins: int = 20) -> list[float]:
    return [i / n_bins for i in range(n_bins + 1)]
