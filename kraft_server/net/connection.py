"""The asyncio adapter around one server-side ``Pipeline`` (uvicorn's shape: the
protocol object only moves bytes and events; ``pipeline.py`` decides).

``dispatch(call)`` is the API layer's entry point (``kraft_server.api.dispatch``). It
may answer at once (``call.respond``) or later, from the Ready loop, when the Raft
core completes the request; either way ``_on_output`` writes whatever is now at the
head of the line.

Reading is paused while the pipeline has too many requests in flight or a backlog of
complete frames (which it keeps while ``queued.max.requests`` is reached node-wide,
``request_queue.py``), and while the transport's write buffer is above its high-water mark
(``pause_writing``): a client that pipelines without reading its answers cannot make
us buffer without bound.

A request that breaks the protocol closes the connection once the requests read
before it are answered: Kafka reads one request at a time (the channel is muted until
its answer is sent), so it answers those and then finds the bad one.
"""
from __future__ import annotations

import asyncio
import logging
import time

from .pipeline import DEFAULT_MAX_IN_FLIGHT, InboundCall, Pipeline, ProtocolViolation
from .secure import authenticate

log = logging.getLogger(__name__)


class ServerConnection(asyncio.Protocol):
    __slots__ = ("pipeline", "transport", "peer", "_dispatch", "_pumping",
                 "_reading_paused", "_write_paused", "_registry", "_limits", "_admitted", "last_active",
                 "_closing", "security", "_queue")

    def __init__(self, listener: str, apis: dict[int, tuple[int, int]], dispatch, *,
                 max_bytes: int, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
                 registry: set | None = None, limits=None, security=None, queue=None):
        self.pipeline = Pipeline(listener, apis, max_bytes=max_bytes,
                                 max_in_flight=max_in_flight, on_output=self._on_output)
        self.transport: asyncio.Transport | None = None
        self.peer = None
        self._dispatch = dispatch
        self._pumping = False
        self._reading_paused = False
        self._write_paused = False
        self._registry = registry
        self._limits = limits  # net/limits.py ConnectionLimits, or None
        self._admitted = False
        self.last_active = time.monotonic()  # a complete request read or an answer written
        self._closing = None  # the protocol violation to close for once earlier requests are answered
        self.security = security  # kraft_server.security.ListenerSecurity, or None (PLAINTEXT)
        self._queue = queue  # net/request_queue.py RequestQueue (queued.max.requests), or None

    # -- asyncio.Protocol ------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport
        self.peer = transport.get_extra_info("peername")
        self.pipeline.peer = self.peer
        if self._limits is not None:
            refused = self._limits.admit(self._ip())
            if refused:
                self.abort(refused)
                return
            self._admitted = True
        if self._registry is not None:
            self._registry.add(self)
        if self.security is not None:
            refused = authenticate(self.pipeline, self.security, transport)
            if refused:
                self.abort(refused)

    def connection_lost(self, exc) -> None:
        by_peer = not self.pipeline.closed  # ``abort`` (ours) closes the pipeline first
        dropped = self.pipeline.close()
        self.pipeline.lost(by_peer)
        if dropped:
            log.debug("%s closed with %d unanswered requests", self.peer, len(dropped))
        if self._registry is not None:
            self._registry.discard(self)
        if self._queue is not None:
            self._queue.forget(self)
        if self._admitted:
            self._admitted = False
            self._limits.release(self._ip())
        self.transport = None

    def data_received(self, data) -> None:
        if self._closing is not None:
            return  # nothing after the bad request is read
        try:
            self.pipeline.receive_data(data)
        except ProtocolViolation as exc:
            self._closing = exc
        self._pump()

    def eof_received(self):
        return False  # close our side too

    def pause_writing(self) -> None:
        self._write_paused = True
        self._update_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        self._pump()

    # -- internals -------------------------------------------------------------------
    def _pump(self) -> None:
        """Dispatch what is buffered, as far as flow control allows."""
        if self._pumping or self.transport is None:
            return
        self._pumping = True
        try:
            queue = self._queue
            while not self._write_paused:
                if queue is not None and queue.full and self.pipeline.has_backlog:
                    queue.wait(self)  # resume() once the Ready loop has taken requests up
                    break
                try:
                    call = self.pipeline.next_call()
                except ProtocolViolation as exc:
                    self._closing = exc
                    break
                if call is None:
                    break
                self.last_active = time.monotonic()
                self._dispatch_one(call)
                if self.transport is None:
                    return
        finally:
            self._pumping = False
        self._write_out()
        self._update_reading()

    def resume(self) -> None:
        """The request queue has room again (``RequestQueue._resume``)."""
        self._pump()

    def _dispatch_one(self, call: InboundCall) -> None:
        try:
            self._dispatch(call)
        except Exception:  # a handler bug must not take the listener down
            log.exception("handler failed for %r from %s", call, self.peer)
            self.abort("handler error")

    def _on_output(self) -> None:
        if self._pumping:
            return  # _pump writes when it is done
        self._write_out()
        if self._reading_paused or self.pipeline.wants_pause:
            self._pump()  # an answer may free a slot for the backlog, or let reading resume

    def _write_out(self) -> None:
        if self.transport is None:
            return
        buffers = self.pipeline.output_buffers()
        if buffers:
            self.last_active = time.monotonic()
        if len(buffers) == 1:
            self.transport.write(buffers[0])
        elif buffers:
            self.transport.writelines(buffers)  # gathered: no join of record views
        if self.pipeline.failed:
            self.abort(self.pipeline.failed)
        elif self._closing is not None and self.pipeline.idle:
            self.abort(self._closing)

    def _update_reading(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        want_pause = self._write_paused or self.pipeline.wants_pause or self._closing is not None
        if want_pause and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        elif not want_pause and self._reading_paused:
            self._reading_paused = False
            self.transport.resume_reading()

    def _ip(self):
        return self.peer[0] if isinstance(self.peer, tuple) and self.peer else self.peer

    def abort(self, why) -> None:
        """Close this connection (others are unaffected), as Kafka's SocketServer does."""
        if self.transport is None:
            return
        log.info("closing connection from %s on %s: %s", self.peer, self.pipeline.listener, why)
        transport = self.transport
        self.pipeline.close()
        transport.close()
