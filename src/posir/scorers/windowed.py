"""Shared by the local reranker backends: score (query, window) pairs, aggregate per document.

``long_input: windows`` (default) cuts each document into token windows of the
model's own tokenizer (:mod:`posir.windows`) and combines the window
scores (``aggregation``, MaxP by default, as quality control needs).
``long_input: truncate`` passes the whole document and lets the model cut it at
``max_length``: the model as it is, position bias included, which is what a
reranking stage that *measures* a reranker wants.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from posir.scorers.base import check_pairs, installed_version, model_fingerprint
from posir.scorers.spec import ScorerSpec
from posir.windows import score_windowed, tokenizer_windows

logger = logging.getLogger("posir.scorers")

# Room a pair input needs beyond its two texts: [CLS] q [SEP] d [SEP] (BERT), <s> q </s></s> d </s> (XLM-R).
PAIR_SPECIAL_TOKENS = 4


class WindowedPairScorer:
    """Subclasses set ``name``, ``spec``, ``path``, ``max_length``, ``window``, ``stride`` and implement
    :meth:`_tokenizer` and :meth:`_score_pairs`."""

    name: str
    spec: ScorerSpec
    path: str
    max_length: int
    window: int
    stride: int

    def _tokenizer(self) -> Any:
        raise NotImplementedError

    def _score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        raise NotImplementedError

    def window_identity(self) -> Mapping[str, Any]:
        if self.spec.long_input == "truncate":
            return {"long_input": "truncate", "max_length": self.max_length}
        return {
            "long_input": "windows",
            "max_length": self.max_length,
            "window": self.window,
            "stride": self.stride,
            "aggregation": self.spec.aggregation,
        }

    def local_identity(self, backend: str, library: str, **settings: Any) -> Mapping[str, Any]:
        """The score cache identity of a local reranker: its weights, dtype, settings, windows and versions."""
        libraries = (library, "transformers", self.spec.model_package)
        return {
            "backend": backend,
            **settings,
            "model": model_fingerprint(self.path),
            "dtype": self.spec.dtype,
            "score": "logit",
            **self.window_identity(),
            "versions": {p: installed_version(p) for p in libraries if p},
        }

    def split(self, document: str) -> list[str]:
        if self.spec.long_input == "truncate":
            return [document]
        return tokenizer_windows(self._tokenizer(), document, self.window, self.stride)

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        if not queries:
            return []
        method = "firstp" if self.spec.long_input == "truncate" else self.spec.aggregation
        return list(score_windowed(queries, documents, self.split, self._checked_pairs, method))

    def _checked_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        self._warn_truncated(pairs)
        return self._score_pairs(pairs)

    def _warn_truncated(self, pairs: list[tuple[str, str]]) -> None:
        """Say how many windows the model will cut because query + window exceed ``max_length``.

        Windows leave 64 tokens for the query by default; a longer query makes
        the model drop the window's tail, which no score would reveal.
        """
        if self.spec.long_input == "truncate" or not pairs:
            return
        tokenizer = self._tokenizer()
        queries = list(dict.fromkeys(q for q, _ in pairs))
        counts = tokenizer(queries, add_special_tokens=False, verbose=False)["input_ids"]
        query_tokens = {q: len(ids) for q, ids in zip(queries, counts)}
        window_tokens = tokenizer([w for _, w in pairs], add_special_tokens=False, verbose=False)["input_ids"]
        cut = sum(
            query_tokens[q] + len(ids) + PAIR_SPECIAL_TOKENS > self.max_length
            for (q, _), ids in zip(pairs, window_tokens)
        )
        if cut:
            logger.warning(
                "scorer %s: %d of %d (query, window) pairs exceed max_length %d and are cut by the "
                "model; lower scorers.%s.window_tokens",
                self.name,
                cut,
                len(pairs),
                self.max_length,
                self.name,
            )
