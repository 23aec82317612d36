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
from pathlib import Path
from typing import Any

import numpy as np

from posir.models.rows import TermWeights, TokenVectors
from posir.scorers.base import check_pairs
from posir.scorers.bi_encoder import EmbeddingCounts
from posir.scorers.spec import ScorerSpec
from posir.windows import aggregate


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


class RescoreScorer:
    """A multi-vector or sparse entry scoring (query, document) by its windows, aggregated. Close it (the rerank
    step does) to close the caches."""

    def __init__(
        self,
        spec: ScorerSpec,
        model_entry: Mapping[str, Any],
        cache_path: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        from posir.encoding import EncodingService
        from posir.models.spec import ModelSpec

        self.name = spec.name
        self.spec = spec
        self.model_spec = ModelSpec.from_config(str(spec.model), model_entry)
        if self.model_spec.is_dense or not self.model_spec.encodes:
            raise ValueError(
                f"scorers.{spec.name}.model: '{spec.model}' is not a multi-vector or sparse model; use backend: "
                "bi-encoder for a dense one"
            )
        self.service = EncodingService(self.model_spec, cache_path, threads=threads, keyed="window")
        self.window, self.stride = self.service.window_size(
            "document", spec.window_tokens, spec.stride_tokens, f"scorers.{spec.name}"
        )
        self._windows: dict[str, Any] = {}
        self._queries: dict[str, Any] = {}
        self.counts = EmbeddingCounts()

    def __repr__(self) -> str:
        return f"RescoreScorer(name={self.name!r}, model={self.model_spec.name!r})"

    def identity(self) -> Mapping[str, Any]:
        return {
            "backend": "rescore",
            "encoding": self.service.identity,
            "window": self.window,
            "stride": self.stride,
            "aggregation": self.spec.aggregation,
            "score": "sparse dot product" if self.model_spec.is_sparse else "MaxSim",
        }

    def _prepare(self, queries: Sequence[str], documents: Sequence[str]) -> None:
        new_queries = list(dict.fromkeys(q for q in queries if q not in self._queries))
        if new_queries:
            encoded = self.service.encode(new_queries, "query")
            self.counts.from_cache += encoded.from_cache
            self.counts.encoded += encoded.encoded
            rows = encoded.rows if self.model_spec.is_sparse else [as_float32(r.vectors) for r in encoded.rows]
            self._queries.update(zip(new_queries, rows))
        new_documents = list(dict.fromkeys(d for d in documents if d not in self._windows))
        if not new_documents:
            return
        windows = self.service.encode_windows(
            new_documents, "document", self.window, self.stride, first_only=self.spec.aggregation == "firstp"
        )
        self.counts.from_cache += windows.encoded.from_cache
        self.counts.encoded += windows.encoded.encoded
        cursor = 0
        for text, spans in zip(new_documents, windows.spans):
            rows = windows.encoded.rows[cursor : cursor + len(spans)]
            self._windows[text] = rows if self.model_spec.is_sparse else StackedWindows.of(rows)
            cursor += len(spans)

    def _window_scores(self, query: str, document: str) -> np.ndarray:
        if self.model_spec.is_sparse:
            return dot(self._queries[query], self._windows[document])
        return maxsim(self._queries[query], self._windows[document])

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        self._prepare(queries, documents)
        scores: list[float | None] = []
        for query, document in zip(queries, documents):
            window_scores = self._window_scores(query, document)
            scores.append(aggregate([float(v) for v in window_scores], self.spec.aggregation))
        return scores

    def close(self) -> None:
        self.service.close()
