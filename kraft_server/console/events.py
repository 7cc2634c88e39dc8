"""Server-sent events for open pages: one stream per page, at most ``RATE_HZ`` updates a
second, coalesced, each built and serialised once for every page.

A page gets the whole snapshot when it joins; then, on a timer that runs only while
pages are open, a delta (the state, plus records and chart points it has not seen)
when something changed, or a keep-alive every ``IDLE_S``. Nothing here awaits a
page: each update is written to the page's transport, whose buffer is the page's
bounded queue; a page whose buffer holds more than ``MAX_BUFFERED`` bytes (it stopped
reading) is dropped, so a stalled browser costs the node a closed socket, never a
wait. The kernel's send buffer of a stream is made small for the same reason.
At most ``MAX_PAGES`` streams are open; more get 503.
"""
from __future__ import annotations

import json
import logging
import socket

from kraft_server.net.timers import call_later

log = logging.getLogger(__name__)

RATE_HZ = 4
IDLE_S = 2.0  # an update at least this often: the page's "seconds ago" stay true
MAX_PAGES = 32
MAX_BUFFERED = 128 * 1024
SEND_BUFFER = 64 * 1024
HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
        b"Connection: keep-alive\r\n\r\nretry: 1000\n\n")


def event(kind: str, data: dict) -> bytes:
    return f"event: {kind}\ndata: ".encode() + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


class EventHub:
    def __init__(self, snapshot, fingerprint, clock, max_pages: int = MAX_PAGES):
        self.snapshot = snapshot  # (since_seq, since_sample_ms) -> dict
        self.fingerprint = fingerprint  # () -> anything that changes when the page would
        self.clock = clock
        self.max_pages = max_pages
        self.pages: set = set()
        self.dropped = 0
        self.published = 0
        self._timer = None
        self._seen = None  # fingerprint of the last update
        self._seq = 0  # records and chart points every page has
        self._sample_ms = -1
        self._last_s = 0.0

    def join(self, page) -> bool:
        """Start a stream on ``page`` (an ``http.ConsoleProtocol``); False when full."""
        if len(self.pages) >= self.max_pages:
            return False
        sock = page.transport.get_extra_info("socket")
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            except OSError:
                pass
        state = self.snapshot(0, -1)
        page.transport.write(HEAD + event("full", state))
        if not self.pages:  # the first page: updates start from what it has
            self._seq = state["recordSeq"]
            self._sample_ms = state["samples"][-1][0] if state["samples"] else -1
        self.pages.add(page)
        if self._timer is None:
            self._schedule()
        return True

    def leave(self, page) -> None:
        self.pages.discard(page)

    def _schedule(self) -> None:
        self._timer = call_later(1.0 / RATE_HZ, self._tick)

    def _tick(self) -> None:
        self._timer = None
        if not self.pages:
            return
        try:
            self.publish()
        except Exception:  # never let a page stop the updates of the others
            log.exception("console update failed")
        self._schedule()

    def publish(self, force: bool = False) -> None:
        now_s = self.clock() / 1000.0
        seen = self.fingerprint()
        if not force and seen == self._seen and now_s - self._last_s < IDLE_S:
            return
        state = self.snapshot(self._seq, self._sample_ms)
        self._seen, self._last_s = seen, now_s
        self._seq = state["recordSeq"]
        if state["samples"]:
            self._sample_ms = state["samples"][-1][0]
        data = event("delta", state)
        self.published += 1
        for page in list(self.pages):
            transport = page.transport
            if transport is None or transport.is_closing():
                self.pages.discard(page)
            elif transport.get_write_buffer_size() + len(data) > MAX_BUFFERED:
                self.dropped += 1
                self.pages.discard(page)
                log.info("console: dropped a page that stopped reading (%d bytes queued)",
                         transport.get_write_buffer_size())
                transport.abort()
            else:
                transport.write(data)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for page in list(self.pages):
            if page.transport is not None:
                page.transport.abort()
        self.pages.clear()
