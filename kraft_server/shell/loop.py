"""``Shell``: performs every effect a Raft core's ``Ready`` asks for, in the one
order that keeps Raft safe, for whatever drives it (the process's event loop in
``shell/driver.py``, the simulation, the scenario engine, the tests)::

    ready = shell.take()        # core.ready(); persist the election state; perform the log writes
    shell.finish(ready, now_ms, send, reply)
                                # fsync if asked, THEN send requests and responses, core.advance

``take`` and ``finish`` are apart so that a driver can hold a Ready between them
(the simulation parks it while a slow fsync is in flight; a crash then loses the
unflushed appends and the unsent messages together, as kill -9 does). ``turn`` is
both at once.
"""
from __future__ import annotations

from kraft_server.metrics.flush_times import FlushTimes
from kraft_server.shell.log_writes import LogWriter


class Shell:
    def __init__(self, core, log, store):
        """``core``: a ``RaftNode`` (or anything with ``ready``/``advance``); ``log`` and
        ``store``: the ones the core was started from (file or memory)."""
        self.core = core
        self.log = log
        self.store = store
        self.writer = LogWriter(log)
        self.flush_times = FlushTimes()  # each fsync timed (kraft_server/metrics/flush_times.py)

    def take(self):
        ready = self.core.ready()
        if ready.election is not None:
            self.store.write(ready.election)  # durable on return
        if ready.writes:
            self.writer.perform(ready.writes)
        return ready

    def finish(self, ready, now_ms: int, send, reply) -> bool:
        """Flush, send, advance; returns ``core.advance``'s answer (True: call again)."""
        if ready.flush:
            self.flush_times.timed(self.log.flush)
        for request in ready.requests:
            send(request)
        for response in ready.responses:
            reply(response)
        return self.core.advance(ready, now_ms)

    def turn(self, now_ms: int, send, reply):
        """One whole Ready cycle; returns (ready, more)."""
        ready = self.take()
        return ready, self.finish(ready, now_ms, send, reply)
