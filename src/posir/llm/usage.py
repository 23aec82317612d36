"""Usage accounting per stage, for the dataset card: counts and token sums only.

Nothing here holds text: no prompts, answers, URLs or keys, just numbers and
failure-kind names, so the report is safe to publish.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FAILURE_KINDS = ("length", "invalid_json", "schema", "rejected", "retries_exhausted", "bad_request")


@dataclass
class StageUsage:
    items: int = 0
    ok: int = 0
    cache_hits: int = 0
    http_requests: int = 0
    retries: int = 0
    response_format_fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    cached_completion_tokens: int = 0
    failures: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: v for k, v in vars(self).items() if k != "failures"}
        out["failures"] = {kind: int(self.failures.get(kind, 0)) for kind in FAILURE_KINDS}
        out["failed"] = sum(self.failures.values())
        return out


class UsageLedger:
    """Thread-safe counters keyed by stage name."""

    def __init__(self) -> None:
        self._stages: dict[str, StageUsage] = {}
        self._lock = threading.Lock()

    def add(self, stage: str, **amounts: int) -> None:
        with self._lock:
            usage = self._stages.setdefault(stage, StageUsage())
            for name, amount in amounts.items():
                setattr(usage, name, getattr(usage, name) + int(amount or 0))

    def fail(self, stage: str, kind: str) -> None:
        if kind not in FAILURE_KINDS:
            raise ValueError(f"unknown failure kind {kind!r}")
        with self._lock:
            self._stages.setdefault(stage, StageUsage()).failures[kind] += 1

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """``{stage: {items, ok, cache_hits, http_requests, retries, ..., failures: {kind: n}}}``."""
        with self._lock:
            return {stage: usage.as_dict() for stage, usage in sorted(self._stages.items())}


def usage_total(usage: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """The card's ``llm_usage_total``: the counts of every stage's usage (:meth:`UsageLedger.as_dict`) summed."""
    keys = ("items", "ok", "failed", "cache_hits", "http_requests", "prompt_tokens", "completion_tokens")
    return {k: int(sum(int(u.get(k, 0) or 0) for u in usage.values())) for k in keys}
