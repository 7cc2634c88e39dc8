"""The session-expiry task's schedule (``broker_sessions.BrokerSessions``): Kafka's
period of timeout / 8, and also the moment the oldest session expires."""
from kraft_server.controller.cluster.broker_sessions import BrokerSessions


def test_the_next_run_is_due_when_the_oldest_session_expires():
    s = BrokerSessions(session_timeout_ms=9000)
    s.touch(100, 5, 0)
    s.touch(101, 6, 4000)
    assert s.next_check(1000) == 1000 + 1125  # the period first
    assert s.next_check(8500) == 9001  # then the expiry of broker 100's session
    assert s.pop_expired(9000) is None  # valid while less than the timeout old
    assert s.pop_expired(9001) == (100, 5)
    assert s.next_check(9001) == 9001 + 1125
    assert s.next_check(12900) == 13001  # broker 101's
    s.pop_expired(13001)
    assert s.next_check(20000) == 21125  # nobody left: the period


def test_a_long_poll_is_credited_to_every_session():
    """Time the loop spent on one long poll does not count against the sessions (a
    broker waits for its heartbeat's answer before it sends the next)."""
    from types import SimpleNamespace
    from kraft_server.controller.controller import BUSY_CREDIT_MS, Controller

    s = BrokerSessions(session_timeout_ms=9000)
    s.touch(100, 5, 0)
    s.touch(101, 6, 4000)
    s.credit(6000)
    assert s.pop_expired(9001) is None and s.valid(100, 5, 14999) and not s.valid(100, 5, 15000)
    assert s.next_check(14000) == 15001

    clock = iter([10.0, 10.0 + BUSY_CREDIT_MS / 1000 - 0.01, 20.0])
    fake = SimpleNamespace(busy_clock=lambda: next(clock), brokers=SimpleNamespace(sessions=s))
    assert Controller._credit_busy(fake, 10.0) == 10.0  # nothing spent
    Controller._credit_busy(fake, 10.0)  # just under the threshold: no credit
    assert s.contact[(100, 5)] == 6000
    assert Controller._credit_busy(fake, 12.0) == 20.0  # 8 s
    assert s.contact == {(100, 5): 14000, (101, 6): 18000}
    assert Controller._credit_busy(SimpleNamespace(busy_clock=None), None) is None  # simulations
