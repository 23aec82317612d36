"""The cache of token vectors and sparse vectors: multi-vector and sparse entries' rows, keyed like dense vectors.

A multi-vector entry's text is a matrix of token vectors with a record per token, a sparse entry's a list of terms;
neither fits the embedding cache's one-vector rows, so they have a cache file of their own beside it
(:func:`token_cache_path`: ``results/embedding-cache.sqlite`` has ``results/embedding-cache.tokens.sqlite``), with the
same keys (:func:`posir.embedding_cache.text_key` of the entry's encoding identity, the role and the text) and the
same store (checksums, the ``shards`` mode, the fold: :mod:`posir.cache_store`). Window spans and budgets stay in the
embedding cache, under the entry's identity. docs/late-interaction.md
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from posir.cache_store import CacheFacade, CacheKind, CacheStore, Table, by_first, single_keys
from posir.models.rows import TERM_RECORD, TOKEN_RECORD, TOKEN_VECTOR_DTYPE, Row, TermWeights, TokenVectors

TOKEN_CACHE_SUFFIX = ".tokens"


def token_cache_path(embedding_cache: str | Path) -> Path:
    """The token-vector cache beside an embedding cache file (``<stem>.tokens<suffix>``)."""
    path = Path(embedding_cache)
    return path.with_name(f"{path.stem}{TOKEN_CACHE_SUFFIX}{path.suffix}")


def _token_vectors(values: tuple[Any, ...]) -> TokenVectors:
    tokens, dim, vectors_blob, records_blob = values
    if tokens < 0 or dim < 1:
        raise ValueError(f"{tokens} input tokens, dimension {dim}")
    if len(records_blob) % TOKEN_RECORD.itemsize:
        raise ValueError(f"{len(records_blob)} bytes is not a whole number of token records")
    records = np.frombuffer(records_blob, dtype=TOKEN_RECORD)
    itemsize = np.dtype(TOKEN_VECTOR_DTYPE).itemsize
    if len(vectors_blob) != len(records) * dim * itemsize:
        raise ValueError(f"{len(vectors_blob)} bytes of vectors for {len(records)} tokens of dimension {dim}")
    vectors = np.frombuffer(vectors_blob, dtype=TOKEN_VECTOR_DTYPE).reshape(len(records), dim)
    if not np.isfinite(vectors).all():
        raise ValueError("non-finite values in token vectors")
    return TokenVectors(vectors, records, int(tokens))


def _term_weights(values: tuple[Any, ...]) -> TermWeights:
    tokens, records_blob = values
    if tokens < 0 or len(records_blob) % TERM_RECORD.itemsize:
        raise ValueError(f"{tokens} input tokens, {len(records_blob)} bytes of term records")
    records = np.frombuffer(records_blob, dtype=TERM_RECORD)
    if not (np.isfinite(records["weight"]).all() and (records["weight"] > 0).all()):
        raise ValueError("a sparse weight that is not a positive number")
    if len(records) > 1 and not (np.diff(records["term"]) > 0).all():
        raise ValueError("sparse terms not strictly ascending")
    return TermWeights(records, int(tokens))


TOKEN_CACHE = CacheKind(
    name="token-vector",
    holds="token vectors and sparse vectors",
    tables=(
        Table(
            "token_vectors",
            ("key",),
            ("input_tokens INTEGER NOT NULL", "dim INTEGER NOT NULL", "vectors BLOB NOT NULL", "tokens BLOB NOT NULL"),
            _token_vectors,
        ),
        Table("term_weights", ("key",), ("input_tokens INTEGER NOT NULL", "terms BLOB NOT NULL"), _term_weights),
    ),
    title="token-vector cache",
    setting="embedding_cache in config.yaml (the token-vector cache is the file beside it)",
)

_TABLES = {TokenVectors: "token_vectors", TermWeights: "term_weights"}


class TokenCache(CacheFacade):
    """key -> a text's :class:`TokenVectors` or :class:`TermWeights`; a stored row that fails its checksum or its
    check is dropped, counted and encoded again."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._store = CacheStore(self.path, TOKEN_CACHE)

    def get_many(self, keys: Iterable[str], sparse: bool) -> dict[str, Row]:
        table = "term_weights" if sparse else "token_vectors"
        decode = _term_weights if sparse else _token_vectors
        return by_first(self._store.get_many(table, single_keys(keys), decode=decode))

    def put_many(self, keys: Sequence[str], rows: Sequence[Row]) -> None:
        if len(keys) != len(rows):
            raise ValueError(f"{self.path}: {len(keys)} keys, {len(rows)} rows")
        by_table: dict[str, list[tuple[tuple[str], tuple[Any, ...]]]] = {}
        for key, row in zip(keys, rows):
            if isinstance(row, TokenVectors):
                vectors = np.ascontiguousarray(row.vectors, dtype=TOKEN_VECTOR_DTYPE)
                values: tuple[Any, ...] = (
                    row.input_tokens,
                    int(vectors.shape[1]),
                    vectors.tobytes(),
                    np.ascontiguousarray(row.tokens, dtype=TOKEN_RECORD).tobytes(),
                )
            else:
                values = (row.input_tokens, np.ascontiguousarray(row.terms, dtype=TERM_RECORD).tobytes())
            by_table.setdefault(_TABLES[type(row)], []).append(((key,), values))
        for table, entries in by_table.items():
            self._store.put_many(table, entries)
