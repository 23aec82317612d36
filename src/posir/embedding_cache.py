"""A content-addressed cache of text embeddings, shared by every text set a model encodes.

Benchmarks overlap: XQuAD's questions are the queries of both ``xquad-long`` and
``xquad-parallel``, a human-translation variant repeats ``xquad-parallel``'s
Spanish texts, a sampled config repeats the full one's. The ``.npy`` file of a
text set is what Snakemake tracks; underneath, each (model encoding, role, text)
is encoded once and looked up by hash everywhere else.

The key covers everything that shapes an embedding and nothing else (:mod:`posir.models.identity`): the model
entry's encoding keys, the installed versions of the libraries that compute it, the weights' identity and the
versions our implementations declare. Encoders are called in length-homogeneous batches
(``posir.models.registry.encode_by_length``), so a text's vector does not depend on which other texts it was encoded
with either: whatever the cache holds, a text set's embeddings are the bytes an uncached encode gives.

This module is the cache's file (:class:`EmbeddingCache`). Jobs encode through it with
:class:`posir.encoding.EncodingService`, which opens the file once per job and loads a model only for texts the
cache lacks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from posir.cache_store import CacheError, CacheFacade, CacheKind, CacheStore, Table, by_first, single_keys

# Every failure of the embedding cache is a CacheError whose message names the file and the fix; the old name stays.
EmbeddingCacheError = CacheError


def _embedding(values: tuple[Any, ...], dim: int | None = None) -> tuple[np.ndarray, int]:
    """A stored (input tokens, vector) as the float32 vector and token count, or ValueError if unusable."""
    tokens, blob = values
    if tokens < 0:
        raise ValueError(f"a negative input token count ({tokens})")
    if not blob or len(blob) % 4:
        raise ValueError(f"{len(blob)} bytes is not a float32 vector")
    if dim is not None and len(blob) != 4 * dim:
        raise ValueError(f"{len(blob) // 4} floats where this model encoding gives {dim}")
    vector = np.frombuffer(blob, dtype=np.float32)
    if not np.isfinite(vector).all():
        raise ValueError(f"{int((~np.isfinite(vector)).sum())} non-finite value(s) in a vector")
    return vector, int(tokens)


def _spans(values: tuple[Any, ...]) -> list[tuple[int, int]]:
    spans = [tuple(span) for span in json.loads(values[0])]
    if not all(len(s) == 2 and all(isinstance(i, int) for i in s) and 0 <= s[0] <= s[1] for s in spans):
        raise ValueError(f"window spans that are not (start, end) character offsets: {values[0][:80]}")
    return spans  # type: ignore[return-value]


def _dimension(values: tuple[Any, ...]) -> int:
    if values[0] < 1:
        raise ValueError(f"a vector dimension of {values[0]}")
    return int(values[0])


EMBEDDING_CACHE = CacheKind(
    name="embedding",
    holds="embeddings",
    tables=(
        Table("embeddings", ("key",), ("input_tokens INTEGER NOT NULL", "vector BLOB NOT NULL"), _embedding),
        Table("windows", ("key",), ("spans TEXT NOT NULL",), _spans),
        # the vector length of each encoding identity, so a stored vector of another length is caught, and the
        # window budget per role (EmbeddingCache.window_budget), so a job whose windows are cached loads no model
        Table("dimensions", ("identity",), ("dim INTEGER NOT NULL",), _dimension),
    ),
    legacy_tables=frozenset({"embeddings", "windows"}),
)


class EmbeddingCache(CacheFacade):
    """key -> float32 vector and input tokens, and key -> window spans, in one :class:`~posir.cache_store.CacheStore`.

    Parallel encode jobs share the file; a stored vector that fails its checksum, is not float32 of the
    identity's length or holds a NaN is dropped and counted in :attr:`counts`, so it is encoded again.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._store = CacheStore(self.path, EMBEDDING_CACHE)

    def get_many(self, keys: Iterable[str], *, dim: int | None = None) -> dict[str, tuple[np.ndarray, int]]:
        """(vector, input tokens) of the stored keys; ``dim`` is the vector length to expect, when known."""
        return by_first(self._store.get_many("embeddings", single_keys(keys), decode=partial(_embedding, dim=dim)))

    def put_many(self, keys: Sequence[str], vectors: np.ndarray, input_tokens: Sequence[int]) -> None:
        if not (len(keys) == len(vectors) == len(input_tokens)):
            raise ValueError(f"{self.path}: {len(keys)} keys, {len(vectors)} vectors, {len(input_tokens)} lengths")
        self._store.put_many(
            "embeddings",
            [
                ((k,), (int(t), np.ascontiguousarray(v, dtype=np.float32).tobytes()))
                for k, v, t in zip(keys, vectors, input_tokens)
            ],
        )

    def get_spans(self, keys: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
        return by_first(self._store.get_many("windows", single_keys(keys)))

    def put_spans(self, spans: Mapping[str, Sequence[tuple[int, int]]]) -> None:
        self._store.put_many(
            "windows", [((key,), (json.dumps([list(s) for s in value]),)) for key, value in spans.items()]
        )

    def dimension(self, identity: str) -> int | None:
        """The vector length recorded for an encoding identity, if any."""
        return self._store.get("dimensions", (identity,))

    def set_dimension(self, identity: str, dim: int) -> None:
        self._store.put("dimensions", (identity,), (int(dim),))

    def window_budget(self, identity: str, role: str) -> int | None:
        """The text tokens one pass holds for ``role`` under an encoding identity, if recorded.

        Kept in the table of vector lengths under ``<identity>:window-budget:<role>``: a positive count per
        identity like the length, and every file of the current format already has the table.
        """
        return self._store.get("dimensions", (f"{identity}:window-budget:{role}",))

    def set_window_budget(self, identity: str, role: str, budget: int) -> None:
        self._store.put("dimensions", (f"{identity}:window-budget:{role}",), (int(budget),))
