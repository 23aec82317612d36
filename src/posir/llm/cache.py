"""Persistent answer cache: a :class:`posir.cache_store.CacheStore` file, safe across threads and processes.

The key is the sha256 of a canonical JSON document holding everything that
shapes an answer (see :func:`cache_key`): the model name, the prompt template
hash, the rendered messages (so the inputs), the sampling parameters and the
JSON schema.  The endpoint URL is *not* part of it: the local server gets a new
port every run and an answer does not depend on where the model is served.

Each answer is committed as soon as it arrives, so a run killed midway
resumes with every answered call served from the cache; a stored answer that
fails its checksum or does not decode is dropped and asked again.  Only
schema-valid answers are stored; the module never sees the API key.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posir.cache_store import CacheCounts, CacheKind, CacheStore, Table

KEY_VERSION = 1


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


def _answer(values: tuple[Any, ...]) -> CachedAnswer:
    """A stored answer row as a :class:`CachedAnswer`, or ValueError when its JSON or token counts are unusable."""
    _, _, _, value, raw_text, prompt_tokens, completion_tokens, _ = values
    for tokens in (prompt_tokens, completion_tokens):
        if tokens is not None and tokens < 0:
            raise ValueError(f"a negative token count ({tokens})")
    return CachedAnswer(json.loads(value), raw_text, prompt_tokens, completion_tokens)


ANSWER_CACHE = CacheKind(
    name="llm-answer",
    title="LLM answer cache",
    holds="LLM answers",
    setting="llm.cache_path in the config",
    tables=(
        Table(
            "answers",
            ("key",),
            (
                "stage TEXT NOT NULL",
                "template TEXT NOT NULL",
                "model TEXT NOT NULL",
                "value TEXT NOT NULL",
                "raw_text TEXT NOT NULL",
                "prompt_tokens INTEGER",
                "completion_tokens INTEGER",
                "created REAL NOT NULL",
            ),
            _answer,
            first_writer_wins=True,
        ),
    ),
    legacy_tables=frozenset({"answers"}),
)


class AnswerCache:
    """Schema-valid answers in one :class:`~posir.cache_store.CacheStore`, shared by threads and processes.

    Each answer is committed as it is put; an answer whose checksum fails or whose JSON does not
    decode is dropped and counted in :attr:`counts`, so it is asked again. Closing and using it again
    reopens the file.
    """

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 30_000) -> None:
        self.path = Path(path)
        self._busy_timeout_s = busy_timeout_ms / 1000
        self._lock = threading.Lock()
        self._opened: CacheStore | None = None
        self.counts = CacheCounts()
        self._store()

    def __repr__(self) -> str:
        return f"AnswerCache({str(self.path)!r})"

    def _store(self) -> CacheStore:
        with self._lock:
            if self._opened is None:
                self._opened = CacheStore(
                    self.path, ANSWER_CACHE, busy_timeout_s=self._busy_timeout_s, counts=self.counts
                )
            return self._opened

    def get(self, key: str) -> CachedAnswer | None:
        return self._store().get("answers", (key,))

    def put(self, key: str, *, stage: str, template: str, model: str, answer: CachedAnswer) -> None:
        """Store (first writer wins) and commit at once."""
        self._store().put(
            "answers",
            (key,),
            (
                stage,
                template,
                model,
                canonical_json(answer.value),
                answer.raw_text,
                answer.prompt_tokens,
                answer.completion_tokens,
                time.time(),
            ),
        )

    def __len__(self) -> int:
        return self._store().count("answers")

    def close(self) -> None:
        with self._lock:
            if self._opened is not None:
                self._opened.close()
                self._opened = None
