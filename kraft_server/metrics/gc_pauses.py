"""How long CPython's cyclic garbage collector holds the event loop.

A collection runs on the loop's thread, in the middle of whatever allocated last,
so a full one (generation 2) over a large image is a pause every request waiting
on the loop pays. ``GcPauses`` times each collection through ``gc.callbacks`` and
keeps, per generation, the count, the total and the longest; ``report()`` (called
after a loop turn, never from inside a collection) logs each collection of
generation 2 at DEBUG and any collection of ``slow_ms`` or more at INFO, with its
duration and what it freed.
"""
from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger(__name__)

SLOW_MS = 100.0
MAX_KEPT = 64  # collections waiting for ``report`` (the oldest go first)


class GcPauses:
    def __init__(self, slow_ms: float = SLOW_MS, clock=time.perf_counter) -> None:
        self.slow_ms = slow_ms
        self.clock = clock
        self.count = [0, 0, 0]
        self.total_ms = [0.0, 0.0, 0.0]
        self.max_ms = [0.0, 0.0, 0.0]
        self.kept: list[tuple[int, float, int]] = []  # (generation, ms, collected) to report
        self._started: float | None = None

    def install(self) -> "GcPauses":
        gc.callbacks.append(self._callback)
        return self

    def uninstall(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = self.clock()
            return
        if self._started is None:
            return
        ms = (self.clock() - self._started) * 1000
        self._started = None
        self.note(info["generation"], ms, info.get("collected", 0))

    def note(self, generation: int, ms: float, collected: int = 0) -> None:
        self.count[generation] += 1
        self.total_ms[generation] += ms
        self.max_ms[generation] = max(self.max_ms[generation], ms)
        if generation == 2 or ms >= self.slow_ms:
            if len(self.kept) >= MAX_KEPT:
                del self.kept[0]
            self.kept.append((generation, ms, collected))

    def report(self) -> None:
        kept, self.kept = self.kept, []
        for generation, ms, collected in kept:
            level = logging.INFO if ms >= self.slow_ms else logging.DEBUG
            if level == logging.DEBUG and log.isEnabledFor(level):  # counting the frozen objects walks them
                log.debug("garbage collection of generation %d took %.0f ms (%d freed; %d objects frozen)",
                          generation, ms, collected, gc.get_freeze_count())
            elif level == logging.INFO:  # not walking millions of frozen objects on a busy turn
                log.info("garbage collection of generation %d took %.0f ms (%d freed)", generation, ms, collected)

    def summary(self) -> dict:
        return {f"gen{g}": {"count": self.count[g], "total_ms": round(self.total_ms[g], 1),
                            "max_ms": round(self.max_ms[g], 1)} for g in range(3)}
