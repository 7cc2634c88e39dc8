"""The harness's own parts, each shown to catch what it is there for: the checker on
logs built by hand (a lost ack, a disagreement, two leaders in one epoch, a duplicate,
acks out of order), the monitor on a high watermark that goes back, the proxy's
held, refused and delayed links on a real socket pair, and the seeded schedule."""
from __future__ import annotations

import socket
import uuid
import time

import pytest

from tests.support.echo_server import echo_server
from tests.chaos import check as chk
from tests.chaos.monitor import Monitor
from tests.chaos.proxy import HELD, REFUSED, Proxies
from tests.chaos.schedule import KINDS, Schedule
from wire.messages import LeaderChangeMessage, TopicRecord
from wire.messages.leader_change_message import Voter
from wire.records import ControlRecordType, build_control_batch, build_value_batch, encode_metadata_record


def topic(name: str) -> bytes:
    return encode_metadata_record(TopicRecord(name=name, topic_id=uuid.uuid5(uuid.NAMESPACE_OID, name)), 0)


def leader_change(base: int, epoch: int, leader: int) -> bytes:
    msg = LeaderChangeMessage(version=0, leader_id=leader, voters=[Voter(voter_id=leader)],
                              granting_voters=[Voter(voter_id=leader)])
    return build_control_batch(base, epoch, 0, [(ControlRecordType.LEADER_CHANGE, msg)])


def log_of(*batches: bytes) -> chk.NodeLog:
    from wire.records import walk
    out = {walk(b)[0].base_offset: b for b in batches}
    return chk.NodeLog(out, chk.end_offset(out))


def good_logs(n: int = 3) -> dict[int, chk.NodeLog]:
    return {i: log_of(leader_change(0, 1, 1), build_value_batch(1, 1, 0, [topic("a"), topic("b")]),
                      build_value_batch(3, 1, 0, [topic("c")])) for i in range(1, n + 1)}


def test_checker_passes_agreeing_logs():
    v = chk.check(good_logs(), 4, ["a", "b", "c"], [])
    assert v.ok, v.problems
    assert v.acked == 3


def test_checker_finds_a_lost_ack_and_acks_out_of_order():
    assert chk.check(good_logs(), 4, ["a", "b", "c", "d"], []).lost == ["d"]
    v = chk.check(good_logs(), 4, ["b", "a"], [])
    assert any("out of ack order" in p for p in v.problems)


def test_checker_finds_logs_that_disagree_below_the_hwm():
    logs = good_logs()
    logs[2] = log_of(leader_change(0, 1, 1), build_value_batch(1, 1, 0, [topic("a"), topic("x")]),
                     build_value_batch(3, 1, 0, [topic("c")]))
    v = chk.check(logs, 4, ["a", "c"], [])
    assert any("differ below HWM" in p for p in v.problems)
    assert any("image" in p for p in v.problems)


def test_checker_finds_two_leaders_in_one_epoch_and_a_duplicate():
    logs = good_logs()
    logs[3] = log_of(leader_change(0, 1, 3), build_value_batch(1, 1, 0, [topic("a"), topic("b")]),
                     build_value_batch(3, 1, 0, [topic("a")]))
    v = chk.check(logs, 4, ["a"], ["b"])
    assert any("LeaderChange records name leaders [1, 3]" in p for p in v.problems)
    assert any("topic a written 2 times" in p for p in v.problems)


def test_checker_ignores_what_is_above_the_hwm_for_agreement():
    logs = good_logs()
    logs[1] = log_of(*logs[1].batches.values(), build_value_batch(4, 1, 0, [topic("z")]))
    assert chk.check(logs, 4, ["a", "b", "c"], []).ok


def test_monitor_flags_a_high_watermark_that_goes_back_and_two_claims():
    m = Monitor({1: 1, 2: 2, 3: 3})
    m._observe(1, 1, 5, 100)
    m._observe(1, 1, 5, 120)
    m._observe(2, 2, 6, 130)
    assert not m.violations
    m._observe(3, 3, 7, 110)  # a later epoch's leader below what was committed
    m._observe(2, 2, 6, 125)  # back within an epoch
    m._observe(3, 3, 6, 140)  # a second claim on epoch 6
    assert len(m.violations) == 3, m.violations


@pytest.fixture
def proxied():
    srv = echo_server()
    proxies = Proxies({1: 1, 2: srv.getsockname()[1]})
    proxies.links[(2, 1)].target_port = srv.getsockname()[1]
    proxies.start()
    yield proxies
    proxies.close()
    srv.close()


def echo(port: int, timeout: float = 2.0) -> float:
    t = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(b"ping")
        assert s.recv(10) == b"ping"
    return time.monotonic() - t


def test_proxy_links_hold_refuse_delay_and_heal(proxied):
    # A link that passes answers within echo's 2 s timeout (a held one never does); no
    # tighter bound, so that a loaded machine's scheduling is not taken for a delay.
    port = proxied.port(1, 2)
    echo(port)
    proxied.cut([(1, 2)], HELD)
    with pytest.raises(socket.timeout):
        echo(port, timeout=0.5)
    echo(proxied.port(2, 1))  # the other direction is its own link
    proxied.cut([(1, 2)], REFUSED)
    with pytest.raises((ConnectionError, AssertionError)):
        echo(port)
    proxied.heal()
    echo(port)
    proxied.delay(0.2)
    assert echo(port) >= 0.4  # 0.2 s each way
    proxied.heal()


def test_schedule_is_replayable_and_covers_every_kind_early():
    a, b = Schedule(7, 3), Schedule(7, 3)
    first = [f.describe() for c in range(4) for f in a.cycle(c).faults]
    assert first == [f.describe() for c in range(4) for f in b.cycle(c).faults]
    assert {d.split("(")[0] for d in first} == set(KINDS)
    other = Schedule(8, 3)
    assert first != [f.describe() for c in range(4) for f in other.cycle(c).faults]


def test_a_kafka_controller_stopped_while_starting_is_excused_only_its_known_fault():
    from tests.chaos.members import kafka_stopped_cleanly
    fault = ("[2026-12-03 13:52:59,556] ERROR Encountered fatal fault: Attempted to remove publisher "
             "KRaftMetadataCachePublisher, which is not installed.")
    assert kafka_stopped_cleanly(143, "")
    assert kafka_stopped_cleanly(1, fault)
    assert not kafka_stopped_cleanly(1, "ERROR Encountered fatal fault: Unexpected error in raft IO thread")
    assert not kafka_stopped_cleanly(2, fault)
