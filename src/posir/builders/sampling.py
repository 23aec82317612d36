"""Length-aware sampling (PosIR section 3.1).

Eight buckets of 256 tokens over (0, 2048], drawn in the ratio
3:3:3:3:2:2:2:2 so that documents under 1024 tokens come 1.5 times as often
as longer ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

POSIR_RATIO: tuple[int, ...] = (3, 3, 3, 3, 2, 2, 2, 2)
POSIR_BUCKET_WIDTH = 256


@dataclass(frozen=True)
class LengthAwareSampler:
    bucket_width: int = POSIR_BUCKET_WIDTH
    ratio: tuple[int, ...] = POSIR_RATIO

    def __post_init__(self) -> None:
        if self.bucket_width <= 0 or not self.ratio or min(self.ratio) < 0 or sum(self.ratio) <= 0:
            raise ValueError(f"invalid length-aware sampling: width {self.bucket_width}, ratio {self.ratio}")

    @property
    def max_tokens(self) -> int:
        return self.bucket_width * len(self.ratio)

    @property
    def probabilities(self) -> np.ndarray:
        weights = np.asarray(self.ratio, dtype=float)
        return weights / weights.sum()

    def bucket_index(self, tokens: int) -> int | None:
        """Sampling bucket ``(i*w, (i+1)*w]`` holding ``tokens``, or None past the last."""
        if tokens <= 0 or tokens > self.max_tokens:
            return None
        return (tokens - 1) // self.bucket_width

    def draw_target(self, rng: np.random.Generator) -> int:
        """A target length: a bucket by ratio, then a length uniform within it."""
        bucket = int(rng.choice(len(self.ratio), p=self.probabilities))
        return int(rng.integers(bucket * self.bucket_width + 1, (bucket + 1) * self.bucket_width + 1))

    def sample_documents(self, token_lengths: Sequence[int], n: int, rng: np.random.Generator) -> list[int]:
        """Indices of up to ``n`` documents drawn without replacement in the bucket ratio.

        A bucket with fewer documents than its share gives what it has; the
        shortfall is not moved to other buckets, so the ratio is never distorted.
        """
        by_bucket: dict[int, list[int]] = {}
        for index, tokens in enumerate(token_lengths):
            bucket = self.bucket_index(tokens)
            if bucket is not None:
                by_bucket.setdefault(bucket, []).append(index)
        quotas = np.floor(self.probabilities * n).astype(int)
        for extra in np.argsort(-(self.probabilities * n - quotas))[: n - quotas.sum()]:
            quotas[extra] += 1
        chosen: list[int] = []
        for bucket, quota in enumerate(quotas):
            pool = by_bucket.get(bucket, [])
            take = min(int(quota), len(pool))
            if take:
                chosen.extend(int(i) for i in rng.choice(pool, size=take, replace=False))
        return sorted(chosen)
