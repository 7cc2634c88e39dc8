"""Fetches parked until the high watermark moves or their ``MaxWaitMs`` runs out
(Kafka's ``DelayedFetch`` purgatory, reduced to one partition).

``park(attempt, wait_ms)``: ``attempt(final)`` builds the answer and returns True
once it has responded; it is called again (``final=False``) each time
``progress()`` reports a new high watermark, and a last time (``final=True``) when
the wait expires. ``progress()`` is called after every Ready-loop cycle (the shell
knows when the core committed; ``kraft_server/shell/wiring.py``). Timers run on the
event loop; tests pass ``call_later``.
"""
from __future__ import annotations

import asyncio
import itertools
import logging

log = logging.getLogger(__name__)


class LongPoll:
    def __init__(self, call_later=None):
        self._call_later = call_later
        self._parked: dict[int, tuple] = {}  # token -> (attempt, timer)
        self._tokens = itertools.count()

    def __len__(self) -> int:
        return len(self._parked)

    def park(self, attempt, wait_ms: int) -> None:
        token = next(self._tokens)
        call_later = self._call_later or asyncio.get_running_loop().call_later
        timer = call_later(max(wait_ms, 0) / 1000.0, self._expire, token)
        self._parked[token] = (attempt, timer)

    def _expire(self, token: int) -> None:
        entry = self._parked.pop(token, None)
        if entry is not None:
            self._run(entry[0], True)

    def progress(self) -> None:
        """The high watermark moved: retry every parked fetch."""
        for token, (attempt, timer) in list(self._parked.items()):
            if self._run(attempt, False):
                self._parked.pop(token, None)
                timer.cancel()

    @staticmethod
    def _run(attempt, final: bool) -> bool:
        try:
            return attempt(final)
        except Exception:  # one bad fetch must not stop the others (or the loop)
            log.exception("parked fetch failed")
            return True
