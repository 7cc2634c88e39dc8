"""Broker heartbeat sessions on the active controller (Kafka's
``BrokerHeartbeatTracker``): the last contact per (broker id, epoch), touched by every
heartbeat before it is processed (bogus epochs included), and the metadata offset
each broker last reported.

A session is valid while its last contact is less than ``broker.session.timeout.ms``
old. The expiry task runs every ``max(1, timeout / 8)`` ms and, after a run that
found an expired session, again 10 ms later; each run removes one expired entry.
Unlike Kafka's fixed period, a run is also due the moment the oldest session
expires, so a dead broker is fenced at the timeout, not up to ``timeout / 8`` after.
On becoming active every unfenced broker gets contact = now.

Time the controller spent on one long turn (a controlled shutdown of 100,000
leaderships, say) does not count against the sessions (``credit``): no heartbeat was
read meanwhile, and a broker waits for its answer before it sends the next, so its
session would expire because the controller was busy. Kafka's network threads touch
the sessions while its controller thread works (``BrokerHeartbeatTracker``).
"""
from __future__ import annotations


class BrokerSessions:
    def __init__(self, session_timeout_ms: int = 9000) -> None:
        self.timeout_ms = session_timeout_ms
        self.contact: dict[tuple[int, int], int] = {}
        self.offsets: dict[int, int] = {}  # broker id -> last CurrentMetadataOffset
        self.next_check_ms: int | None = None

    def touch(self, broker_id: int, epoch: int, now_ms: int) -> None:
        self.contact[(broker_id, epoch)] = now_ms

    def credit(self, busy_ms: int) -> None:
        """The loop was held ``busy_ms`` by one turn: every session's last contact
        moves that much later."""
        for key in self.contact:
            self.contact[key] += busy_ms

    def valid(self, broker_id: int, epoch: int, now_ms: int) -> bool:
        last = self.contact.get((broker_id, epoch))
        return last is not None and now_ms - last < self.timeout_ms

    def activate(self, image, now_ms: int) -> None:
        self.contact.clear()
        self.offsets.clear()
        for b in image.brokers:
            if not b.fenced:
                self.contact[(b.broker_id, b.epoch)] = now_ms
        self.next_check_ms = now_ms + self.interval_ms

    @property
    def interval_ms(self) -> int:
        return max(1, self.timeout_ms // 8)

    def next_check(self, now_ms: int) -> int:
        """When the task runs next after a run that found nothing expired."""
        due = now_ms + self.interval_ms
        if self.contact:
            due = min(due, min(self.contact.values()) + self.timeout_ms + 1)
        return max(due, now_ms + 1)

    def pop_expired(self, now_ms: int) -> tuple[int, int] | None:
        """One expired (id, epoch), removed; None when none is."""
        for key, last in self.contact.items():
            if last + self.timeout_ms < now_ms:
                del self.contact[key]
                return key
        return None

    def lowest_active_offset(self, image, except_id: int) -> int:
        """The lowest reported offset among active brokers other than ``except_id``."""
        values = [self.offsets.get(b.broker_id, -1) for b in image.brokers
                  if b.active and b.broker_id != except_id]
        return min(values) if values else (1 << 63) - 1
