"""Connection limits, with Kafka's property names and defaults:

- ``max.connections`` (2147483647): connections open on all listeners together; one
  more is closed as soon as it is accepted.
- ``max.connections.per.ip`` (2147483647): the same per client address (Kafka's
  ``TooManyConnectionsException``: the new connection is closed).
- ``connections.max.idle.ms`` (600000; negative: never): a connection that completes
  no request and is sent nothing for that long is closed. Unlike Kafka, bytes that do
  not complete a request do not count as activity, so a partial frame trickled one
  byte at a time is closed too rather than held forever.

The refusals and closings are logged and counted (``refused``, ``idle_closed``).
"""
from __future__ import annotations

from collections import Counter

UNLIMITED = 2147483647


class ConnectionLimits:
    def __init__(self, max_connections: int = UNLIMITED, max_per_ip: int = UNLIMITED,
                 idle_ms: int = 600_000):
        self.max_connections, self.max_per_ip, self.idle_ms = max_connections, max_per_ip, idle_ms
        self.open = 0
        self.per_ip: Counter = Counter()
        self.refused = 0
        self.idle_closed = 0

    def admit(self, ip) -> str | None:
        """Count a new connection from ``ip``; the reason to close it instead, if any."""
        if self.open >= self.max_connections:
            self.refused += 1
            return f"too many connections (max.connections={self.max_connections})"
        if self.per_ip[ip] >= self.max_per_ip:
            self.refused += 1
            return f"too many connections from {ip} (max.connections.per.ip={self.max_per_ip})"
        self.open += 1
        self.per_ip[ip] += 1
        return None

    def release(self, ip) -> None:
        self.open -= 1
        self.per_ip[ip] -= 1
        if self.per_ip[ip] <= 0:
            del self.per_ip[ip]

    def sweep_interval_s(self) -> float | None:
        """How often to look for idle connections (None: never)."""
        if self.idle_ms < 0:
            return None
        return min(max(self.idle_ms / 4, 50), 10_000) / 1000

    def idle(self, connections, now: float) -> list:
        """The connections idle for longer than ``connections.max.idle.ms`` at ``now``
        (``time.monotonic()`` seconds)."""
        if self.idle_ms < 0:
            return []
        limit = self.idle_ms / 1000
        return [c for c in connections if now - c.last_active > limit]
