"""What every typed cache shares: :class:`CacheFacade`, the base of a cache over one store, and one-column keys.

The five caches (:mod:`posir.embedding_cache`, :mod:`posir.scorers.cache`, :mod:`posir.llm.cache`,
:mod:`posir.translate.cache`, :mod:`posir.analyses.saliency`) are such facades over a
:class:`posir.cache_store.CacheStore`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from posir.cache_store.store import CacheCounts, CacheStore
from posir.cache_store.tables import Key

F = TypeVar("F", bound="CacheFacade")


class CacheFacade:
    """Base of a typed cache over one :class:`CacheStore` (``self._store``): its counts, closing, ``with`` use."""

    _store: CacheStore

    @property
    def counts(self) -> CacheCounts:
        """Hits, misses and corrupt values dropped since the cache was opened."""
        return self._store.counts

    def close(self) -> None:
        self._store.close()

    def __enter__(self: F) -> F:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def single_keys(keys: Iterable[str]) -> list[Key]:
    """One-column keys as the tuples the store takes."""
    return [(key,) for key in keys]


def by_first(found: Mapping[Key, Any]) -> dict[str, Any]:
    """A one-column-key result keyed by the plain key again."""
    return {key[0]: value for key, value in found.items()}
