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

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from posir.models.outputs import TermWeights, TokenVectors
from posir.scorers.base import check_pairs
from posir.scorers.bi_encoder import EmbeddingCounts
from posir.scorers.spec import ScorerSpec
from posir.windows import aggregate


def maxsim(query: TokenVectors, windows: Sequence[TokenVectors]) -> np.ndarray:
    """Each window's MaxSim with the query, in one product: float32 sums of the best window token per query token."""
    if not windows:
        return np.zeros(0, dtype=np.float32)
    stacked = np.concatenate([w.vectors for w in windows]).astype(np.float32)
    starts = np.cumsum([0] + [len(w.vectors) for w in windows[:-1]])
    product = query.vectors.astype(np.float32) @ stacked.T
    return np.maximum.reduceat(product, starts, axis=1).sum(axis=0, dtype=np.float32)


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
        self.score_windows = dot if self.model_spec.is_sparse else maxsim
        self._windows: dict[str, list[Any]] = {}
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
            self._queries.update(zip(new_queries, encoded.rows))
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
            self._windows[text] = windows.encoded.rows[cursor : cursor + len(spans)]
            cursor += len(spans)

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        self._prepare(queries, documents)
        by_query: dict[str, list[int]] = defaultdict(list)
        for index, query in enumerate(queries):
            by_query[query].append(index)
        scores: list[float | None] = [None] * len(queries)
        for query, members in by_query.items():
            texts = list(dict.fromkeys(documents[i] for i in members))
            flat = [row for text in texts for row in self._windows[text]]
            window_scores = self.score_windows(self._queries[query], flat)
            per_document, cursor = {}, 0
            for text in texts:
                n = len(self._windows[text])
                per_document[text] = aggregate(
                    [float(s) for s in window_scores[cursor : cursor + n]], self.spec.aggregation
                )
                cursor += n
            for i in members:
                scores[i] = per_document[documents[i]]
        return scores

    def close(self) -> None:
        self.service.close()
