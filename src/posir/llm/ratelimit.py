"""A requests-per-minute limiter shared by the worker threads of one client.

Requests are spaced evenly, ``60 / rpm`` seconds apart: each caller reserves
the next free start time under a lock and sleeps outside it.  The clock and the
sleep are injected so tests drive time by hand.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class RateLimiter:
    """At most ``requests_per_minute`` request starts per minute; ``None`` means unlimited."""

    def __init__(
        self,
        requests_per_minute: float | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if requests_per_minute is not None and requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be > 0, or None for no limit")
        self.interval = 0.0 if requests_per_minute is None else 60.0 / requests_per_minute
        self._clock = clock
        self._sleep = sleep
        self._next_start: float | None = None
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Reserve the next start slot; return how long the caller must wait for it."""
        with self._lock:
            now = self._clock()
            start = now if self._next_start is None else max(now, self._next_start)
            self._next_start = start + self.interval
            return start - now

    def acquire(self) -> float:
        """Block until this caller may start a request; return the time waited."""
        if self.interval == 0.0:
            return 0.0
        wait = self.reserve()
        if wait > 0:
            self._sleep(wait)
        return wait
