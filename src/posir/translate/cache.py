"""On-disk translation cache: a :class:`posir.cache_store.CacheStore` file, keyed by backend identity and text hash.

The LLM backend has its own answer cache (:mod:`posir.llm.cache`); this one
serves the backends that are programs (apertium): the same text through the
same engine and linguistic data is never translated twice, across rules, runs
and benchmarks. The key is ``sha256(backend id, text)`` where the backend id
names the engine and a fingerprint of its data (see
:meth:`posir.translate.apertium.Apertium.identity`), so updated data files
invalidate exactly their own entries.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from posir.cache_store import CacheFacade, CacheKind, CacheStore, Table, by_first, single_keys


def text_key(backend: str, text: str) -> str:
    """sha256 hex of the backend identity and the source text."""
    return hashlib.sha256(f"{backend}\0{text}".encode("utf-8")).hexdigest()


def _translation(values: tuple[Any, ...]) -> str:
    return str(values[1])


TRANSLATION_CACHE = CacheKind(
    name="translation",
    holds="translations",
    tables=(
        Table(
            "translations",
            ("key",),
            ("backend TEXT NOT NULL", "translation TEXT NOT NULL", "created REAL NOT NULL"),
            _translation,
            first_writer_wins=True,
        ),
    ),
    legacy_tables=frozenset({"translations"}),
)


class TranslationCache(CacheFacade):
    """Finished translations in one :class:`~posir.cache_store.CacheStore`; safe for several processes.

    A stored translation that fails its checksum is dropped and counted in :attr:`counts`, so it is
    translated again.
    """

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 60_000) -> None:
        self.path = Path(path)
        self._store = CacheStore(self.path, TRANSLATION_CACHE, busy_timeout_s=busy_timeout_ms / 1000)

    def __repr__(self) -> str:
        return f"TranslationCache({str(self.path)!r})"

    def get_many(self, backend: str, texts: Iterable[str]) -> dict[str, str]:
        """Cached translations of ``texts`` (source text -> translation), misses left out."""
        keys = {text_key(backend, t): t for t in texts}
        found = by_first(self._store.get_many("translations", single_keys(keys)))
        return {keys[k]: v for k, v in found.items()}

    def put_many(self, backend: str, translations: Mapping[str, str]) -> None:
        """Store (first writer wins) and commit at once, so a killed run keeps what it finished."""
        now = time.time()
        self._store.put_many(
            "translations", [((text_key(backend, s),), (backend, t, now)) for s, t in translations.items()]
        )

    def __len__(self) -> int:
        return self._store.count("translations")
