"""Progress of long steps, written to the rule's log (and the terminal) while they run.

A 30-minute encode job that writes nothing until it ends cannot be told from a hung one; this reports
how far it is, how fast it goes and when it should end, at most every ``every_s`` seconds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

logger = logging.getLogger("posir")


class Progress:
    """Counts done out of ``total`` and logs ``<what>: done/total (share), rate, time left`` now and then."""

    def __init__(
        self,
        what: str,
        total: int,
        unit: str = "texts",
        every_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.total, self.unit, self.every_s, self._clock = what, total, unit, every_s, clock
        self.done = 0
        self._start = self._last = clock()

    def line(self) -> str:
        elapsed = max(self._clock() - self._start, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("nan")
        share = self.done / self.total if self.total else 1.0
        return (
            f"{self.what}: {self.done}/{self.total} {self.unit} ({share:.0%}), {rate:.1f} {self.unit}/s, "
            f"{elapsed:.0f} s so far, about {left:.0f} s left"
        )

    def advance(self, n: int) -> None:
        """Count ``n`` more done; log when ``every_s`` has passed since the last line, and at the end."""
        self.done += n
        now = self._clock()
        if now - self._last >= self.every_s or self.done >= self.total:
            self._last = now
            logger.info(self.line())
