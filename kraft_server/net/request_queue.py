"""``queued.max.requests`` (Kafka's default 500): a node-wide bound on the requests read
off sockets that wait for the Ready loop to take them up.

In Kafka the network threads put each request into one ``RequestChannel`` queue of that
size and block, reading nothing more, while it is full; a handler thread's ``take`` frees
a slot. Here the Ready loop is the one handler: a request handed to the Raft core
(``Driver.submit_request``) holds a slot until the loop's next turn steps it into the
core. What the core then parks (a replica's Fetch waiting at the log end, Kafka's
purgatory) no longer counts, and neither do requests answered at once by the API layer
or handed to the controller's write queue (Kafka's controller event queue, outside the
bound too).

While the queue is full every connection stops dispatching before its next request; its
unread frames stay in its pipeline's backlog, which pauses reading from its socket. When
the loop frees slots the waiting connections resume in the order they stopped.
"""
from __future__ import annotations

import logging
import time

log = logging.getLogger(__name__)

DEFAULT_QUEUED_MAX_REQUESTS = 500
FULL_LOG_EVERY_S = 10.0  # the "queue full" line at most this often


class RequestQueue:
    def __init__(self, capacity: int = DEFAULT_QUEUED_MAX_REQUESTS, call_soon=None):
        if capacity < 1:
            raise ValueError("queued.max.requests must be at least 1")
        self.capacity = capacity
        self.size = 0
        self.peak = 0
        self.times_full = 0  # how often a connection found it full
        self._waiting: dict = {}  # connection -> None, in the order they stopped
        self.call_soon = call_soon  # loop.call_soon; resumes run after the loop's turn
        self._resume_scheduled = False
        self._last_full_log = float("-inf")

    @property
    def full(self) -> bool:
        return self.size >= self.capacity

    def enter(self) -> None:
        self.size += 1
        if self.size > self.peak:
            self.peak = self.size

    def leave(self, n: int) -> None:
        """``n`` requests were taken up by the Ready loop."""
        if n <= 0:
            return
        self.size -= n
        if self._waiting and not self.full and not self._resume_scheduled:
            self._resume_scheduled = True
            if self.call_soon is None:
                self._resume()
            else:
                self.call_soon(self._resume)

    def wait(self, connection) -> None:
        """``connection`` found the queue full: it is resumed (``connection.resume()``)
        once slots are free."""
        self.times_full += 1
        self._waiting[connection] = None
        now = time.monotonic()
        if now - self._last_full_log >= FULL_LOG_EVERY_S:
            self._last_full_log = now
            log.info("request queue full (queued.max.requests=%d): connections stop reading "
                     "until the Ready loop takes requests up (%d times so far)",
                     self.capacity, self.times_full)

    def forget(self, connection) -> None:
        self._waiting.pop(connection, None)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def _resume(self) -> None:
        self._resume_scheduled = False
        while self._waiting and not self.full:
            connection = next(iter(self._waiting))
            del self._waiting[connection]
            connection.resume()
