"""Connection limits (kraft_server/net/limits.py): max.connections, max.connections.per.ip
and connections.max.idle.ms as Kafka names them."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from kraft_server.net.limits import ConnectionLimits


def test_total_and_per_ip_limits_refuse_with_the_property_named_and_free_on_release():
    limits = ConnectionLimits(max_connections=3, max_per_ip=2)
    assert limits.admit("10.0.0.1") is None and limits.admit("10.0.0.1") is None
    assert limits.admit("10.0.0.1") == "too many connections from 10.0.0.1 (max.connections.per.ip=2)"
    assert limits.admit("10.0.0.2") is None
    assert limits.admit("10.0.0.3") == "too many connections (max.connections=3)"
    assert limits.refused == 2 and limits.open == 3
    limits.release("10.0.0.1")
    assert limits.admit("10.0.0.3") is None and limits.open == 3
    for ip in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
        limits.release(ip)
    assert limits.open == 0 and not limits.per_ip


def test_idle_connections_are_found_after_the_idle_time_and_never_when_negative():
    limits = ConnectionLimits(idle_ms=1000)
    busy, quiet = SimpleNamespace(last_active=99.5), SimpleNamespace(last_active=98.9)
    assert limits.idle([busy, quiet], now=100.0) == [quiet]
    assert limits.sweep_interval_s() == 0.25
    never = ConnectionLimits(idle_ms=-1)
    assert never.idle([quiet], now=10_000.0) == [] and never.sweep_interval_s() is None
    assert ConnectionLimits().sweep_interval_s() == 10.0  # Kafka's default 10 minutes: every 10 s


def test_request_queue_bounds_what_waits_and_resumes_connections_in_the_order_they_stopped():
    from kraft_server.net.request_queue import RequestQueue

    resumed = []

    class Conn:
        def __init__(self, name):
            self.name = name

        def resume(self):
            resumed.append(self.name)
            queue.enter()  # each resumed connection dispatches one request

    queue = RequestQueue(2)
    queue.enter()
    queue.enter()
    assert queue.full and queue.peak == 2
    a, b, c = Conn("a"), Conn("b"), Conn("c")
    for conn in (a, b, c):
        queue.wait(conn)
    queue.forget(b)  # closed while waiting: never resumed
    assert queue.waiting == 2 and queue.times_full == 3
    queue.leave(1)  # one slot: "a" takes it, "c" keeps waiting
    assert resumed == ["a"] and queue.full and queue.waiting == 1
    queue.leave(2)
    assert resumed == ["a", "c"] and queue.size == 1 and queue.peak == 2
    with pytest.raises(ValueError):
        RequestQueue(0)


def test_request_queue_resumes_after_the_loops_turn_when_given_call_soon():
    from kraft_server.net.request_queue import RequestQueue

    later = []
    queue = RequestQueue(1, call_soon=later.append)
    queue.enter()
    resumed = []
    class Conn:
        def resume(self):
            resumed.append(1)

    queue.wait(Conn())
    queue.leave(1)
    queue.leave(0)
    assert resumed == [] and len(later) == 1  # scheduled once, not run inside leave()
    later[0]()
    assert resumed == [1]
