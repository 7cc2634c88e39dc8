"""``FlushTimes`` (kraft_server/metrics/flush_times.py): every fsync of the log timed,
the slow ones handed to ``on_slow``, a disk stall logged at WARNING but not on every flush."""
from __future__ import annotations

import logging

from kraft_server.metrics.flush_times import FlushTimes


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_each_flush_is_timed_and_the_slow_ones_reported(caplog):
    clock = Clock()
    times = FlushTimes(warn_ms=1000, warn_every_s=10, clock=clock)
    slow = []
    times.slow_ms, times.on_slow = 20.0, slow.append

    def flush_taking(ms):
        def flush():
            clock.t += ms / 1000
        return flush

    with caplog.at_level(logging.WARNING, logger="kraft_server.metrics.flush_times"):
        for ms in (1, 19, 25, 1500, 1200):
            times.timed(flush_taking(ms))
        clock.t += 11  # past warn_every_s: the next stall is logged again
        times.timed(flush_taking(2000))
    assert times.count == 6 and round(times.max_ms) == 2000
    assert [round(ms) for ms in slow] == [25, 1500, 1200, 2000]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2, warned  # 1500 and 2000; 1200 came within 10 s of 1500
    assert "1500 ms" in warned[0] and "2000 ms" in warned[1]
    assert "6 flushes" in times.summary() and "longest 2000.0 ms" in times.summary()


def test_the_shell_times_its_flushes():
    from kraft_server.shell.loop import Shell

    class Log:
        flushes = 0

        def flush(self):
            Log.flushes += 1

    class Core:
        def advance(self, ready, now_ms):
            return False

    class Ready:
        flush, requests, responses = True, [], []

    shell = Shell(Core(), Log(), store=None)
    shell.finish(Ready(), 0, send=None, reply=None)
    assert Log.flushes == 1 and shell.flush_times.count == 1
