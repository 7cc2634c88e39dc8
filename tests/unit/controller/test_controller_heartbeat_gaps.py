"""BrokerHeartbeat as Kafka 4.3.1's controller answers it in two corners:

* a heartbeat that waits in the controller's queue longer than half of
  ``broker.heartbeat.interval.ms`` (``ControllerApis``' deadline) is answered
  REQUEST_TIMED_OUT; its session was touched on arrival and its metadata offset
  still counts (``processExpiredBrokerHeartbeat``), so the broker is not fenced;
* the controlled-shutdown offset lives in the active controller's memory only
  (``BrokerHeartbeatManager``, rebuilt on activation): a controller that became
  active after a broker entered controlled shutdown sees it as UNFENCED, so a
  WantShutDown starts the controlled shutdown again (moving what it still leads,
  no second InControlledShutdown record) or, leading nothing, lets it go at once.
"""
from __future__ import annotations

import uuid

from wire.errors import ErrorCode
from wire.messages import BrokerRegistrationChangeRecord, PartitionRecord, TopicRecord
from wire.records import encode_metadata_record

from kraft_server.controller.write_queue import Write, _Inflight, _Op

from tests.unit.controller.test_controller_brokers import Cluster, heartbeat


def test_a_heartbeat_stuck_in_the_queue_times_out_and_the_broker_stays_unfenced():
    c = Cluster()
    e1 = c.up(1)
    out = []
    offset = c.controller.image.offset
    # an earlier write whose commit does not come (a stalled quorum, a slow disk)
    writes = c.controller.writes
    writes.inflight = _Inflight(_Op("stalled", None, None, None), Write([], lambda: None), 10**9, c.core.epoch)
    c.controller.submit_broker_heartbeat(heartbeat(1, e1, offset), 2, out.append)
    c.cycle()  # seen: its deadline is 2000 / 2 ms from now
    c.now += 999
    c.cycle()
    assert out == []
    c.now += 2
    c.cycle()
    assert len(out) == 1 and out[0].error_code == ErrorCode.REQUEST_TIMED_OUT
    writes.inflight = None
    assert c.controller.writes.stats["timed_out"] == 1
    assert c.controller.brokers.sessions.offsets[1] == offset
    assert not c.controller.image.brokers.get(1).fenced
    # in time, the next one is answered as usual
    assert c.beat(1, e1).error_code == 0


def test_the_queue_deadline_is_the_controllers_next_wake_up():
    c = Cluster()
    e1 = c.up(1)
    writes = c.controller.writes
    writes.inflight = _Inflight(_Op("stalled", None, None, None), Write([], lambda: None), 10**9, c.core.epoch)
    writes.submit("later", lambda *a: Write([], lambda: None), lambda code: None, lambda body: None,
                  timeout_ms=700)
    _, deadline = c.controller.poll(c.now)
    assert writes.next_deadline() == c.now + 700
    assert deadline <= c.now + 700
    writes.inflight = None


def _topic_led_by_1(c):
    tid = uuid.UUID(int=91)
    c.core.propose([encode_metadata_record(TopicRecord(name="t", topic_id=tid), 0),
                    encode_metadata_record(PartitionRecord(partition_id=0, topic_id=tid, replicas=[1, 2],
                                                           isr=[1, 2], leader=1, leader_epoch=0,
                                                           partition_epoch=0), 2)], c.now)
    c.run_for(100)


def test_after_failover_a_shutting_down_broker_that_still_leads_starts_again():
    c = Cluster()
    e1, e2 = c.up(1), c.up(2)
    _topic_led_by_1(c)
    # InControlledShutdown was written under an earlier controller: this one has no offset
    c.core.propose([encode_metadata_record(BrokerRegistrationChangeRecord(
        broker_id=1, broker_epoch=e1, in_controlled_shutdown=1), 1)], c.now)
    c.run_for(100)
    assert c.controller.image.brokers.get(1).in_controlled_shutdown
    assert not c.controller.brokers.shutdown_offsets
    batches = len(c.data_batches())
    h = c.beat(1, e1, want_shut_down=True)
    assert (h.error_code, h.is_fenced, h.should_shut_down) == (0, False, False)
    img = c.controller.image
    assert img.topics.by_name["t"].partitions[0].leader == 2  # its leadership moved now
    new = [b for b in c.data_batches()[batches:] if b != [(20, 0)]]
    assert new == [[(5, 2)]]  # no second InControlledShutdown record
    assert c.controller.brokers.shutdown_offsets  # this controller remembers it from now on
    c.beat(2, e2)
    h = c.beat(1, e1, want_shut_down=True)
    assert (h.is_fenced, h.should_shut_down) == (True, True)


def test_after_failover_a_shutting_down_broker_leading_nothing_goes_at_once():
    c = Cluster()
    e1, _ = c.up(1), c.up(2)
    c.core.propose([encode_metadata_record(BrokerRegistrationChangeRecord(
        broker_id=1, broker_epoch=e1, in_controlled_shutdown=1), 1)], c.now)
    c.run_for(100)
    h = c.beat(1, e1)  # no WantShutDown: Kafka's UNFENCED, nothing written
    assert (h.is_fenced, h.should_shut_down) == (False, False)
    h = c.beat(1, e1, want_shut_down=True)
    assert (h.is_fenced, h.should_shut_down) == (True, True)
    assert c.controller.image.brokers.get(1).fenced
