"""The Ready loop on an event loop: the process's socket I/O around the shell
(``kraft_server/shell``), which performs the Raft core's effects.

    while running:
        step every arrived request/response into the core; tick it
        ready = shell.take()                  # election state persisted, log writes done
        shell.finish(ready, now, send, reply) # fsync BEFORE anything leaves; advance
        sleep until ready.next_deadline_ms or the next arrival

Arrivals (requests decoded by the listeners' pipelines and handed over by the API
dispatcher with ``submit_request``; responses and send failures from ``peers.Peers``
with ``submit``) are queued and wake the loop. Requests waiting for their turn hold
slots of ``queued.max.requests`` (``net/request_queue.py``) until it steps them in. Time is wall-clock milliseconds, like Kafka's
``Time.SYSTEM``: DescribeQuorum reports fetch timestamps in it.

Shutdown (``request_stop``, wired to SIGINT/SIGTERM by ``run_forever``): the core is
asked to resign (``RaftNode.begin_shutdown``: a leader sends EndQuorumEpoch to the other
voters, as ``KafkaRaftClient.shutdown`` does) and the loop keeps running until those
requests are answered or have failed (``shutdown_complete``), or
``shutdown_timeout_ms`` passes; then the
listeners and peer channels close.
"""
from __future__ import annotations

import asyncio
import logging
import signal
import time

from kraft_server.log.disk import LogCorruption, LogDirFailure
from kraft_server.shell.loop import Shell

from kraft_server.net.peers import Peers
from kraft_server.net.request_queue import DEFAULT_QUEUED_MAX_REQUESTS, RequestQueue
from kraft_server.net.server import Listeners, ListenerSpec

