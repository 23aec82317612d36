"""Passage-level bi-encoder relevance: any dense entry of ``models:`` scoring a document by its windows.

Config (``backend: bi-encoder``): ``model`` (the name of a dense ``models:``
entry), ``window_tokens`` and ``stride_tokens`` (in that model's tokens; by
default everything one pass reads, and half a window), ``aggregation``
(``firstp``, ``maxp``, ``sump`` or ``mean``: Dai and Callan, SIGIR 2019).

Each window is a text the model reads whole, embedded through the encoding
service (:mod:`posir.encoding`) under the model's window identity
(:func:`posir.embedding_cache.window_identity`): a window is encoded once per
model whatever uses it, this scorer in generation quality control or in a
reranking pipeline, or the model's chunked first stage (``long_input:
chunks``) with the same windows. The query is embedded the same way, and a
window scores by its inner product with the query (cosine for the normalised
models). ``firstp`` embeds the first window only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posir.scorers.base import check_pairs
from posir.scorers.spec import ScorerSpec
from posir.windows import aggregate

if TYPE_CHECKING:
    from posir.encoding import Encoded, EncodedRows


@dataclass
class EmbeddingCounts:
    """Texts a bi-encoder embedded: served by the embedding cache, or encoded now."""

    from_cache: int = 0
    encoded: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class ModelWindowScorer:
    """A ``models:`` entry scoring (query, document) by the document's windows, aggregated (``aggregation``).

    It encodes through one :class:`posir.encoding.EncodingService` under the model's window identity, open for the
    scorer's life: :meth:`close` it (the rerank step does) to close the caches. A subclass says which entries it
    scores with (:meth:`refusal`), what it keeps of a query's and the windows' encodings and how a window scores.
    """

    def __init__(
        self,
        spec: ScorerSpec,
        model_entry: Mapping[str, Any],
        cache_path: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        from posir.encoding import EncodingService
        from posir.models.declarations.spec import ModelSpec

        self.name = spec.name
        self.spec = spec
        self.model_spec = ModelSpec.from_config(str(spec.model), model_entry)
        refusal = self.refusal(self.model_spec)
        if refusal:
            raise ValueError(f"scorers.{spec.name}.model: '{spec.model}' {refusal}")
        self.service = EncodingService(self.model_spec, cache_path, threads=threads, keyed="window")
        self.window, self.stride = self.service.window_size(
            "document", spec.window_tokens, spec.stride_tokens, f"scorers.{spec.name}"
        )
        self._windows: dict[str, Any] = {}
        self._queries: dict[str, Any] = {}
        # texts (windows and queries) whose encoding the cache held, and those encoded now
        self.counts = EmbeddingCounts()

    def refusal(self, model: Any) -> str | None:
        """Why the scorer cannot score with ``model`` (None: it can)."""
        raise NotImplementedError

    def queries_kept(self, encoded: Any) -> list[Any]:
        """What is kept of each query's encoding."""
        raise NotImplementedError

    def windows_kept(self, encoded: Any) -> list[Any]:
        """What is kept of each window's encoding, in order."""
        raise NotImplementedError

    def window_scores(self, query: Any, windows: Any) -> np.ndarray:
        """Each window's score against the query."""
        raise NotImplementedError

    @property
    def encoder(self) -> Any:
        """The model, loaded the first time a text is not in the cache (a rerank over cached windows never does)."""
        return self.service.encoder

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={self.model_spec.name!r})"

    def _count(self, encoded: Encoded | EncodedRows) -> Encoded | EncodedRows:
        self.counts.from_cache += encoded.from_cache
        self.counts.encoded += encoded.encoded
        return encoded

    def _prepare(self, queries: Sequence[str], documents: Sequence[str]) -> None:
        new_queries = list(dict.fromkeys(q for q in queries if q not in self._queries))
        if new_queries:
            encoded = self._count(self.service.encode(new_queries, "query"))
            self._queries.update(zip(new_queries, self.queries_kept(encoded)))
        new_documents = list(dict.fromkeys(d for d in documents if d not in self._windows))
        if not new_documents:
            return
        # FirstP: only the first window counts, so no other is encoded
        windows = self.service.encode_windows(
            new_documents, "document", self.window, self.stride, first_only=self.spec.aggregation == "firstp"
        )
        kept = self.windows_kept(self._count(windows.encoded))
        cursor = 0
        for text, doc_spans in zip(new_documents, windows.spans):
            self._windows[text] = self.stacked(kept[cursor : cursor + len(doc_spans)])
            cursor += len(doc_spans)

    def stacked(self, windows: Any) -> Any:
        """A document's windows as :meth:`window_scores` reads them (as kept, by default)."""
        return windows

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        self._prepare(queries, documents)
        return [
            aggregate([float(v) for v in self.window_scores(self._queries[q], self._windows[d])], self.spec.aggregation)
            for q, d in zip(queries, documents)
        ]

    def close(self) -> None:
        """Close the caches; the scorer encodes nothing more."""
        self.service.close()


class ModelBiEncoderScorer(ModelWindowScorer):
    """A dense model of the registry scoring (query, document) by the inner product of their windows' vectors."""

    def refusal(self, model: Any) -> str | None:
        return None if model.is_dense else "is not a dense model (a bi-encoder scores with embeddings)"

    @property
    def window_identity(self) -> str:
        return self.service.identity

    def identity(self) -> Mapping[str, Any]:
        return {
            "backend": "bi-encoder",
            "encoding": self.window_identity,
            "window": self.window,
            "stride": self.stride,
            "aggregation": self.spec.aggregation,
            "score": "inner product",
        }

    def queries_kept(self, encoded: Any) -> list[Any]:
        return list(encoded.vectors)

    def windows_kept(self, encoded: Any) -> Any:
        return encoded.vectors

    def window_scores(self, query: Any, windows: Any) -> np.ndarray:
        return windows @ query
