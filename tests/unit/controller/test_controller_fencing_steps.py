"""Fencing a broker a bounded step a write (issue 41): the first write fences it with
at most ``MOVES_PER_WRITE`` partition changes, later writes at the queue's tail move
the rest; other writes commit in between, the end state is the one-write one, a
broker unfenced midway stops the steps and a newly active controller finishes a
fencing the previous one left half done (found from the image)."""
from __future__ import annotations

import uuid

from kraft_server.controller.cluster import broker_lifecycle as lifecycle
from kraft_server.controller.write_queue import Write
from wire.messages import PartitionRecord, TopicRecord
from wire.records import encode_metadata_record

from tests.unit.controller.test_controller_brokers import Cluster, heartbeat, registration

PARTITION_CHANGE, BROKER_CHANGE, TOPIC = 5, 17, 2
TOPIC_ID = uuid.UUID(int=141)
SMALL_ID = uuid.UUID(int=142)


def cluster_with_partitions():
    """Brokers 1, 2 and 3 unfenced; 5 partitions led by 1: ISR [1, 2] (two of them
    [1, 2, 3]) and one on broker 1 alone (leaderless once 1 is fenced)."""
    c = Cluster()
    epochs = {b: c.up(b) for b in (1, 2, 3)}
    replicas = [[1, 2], [1, 2, 3], [1, 2], [1], [1, 2, 3]]
    c.core.propose([encode_metadata_record(TopicRecord(name="t", topic_id=TOPIC_ID), 0)] + [
        encode_metadata_record(PartitionRecord(partition_id=i, topic_id=TOPIC_ID, replicas=r, isr=r, leader=1,
                                               leader_epoch=0, partition_epoch=0), 2)
        for i, r in enumerate(replicas)], c.now)
    c.run_for(100)
    return c, epochs


def submit_fence(c, epoch):
    c.controller.writes.submit("FenceStaleBroker", c.controller.brokers.fence_operation(1, epoch, "test"),
                               lambda code: None, lambda body: None)


def submit_small_write(c):
    """A small write (a CreateTopics' TopicRecord) queued behind the fencing."""
    record = TopicRecord(name="small", topic_id=SMALL_ID)
    c.controller.writes.submit("Small", lambda image, offset, now: Write([(record, 0)], lambda: None),
                               lambda code: None, lambda body: None)


def new_batches(c, before):
    return [[k for k, _ in b] for b in c.data_batches()[before:] if b != [(20, 0)]]  # without NoOps


def partitions(c):
    return c.controller.image.topics.by_name["t"].partitions


def fence_with_a_small_write(monkeypatch, moves):
    """Broker 1 fenced with ``moves`` a write, a small write queued right behind; the
    cluster and the batches written since."""
    monkeypatch.setattr(lifecycle, "MOVES_PER_WRITE", moves)
    c, epochs = cluster_with_partitions()
    before = len(c.data_batches())
    submit_fence(c, epochs[1])
    submit_small_write(c)
    c.run_for(200)
    return c, new_batches(c, before)


def test_fencing_takes_bounded_steps_with_other_writes_between(monkeypatch):
    c, batches = fence_with_a_small_write(monkeypatch, 2)
    # Kafka's order in the first write: the partition changes, then Fenced=1
    assert batches == [[PARTITION_CHANGE] * 2 + [BROKER_CHANGE], [TOPIC], [PARTITION_CHANGE] * 2, [PARTITION_CHANGE]]
    img = c.controller.image
    assert img.brokers.get(1).fenced and not lifecycle.removal_changes(img, 1)
    assert all(1 not in p.isr and p.leader != 1 for i, p in partitions(c).items() if i != 3)
    alone = partitions(c)[3]  # ELR on (min ISR 1): leaderless, 1 left in the ELR
    assert (alone.leader, alone.isr, tuple(alone.eligible_leader_replicas)) == (-1, (), (1,))
    assert not c.controller.brokers.fencing

    # the same in one write: the same image
    one, batches = fence_with_a_small_write(monkeypatch, 4000)
    assert batches == [[PARTITION_CHANGE] * 5 + [BROKER_CHANGE], [TOPIC]]
    assert one.controller.image.content() == c.controller.image.content()


def test_a_broker_unfenced_midway_stops_the_steps(monkeypatch):
    monkeypatch.setattr(lifecycle, "MOVES_PER_WRITE", 2)
    c, epochs = cluster_with_partitions()
    before = len(c.data_batches())
    submit_fence(c, epochs[1])
    out = []
    # the broker is back (a long pause, not a crash): its heartbeat unfences it before step 2
    c.controller.submit_broker_heartbeat(heartbeat(1, epochs[1], 10**9, cordoned=[]), 2, out.append)
    c.run_for(200)
    assert out and out[0].error_code == 0 and not out[0].is_fenced
    assert new_batches(c, before)[:2] == [[PARTITION_CHANGE] * 2 + [BROKER_CHANGE], [BROKER_CHANGE]]
    assert PARTITION_CHANGE not in sum(new_batches(c, before)[2:], [])  # no more steps
    assert not c.controller.image.brokers.get(1).fenced
    assert sum(p.leader == 1 for p in partitions(c).values()) == 3  # what the steps had left
    assert not c.controller.brokers.fencing


def test_a_broker_registered_again_midway_stops_the_steps(monkeypatch):
    monkeypatch.setattr(lifecycle, "MOVES_PER_WRITE", 2)
    c, epochs = cluster_with_partitions()
    before = len(c.data_batches())
    c.controller.brokers.sessions.contact.pop((1, epochs[1]))  # a crash: its session is gone
    submit_fence(c, epochs[1])
    out = []
    c.controller.submit_broker_registration(registration(1, incarnation=uuid.uuid4()), 4, out.append)
    c.run_for(200)
    assert out and out[0].error_code == 0 and out[0].broker_epoch != epochs[1]
    batches = new_batches(c, before)
    # the new registration (an unclean shutdown) takes the old incarnation out of the
    # two ISRs left and of partition 3's ELR, itself
    assert batches[:2] == [[PARTITION_CHANGE] * 2 + [BROKER_CHANGE], [PARTITION_CHANGE] * 3 + [0]]
    assert PARTITION_CHANGE not in sum(batches[2:], [])  # no more steps
    assert not lifecycle.removal_changes(c.controller.image, 1)
    assert not c.controller.brokers.fencing


def test_a_new_active_controller_finishes_a_fencing_left_half_done(monkeypatch):
    monkeypatch.setattr(lifecycle, "MOVES_PER_WRITE", 2)
    c, epochs = cluster_with_partitions()
    # the first step written by a controller that then went away: this log holds a
    # fenced broker still leading and in ISRs, which nothing in memory knows of
    records, more = lifecycle.fence_records(c.controller.image, 1)
    assert more
    c.core.propose([encode_metadata_record(r, v) for r, v in records], c.now)
    c.run_for(100)
    img = c.controller.image
    assert img.brokers.get(1).fenced and lifecycle.removal_changes(img, 1)
    assert not c.controller.brokers.fencing

    again = Cluster(log=c.log)  # a restart: active in a new epoch, from the log alone
    again.run_for(300)
    img = again.controller.image
    assert again.core.epoch > c.core.epoch
    assert img.brokers.get(1).fenced and not lifecycle.removal_changes(img, 1)
    assert all(p.leader != 1 for p in img.topics.by_name["t"].partitions.values())
