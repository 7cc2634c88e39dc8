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
