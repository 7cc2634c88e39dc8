"""Probes of a broker's advertised listeners for the active controller's fast
fencing (``kraft_server/controller/cluster/broker_liveness.py`` decides; this only
connects). A probe opens a TCP connection to each endpoint and closes it at once,
sending nothing: "accepted" when the handshake completed, "refused" on
ECONNREFUSED (the host answered the SYN with a reset: nothing listens there), and
"unknown" for anything else (a timeout, an unreachable network, a name that does
not resolve), which is no evidence either way.

Never blocks the loop: each probe is a task, at most ``max_in_flight`` run at once
(the rest wait their turn), each connect is bounded by ``timeout_ms``.
"""
from __future__ import annotations

import asyncio
import logging

log = logging.getLogger(__name__)

ACCEPTED, REFUSED, UNKNOWN = "accepted", "refused", "unknown"  # as broker_liveness


async def connect_outcome(host: str, port: int, timeout_s: float) -> str:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except ConnectionRefusedError:
        return REFUSED
    except (OSError, asyncio.TimeoutError):
        return UNKNOWN
    writer.close()  # nothing sent: the broker sees a connection that closed at once
    return ACCEPTED


class ListenerProber:
    def __init__(self, timeout_ms: int = 1000, max_in_flight: int = 16) -> None:
        self.timeout_s = timeout_ms / 1000.0
        self.max_in_flight = max_in_flight
        self._slots: asyncio.Semaphore | None = None
        self._tasks: set = set()

    def probe(self, probe, done) -> None:
        """Connect to ``probe.endpoints``; ``done(outcomes)`` (one per endpoint, in
        order) is called from the loop once every connect finished."""
        loop = asyncio.get_running_loop()
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_in_flight)
        task = loop.create_task(self._run(probe, done))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, probe, done) -> None:
        async with self._slots:
            outcomes = await asyncio.gather(*(connect_outcome(h, p, self.timeout_s)
                                              for h, p in probe.endpoints))
        log.info("probe (%s) of broker %d epoch %d listeners %s: %s", probe.purpose, probe.broker_id,
                 probe.epoch, list(probe.endpoints), list(outcomes))
        done(list(outcomes))

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
