"""Persistent answer cache: one sqlite3 file in WAL mode, safe across threads and processes.

The key is the sha256 of a canonical JSON document holding everything that
shapes an answer (see :func:`cache_key`): the model name, the prompt template
hash, the rendered messages (so the inputs), the sampling parameters and the
JSON schema.  The endpoint URL is *not* part of it: the local server gets a new
port every run and an answer does not depend on where the model is served.

Each answer is committed as soon as it arrives (autocommit), so a run killed
midway resumes with every answered call served from the cache.  Only
schema-valid answers are stored; the module never sees the API key.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KEY_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    template TEXT NOT NULL,
    model TEXT NOT NULL,
    value TEXT NOT NULL,
    raw_text TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created REAL NOT NULL
)
"""


def canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def cache_key(
    *,
    model: str,
    template_hash: str,
    messages: Sequence[Mapping[str, str]],
    sampling: Mapping[str, Any],
    schema: Mapping[str, Any],
) -> str:
    """sha256 hex of (model, template hash, rendered messages, sampling parameters, schema)."""
    document = {
        "version": KEY_VERSION,
        "model": model,
        "template_sha256": template_hash,
        "messages": [dict(m) for m in messages],
        "sampling": dict(sampling),
        "schema": schema,
    }
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    value: Any
    raw_text: str
    prompt_tokens: int | None
    completion_tokens: int | None


class AnswerCache:
    """sqlite3 store of schema-valid answers; one connection per thread, WAL journal."""

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 30_000) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        conn = self._connect()
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def get(self, key: str) -> CachedAnswer | None:
        row = self._connect().execute(
            "SELECT value, raw_text, prompt_tokens, completion_tokens FROM answers WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        return CachedAnswer(json.loads(row[0]), row[1], row[2], row[3])

    def put(self, key: str, *, stage: str, template: str, model: str, answer: CachedAnswer) -> None:
        """Store (first writer wins) and commit at once."""
        self._connect().execute(
            "INSERT OR IGNORE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, stage, template, model, canonical_json(answer.value), answer.raw_text,
             answer.prompt_tokens, answer.completion_tokens, time.time()),
        )

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._local = threading.local()
