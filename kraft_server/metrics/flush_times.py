"""How long each fsync of the metadata log takes.

The flush runs on the loop's thread (the shell sends nothing before it returns), so
a disk that stalls holds every request of the node for as long. ``FlushTimes`` keeps
the count, total and longest flush; one of ``slow_ms`` or more calls ``on_slow`` (the
load server's bench event), and one of ``warn_ms`` or more is logged at WARNING, at
most once every ``warn_every_s``.
"""
from __future__ import annotations

import logging
import time

log = logging.getLogger(__name__)

WARN_MS = 1000.0


class FlushTimes:
    def __init__(self, warn_ms: float = WARN_MS, warn_every_s: float = 10.0, clock=time.perf_counter) -> None:
        self.warn_ms = warn_ms
        self.warn_every_s = warn_every_s
        self.clock = clock
        self.count = 0
        self.total_ms = 0.0
        self.max_ms = 0.0
        self.slow_ms: float | None = None
        self.on_slow = None  # called with the duration in ms
        self._warned_at: float | None = None

    def timed(self, flush) -> None:
        """Run ``flush()`` and note how long it took."""
        t0 = self.clock()
        flush()
        self.note((self.clock() - t0) * 1000)

    def note(self, ms: float) -> None:
        self.count += 1
        self.total_ms += ms
        self.max_ms = max(self.max_ms, ms)
        if self.slow_ms is not None and ms >= self.slow_ms and self.on_slow is not None:
            self.on_slow(ms)
        if ms >= self.warn_ms:
            now = self.clock()
            if self._warned_at is None or now - self._warned_at >= self.warn_every_s:
                self._warned_at = now
                log.warning("an fsync of the metadata log took %.0f ms: the node answered nothing "
                            "meanwhile (a slow or failing disk)", ms)

    def summary(self) -> str:
        mean = self.total_ms / self.count if self.count else 0.0
        return f"{self.count} flushes, mean {mean:.1f} ms, longest {self.max_ms:.1f} ms"