log = logging.getLogger(__name__)


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class Driver:
    def __init__(self, core, raft_log, *, make_dispatcher, deliver, listeners: list[ListenerSpec],
                 store=None,
                 request_timeout_ms: int = 2000, retry_backoff_ms: int = 20,
                 max_bytes: int = 104857600, shutdown_timeout_ms: int = 5000, connection_limits=None,
                 clock=wall_clock_ms, after_cycle=None, extra_servers=(), controller=None,
                 timers=(), queued_max_requests: int = DEFAULT_QUEUED_MAX_REQUESTS, client_id: str = "raft-client"):
        """``make_dispatcher(submit)`` builds the API dispatcher around our ``submit``;
        ``deliver(outbound_response)`` writes a core answer on its connection."""
        self.core = core
        self.log = raft_log
        self.shell = Shell(core, raft_log, store)  # performs each Ready's effects
        self.clock = clock
        self.deliver = deliver
        self.listener_specs = listeners
        self.shutdown_timeout_ms = shutdown_timeout_ms
        self.after_cycle = after_cycle  # e.g. log the core's state transitions
        # kraft_server.controller.Controller: replays committed records, snapshots,
        # and proposes on the leader; polled after every cycle.
        self.controller = controller
        # Objects with ``poll(now_ms) -> next deadline or None`` run after every cycle,
        # e.g. the consumer-group coordinator's session and rebalance timers.
        self.timers = list(timers)
        self._inbox: list = []
        self._inbox_requests = 0  # of those, requests from the listeners (slots of the queue)
        self.request_queue = RequestQueue(queued_max_requests)
        self._slice_turn = False  # the next turn may be a slice of answers only
        self._waiter: asyncio.Future | None = None  # the idle wait, settled by ``wake``
        # when the controller's and timers' polls run (``_poll_others``): the core's
        # progress mark they last saw, their earliest deadline, and whether they (or a
        # ``wake``) asked for another turn
        self._polled_mark = None
        self._polls_deadline: int | None = None
        self._polls_asked = True
        self._stop_requested = False
        self._stopped: asyncio.Event | None = None
        self.dispatcher = make_dispatcher(self.submit_request)
        self.listeners = Listeners(self.dispatcher, max_bytes=max_bytes, limits=connection_limits,
                                   queue=self.request_queue)
        self.peers = Peers(self.submit, request_timeout_ms=request_timeout_ms,
                           retry_backoff_ms=retry_backoff_ms, client_id=client_id)
        self.bound: dict[str, tuple[str, int]] = {}
        # (name, host, port, protocol_factory): plain servers beside the Kafka listeners,
        # e.g. the Prometheus scrape endpoint (kraft_server/metrics).
        self.extra_servers = list(extra_servers)
        self._extra: list = []
        # Outbound channels beside the core's (e.g. the controller's registration
        # channel), closed with them when the loop ends.
        self.extra_channels: list = []

    # -- called from protocol callbacks ------------------------------------------------
    def submit(self, item) -> None:
        """Queue an ``InboundRequest`` or ``InboundResponse`` for the core."""
        self._inbox.append(item)
        self._signal()

    def submit_request(self, item) -> None:
        """Queue an ``InboundRequest`` read from a listener: it holds a slot of
        ``queued.max.requests`` until the next turn steps it into the core."""
        self.request_queue.enter()
        self._inbox_requests += 1
        self.submit(item)

    def wake(self) -> None:
        """Run a whole Ready cycle soon (the controller's and timers' polls too): for
        work handed over from outside the loop, e.g. a broker's heartbeat to the
        controller or ``core.propose`` by the bench load generator
        (tools/raft_load_server.py)."""
        self._polls_asked = True
        self._signal()

    def _signal(self) -> None:
        if self._waiter is not None:
            _settle(self._waiter)

    def request_stop(self) -> None:
        if not self._stop_requested:
            log.info("shutdown requested")
        self._stop_requested = True
        self._signal()

    # -- the loop ---------------------------------------------------------------------------
    async def start(self) -> dict[str, tuple[str, int]]:
        """Bind every listener; returns ``{name: (host, port)}`` as bound."""
        self._stopped = asyncio.Event()
        self.request_queue.call_soon = asyncio.get_running_loop().call_soon
        for spec in self.listener_specs:
            self.bound[spec.name] = await self.listeners.start(spec)
        loop = asyncio.get_running_loop()
        for name, host, port, factory, *tls in self.extra_servers:  # (..., ssl context): HTTPS
            server = await loop.create_server(factory, host or None, port, ssl=tls[0] if tls else None)
            self._extra.append(server)
            self.bound[name] = server.sockets[0].getsockname()[:2]
        self.listeners.start_idle_sweep()  # everything is bound: nothing left pending on a failure
        return self.bound

    async def run(self) -> None:
        try:
            self.log.wait_verified()  # the start-up check of fsync'd bytes, before the first step
            await self._loop()
        except LogCorruption:
            raise  # a one-line start-up error (``__main__``)
        except LogDirFailure as exc:
            # Kafka halts on a metadata log directory failure: nothing written after it
            # is acknowledged, and the log on disk stays whole for the restart.
            log.critical("metadata log directory failure: %s; stopping, nothing after it was "
                         "acknowledged%s", exc, " (free space, then restart)" if exc.disk_full else "")
            raise
        except Exception:
            # A core failure: stop serving rather than run on in an unknown state
            # (Kafka's fault handler exits the process too).
            log.critical("fatal error in the Ready loop; shutting down", exc_info=True)
            raise
        finally:
            self.peers.close()
            for channel in self.extra_channels:
                channel.close()
            for server in self._extra:
                server.close()
            await self.listeners.close()
            self._stopped.set()

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    def _cycle(self) -> tuple[bool, int | None]:
        """One turn of the Ready loop; returns (did work, next deadline)."""
        core = self.core
        now = self.clock()
        if self._slice_turn and not self._inbox:
            return self._slice_cycle(now)
        self._slice_turn = False
        inbox, self._inbox = self._inbox, []
        taken, self._inbox_requests = self._inbox_requests, 0
        for item in inbox:
            core.step(item, now)
        self.request_queue.leave(taken)
        core.tick(now)
        ready = self.shell.take()
        more = self.shell.finish(ready, now, self.peers.send, self.deliver)
        deadline = ready.next_deadline_ms
        mark = core.progress_mark()
        if self._polls_asked or mark != self._polled_mark \
                or (self._polls_deadline is not None and now >= self._polls_deadline):
            self._polled_mark, self._polls_asked = mark, False
            again, self._polls_deadline = self._poll_others(now)
            self._polls_asked = self._polls_asked or again  # or a ``wake`` during the polls
        elif self.controller is not None:
            self.controller.note_time(now)
        more = more is True or self._polls_asked
        if self._polls_deadline is not None:
            deadline = self._polls_deadline if deadline is None else min(deadline, self._polls_deadline)
        # What the stepped arrivals asked for is in this Ready: a turn that only parked
        # them (observers' Fetches at the log end) needs no second turn to confirm it.
        busy = bool(ready.flush or ready.requests or ready.responses or more)
        self._slice_turn = self._only_answers_left(ready, more)
        return busy, deadline

    def _poll_others(self, now: int) -> tuple[bool, int | None]:
        """The controller's and timers' polls and the ``after_cycle`` hook; returns
        (another turn wanted at once, earliest deadline). They only look at what
        moves the core's ``progress_mark``, at time and at work handed to them
        (which calls ``wake``), so a turn that moved none of these skips them: with
        a hundred observers, most turns only park and answer Fetches."""
        more, deadline = False, None
        if self.controller is not None:
            more, deadline = self.controller.poll(now)
        for timer in self.timers:
            wanted = timer.poll(now)
            if wanted is not None:
                deadline = wanted if deadline is None else min(deadline, wanted)
        if self.after_cycle is not None:
            self.after_cycle(now)
        return bool(more), deadline

    def _only_answers_left(self, ready, more) -> bool:
        return more is True and not ready.flush and self.core.answers_deferred()

    def _slice_cycle(self, now: int) -> tuple[bool, None]:
        """A turn that only answers the next slice of observers' Fetches left over by
        the last Ready (nothing arrived since): the core's Ready, without the
        controller's and timers' polls. The next turn is a whole one unless this
        left only answers again; so the polls wait at most a few slices."""
        hwm = self.core.high_watermark
        ready = self.shell.take()
        more = self.shell.finish(ready, now, self.peers.send, self.deliver)
        self._slice_turn = self.core.high_watermark == hwm and self._only_answers_left(ready, more) \
            and not ready.requests
        return True, None

    async def _loop(self) -> None:
        shutdown_deadline = None
        while True:
            if self._stop_requested and shutdown_deadline is None:
                shutdown_deadline = self.clock() + self.shutdown_timeout_ms
                self.core.begin_shutdown(self.clock())
            busy, deadline = self._cycle()
            if shutdown_deadline is not None:
                if self.core.shutdown_complete() or self.clock() >= shutdown_deadline:
                    await asyncio.sleep(0)  # let the transports write what is queued
                    return
                # Poll often while waiting for the peers' answers.
                soon = self.clock() + 20
                deadline = min(d for d in (deadline, shutdown_deadline, soon) if d is not None)
            if busy:
                await asyncio.sleep(0)  # let the transports run, then go again
                continue
            timeout = None
            if deadline is not None:
                timeout = max(0.0, (deadline - self.clock()) / 1000.0)
            if self._inbox or (self._stop_requested and shutdown_deadline is None):
                continue
            await self._idle(timeout)

    async def _idle(self, timeout: float | None) -> None:
        """Sleep until ``wake`` or ``timeout`` seconds (a bare future and one timer:
        ``asyncio.wait_for`` on an Event costs a task and a cancellation per sleep)."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _settle, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


def _settle(waiter) -> None:
    if not waiter.done():
        waiter.set_result(None)


def install_signal_handlers(driver: Driver) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, driver.request_stop)
        except (NotImplementedError, RuntimeError):  # not the main thread
            pass


def new_event_loop():
    """uvloop when available (it is a dependency), asyncio's loop otherwise."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is in install_requires
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run_forever(driver: Driver, on_started=None) -> None:
    """Start the listeners, run the Ready loop until SIGINT/SIGTERM, shut down."""
    loop = new_event_loop()
    asyncio.set_event_loop(loop)

    async def main():
        bound = await driver.start()
        install_signal_handlers(driver)
        if on_started is not None:
            on_started(bound)
        await driver.run()

    try:
        loop.run_until_complete(main())
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        asyncio.set_event_loop(None)
