"""On-disk translation cache: one sqlite file (WAL), keyed by backend identity and text hash.

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
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS translations (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    translation TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def text_key(backend: str, text: str) -> str:
    """sha256 hex of the backend identity and the source text."""
    return hashlib.sha256(f"{backend}\0{text}".encode("utf-8")).hexdigest()


class TranslationCache:
    """sqlite store of finished translations; safe for several processes (WAL, busy timeout)."""

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 60_000) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=busy_timeout_ms / 1000, isolation_level=None,
                                     check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"TranslationCache({str(self.path)!r})"

    def get_many(self, backend: str, texts: Iterable[str]) -> dict[str, str]:
        """Cached translations of ``texts`` (source text -> translation), misses left out."""
        keys = {text_key(backend, t): t for t in texts}
        found: dict[str, str] = {}
        items = list(keys)
        with self._lock:
            for start in range(0, len(items), 500):  # sqlite caps the number of bound parameters
                chunk = items[start:start + 500]
                rows = self._conn.execute(
                    f"SELECT key, translation FROM translations WHERE key IN ({','.join('?' * len(chunk))})", chunk
                ).fetchall()
                found.update({keys[k]: v for k, v in rows})
        return found

    def put_many(self, backend: str, translations: Mapping[str, str]) -> None:
        """Store (first writer wins) and commit at once, so a killed run keeps what it finished."""
        now = time.time()
        rows = [(text_key(backend, s), backend, t, now) for s, t in translations.items()]
        with self._lock:
            self._conn.execute("BEGIN")
            self._conn.executemany("INSERT OR IGNORE INTO translations VALUES (?, ?, ?, ?)", rows)
            self._conn.execute("COMMIT")

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM translations").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "TranslationCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
