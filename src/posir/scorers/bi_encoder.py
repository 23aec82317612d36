"""Passage-level bi-encoder relevance: cosine of sentence-transformers embeddings, per document window.

Config (``backend: bi-encoder``): ``model`` or ``model_package``,
``query_prompt``, ``document_prompt``, ``max_length`` (the model's
``max_seq_length`` by default), ``batch_size``, ``device``, ``dtype``,
``long_input``, ``window_tokens``, ``stride_tokens``, ``aggregation``.

Each window is embedded on its own and scored by cosine with the query
(the passage-level dense scoring of Dai and Callan 2019's FirstP/MaxP applied
to a bi-encoder); windows never exceed what the model reads, so nothing is
truncated silently.  Every distinct text is embedded once per scorer.

Extension point: this is the sentence-transformers implementation that
quality control uses today.  A bi-encoder built on the model registry
(:mod:`posir.models.registry`) and the embedding cache replaces it with
``posir.scorers.spec.register_backend("bi-encoder", factory, keys=...)``; it
has to provide ``name``, ``identity()`` and ``score()`` (:class:`~posir.scorers.base.PairScorer`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from posir.scorers.base import check_pairs, installed_version, model_fingerprint
from posir.scorers.spec import ScorerSpec
from posir.scorers.windows import aggregate, tokenizer_windows

SPECIAL_TOKENS = 2  # [CLS] ... [SEP]


class SentenceTransformerBiEncoder:
    """Cosine similarity of normalised sentence-transformers embeddings, aggregated over windows."""

    def __init__(self, spec: ScorerSpec) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self.name = spec.name
        self.spec = spec
        self.path = spec.model_path()
        self.model = SentenceTransformer(self.path, device=spec.device)
        if spec.max_length is not None:
            self.model.max_seq_length = spec.max_length
        if spec.dtype is not None:
            self.model.to(getattr(torch, spec.dtype))
        limit = int(self.model.max_seq_length or 512)
        window, self.stride = spec.window(limit)
        # A window never exceeds what the model reads (less its special tokens): no silent truncation.
        self.window = min(window, limit - SPECIAL_TOKENS)
        self.stride = min(self.stride, self.window)
        self.max_length = limit
        self._documents: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}

    def __repr__(self) -> str:
        return f"SentenceTransformerBiEncoder(name={self.name!r}, model={self.path!r})"

    def identity(self) -> Mapping[str, Any]:
        windows: dict[str, Any] = ({"long_input": "truncate"} if self.spec.long_input == "truncate" else
                                   {"long_input": "windows", "window": self.window, "stride": self.stride,
                                    "aggregation": self.spec.aggregation})
        return {"backend": "bi-encoder", "model": model_fingerprint(self.path), "dtype": self.spec.dtype,
                "max_length": self.max_length, "query_prompt": self.spec.query_prompt,
                "document_prompt": self.spec.document_prompt, "score": "cosine", **windows,
                "versions": {p: installed_version(p) for p in
                             ("sentence-transformers", "transformers", self.spec.model_package) if p}}

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), prompt=prompt or None, batch_size=self.spec.batch_size,
                                            normalize_embeddings=True, convert_to_numpy=True,
                                            show_progress_bar=False), dtype=np.float32)

    def _split(self, text: str) -> list[str]:
        if self.spec.long_input == "truncate":
            return [text]
        return tokenizer_windows(self.model.tokenizer, text, self.window, self.stride)

    def _embed(self, store: dict[str, np.ndarray], texts: Sequence[str], role: str) -> None:
        # Each distinct text is embedded once: false-negative scoring sees the same documents for many queries.
        todo = list(dict.fromkeys(t for t in texts if t not in store))
        if not todo:
            return
        if role == "query":
            for text, vector in zip(todo, self._encode(todo, self.spec.query_prompt)):
                store[text] = vector[None, :]
            return
        pieces = [self._split(t) for t in todo]
        vectors = self._encode([p for ps in pieces for p in ps], self.spec.document_prompt)
        cursor = 0
        for text, ps in zip(todo, pieces):
            store[text] = vectors[cursor:cursor + len(ps)]
            cursor += len(ps)

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        self._embed(self._queries, queries, "query")
        self._embed(self._documents, documents, "document")
        method = "firstp" if self.spec.long_input == "truncate" else self.spec.aggregation
        return [aggregate([float(s) for s in self._documents[d] @ self._queries[q][0]], method)
                for q, d in zip(queries, documents)]
