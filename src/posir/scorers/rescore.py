"""Late interaction or SPLADE as a second stage: a first stage's top documents rescored by a multi-vector entry's
MaxSim or a sparse entry's dot product (how ColBERT is often used: Khattab and Zaharia 2020, section 3.5,
re-ranking; docs/late-interaction.md).

Config (``backend: rescore``): ``model`` (a multi-vector or sparse entry of ``models:``), ``window_tokens`` and
``stride_tokens`` (in that model's tokens; by default what one pass reads, and half a window), ``aggregation``
(``maxp`` by default: Dai and Callan, SIGIR 2019). As the bi-encoder scorer does, every window and query is encoded
through the encoding service under the model's window identity, so a chunked entry of the same model and this
scorer share them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from posir.models.rows import TermWeights, TokenVectors
from posir.scorers.bi_encoder import ModelWindowScorer


def as_float32(vectors: np.ndarray) -> np.ndarray:
    """float16 token vectors as float32 (torch's conversion: numpy's is several times slower)."""
    import torch

    return torch.from_numpy(np.array(vectors, dtype=np.float16)).float().numpy()


@dataclass(frozen=True)
class StackedWindows:
    """A document's windows' token vectors in one float32 matrix, and where each window starts."""

    vectors: np.ndarray
    starts: np.ndarray

    @classmethod
    def of(cls, windows: Sequence[TokenVectors]) -> StackedWindows:
        lengths = [len(w.vectors) for w in windows]
        return cls(as_float32(np.concatenate([w.vectors for w in windows])), np.cumsum([0, *lengths[:-1]]))


def maxsim(query: np.ndarray, windows: StackedWindows) -> np.ndarray:
    """Each window's MaxSim with the query's float32 token vectors: the sums of the best window token per query
    token, from one product."""
    product = query @ windows.vectors.T
    return np.maximum.reduceat(product, windows.starts, axis=1).sum(axis=0, dtype=np.float32)


def dot(query: TermWeights, windows: Sequence[TermWeights]) -> np.ndarray:
    """Each window's sparse dot product with the query (float32 products, summed in float32)."""
    scores = np.zeros(len(windows), dtype=np.float32)
    for index, window in enumerate(windows):
        _, mine, theirs = np.intersect1d(
            query.terms["term"], window.terms["term"], assume_unique=True, return_indices=True
        )
        scores[index] = np.sum(query.terms["weight"][mine] * window.terms["weight"][theirs], dtype=np.float32)
    return scores


class RescoreScorer(ModelWindowScorer):
    """A multi-vector or sparse entry scoring (query, document) by its windows, aggregated. Close it (the rerank
    step does) to close the caches."""

    def refusal(self, model: Any) -> str | None:
        if model.is_dense or not model.encodes:
            return "is not a multi-vector or sparse model; use backend: bi-encoder for a dense one"
        return None

    def identity(self) -> Mapping[str, Any]:
        return {
            "backend": "rescore",
            "encoding": self.service.identity,
            "window": self.window,
            "stride": self.stride,
            "aggregation": self.spec.aggregation,
            "score": "sparse dot product" if self.model_spec.is_sparse else "MaxSim",
        }

    def queries_kept(self, encoded: Any) -> list[Any]:
        return encoded.rows if self.model_spec.is_sparse else [as_float32(r.vectors) for r in encoded.rows]

    def windows_kept(self, encoded: Any) -> list[Any]:
        return encoded.rows

    def stacked(self, windows: Any) -> Any:
        return windows if self.model_spec.is_sparse else StackedWindows.of(windows)

    def window_scores(self, query: Any, windows: Any) -> np.ndarray:
        return dot(query, windows) if self.model_spec.is_sparse else maxsim(query, windows)
