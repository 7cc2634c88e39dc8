"""The image's partitions by broker (``image/broker_index.py``) stay equal to a full
scan through random topic creations, partition changes (reassignments, ISR and
leader moves, ELRs), deletions, ClearElr, fencing, unfencing, controlled shutdowns,
re-registrations and snapshot loads; and the broker records written from the index
are byte for byte those a full scan writes."""
from __future__ import annotations

import random
import uuid

import pytest

from kraft_server.controller.cluster import broker_lifecycle as lifecycle
from kraft_server.controller.image.broker_index import NO_LEADER, mask_ids
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.replication import elections
from kraft_server.controller.replication.partition_change import (
    broker_removed, broker_returned, broker_unclean_shutdown, unclean_enabled,
)
from wire.messages import (
    BrokerRegistrationChangeRecord, ClearElrRecord, ConfigRecord, FeatureLevelRecord, PartitionChangeRecord,
    PartitionRecord, RegisterBrokerRecord, RemoveTopicRecord, TopicRecord,
)
from wire.messages.register_broker_record import BrokerEndpoint
from wire.records import encode_metadata_record

BROKERS = range(6)
FRESH_SEED = random.randrange(1 << 30)


class Cluster:
    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.image = MetadataImage()
        self.offset = 0
        self.topics: dict[str, uuid.UUID] = {}
        self.serial = 0
        self.replay([(FeatureLevelRecord(name="metadata.version", feature_level=30), 0)])
        if rnd.random() < 0.5:
            self.replay([(FeatureLevelRecord(name="eligible.leader.replicas.version", feature_level=1), 0)])
        for b in BROKERS:
            self.register(b)
            self.replay([(BrokerRegistrationChangeRecord(broker_id=b, broker_epoch=self.epoch(b), fenced=-1), 0)])

    def replay(self, pairs) -> None:
        for record, version in pairs:
            self.image.replay(encode_metadata_record(record, version), self.offset)
            self.offset += 1

    def epoch(self, b: int) -> int:
        return self.image.brokers.get(b).epoch

    def register(self, b: int) -> None:
        self.replay([(RegisterBrokerRecord(
            broker_id=b, incarnation_id=uuid.uuid4(), broker_epoch=self.offset,
            end_points=[BrokerEndpoint(name="PLAINTEXT", host="h", port=9000 + b)], rack=None,
            log_dirs=[uuid.UUID(int=1000 + b)]), 4)])

    def some(self, k: int) -> list[int]:
        return self.rnd.sample(list(BROKERS), k)

    def state(self, replicas):
        isr = [r for r in replicas if self.rnd.random() < 0.7]
        leader = self.rnd.choice(isr) if isr and self.rnd.random() < 0.9 else NO_LEADER
        elr = [r for r in replicas if r not in isr and self.rnd.random() < 0.3]
        return isr, leader, elr

    def create(self) -> None:
        self.serial += 1
        name, tid = f"t{self.rnd.randrange(1000)}-{self.serial}", uuid.uuid4()
        self.topics[name] = tid
        records = [(TopicRecord(name=name, topic_id=tid), 0)]
        if self.rnd.random() < 0.3:
            records.append((ConfigRecord(resource_type=2, resource_name=name,
                                         name="unclean.leader.election.enable", value="true"), 0))
        for pid in range(self.rnd.randint(1, 70)):
            replicas = self.some(3)
            isr, leader, elr = self.state(replicas)
            records.append((PartitionRecord(partition_id=pid, topic_id=tid, replicas=replicas, isr=isr,
                                            leader=leader, leader_epoch=0, partition_epoch=0,
                                            directories=[uuid.UUID(int=1000 + r) for r in replicas],
                                            eligible_leader_replicas=elr or None), 2))
        self.replay(records)

    def change(self) -> None:
        if not self.topics:
            return
        t = self.image.topics.by_name[self.rnd.choice(sorted(self.topics))]
        pid = self.rnd.choice(sorted(t.partitions))
        r = PartitionChangeRecord(partition_id=pid, topic_id=t.topic_id)
        replicas = list(t.partitions[pid].replicas)
        if self.rnd.random() < 0.3:  # a reassignment's new replicas
            replicas = self.some(self.rnd.randint(2, 4))
            r.replicas = replicas
            r.directories = [uuid.UUID(int=1000 + b) for b in replicas]
        isr, leader, elr = self.state(replicas)
        if self.rnd.random() < 0.8:
            r.isr = isr
        if self.rnd.random() < 0.8:
            r.leader = leader
        if self.rnd.random() < 0.4:
            r.eligible_leader_replicas = elr
        self.replay([(r, 2)])

    def delete(self) -> None:
        if self.topics:
            name = self.rnd.choice(sorted(self.topics))
            self.replay([(RemoveTopicRecord(topic_id=self.topics.pop(name)), 0)])

    def clear_elr(self) -> None:
        name = self.rnd.choice(sorted(self.topics)) if self.topics and self.rnd.random() < 0.5 else ""
        self.replay([(ClearElrRecord(topic_name=name), 0)])

    def lifecycle(self) -> None:
        """A fence, unfence, controlled shutdown or re-registration, its records
        checked against the ones a full scan writes, then replayed."""
        b = self.rnd.choice(list(BROKERS))
        img = self.image
        reg = img.brokers.get(b)
        kind = self.rnd.choice(("fence", "unfence", "shutdown", "register", "unregister"))
        if kind == "fence" and not reg.fenced:
            scan = [broker_removed(img, t.name, p, b) for t, p in img.topics.partitions()]
            check_same(lifecycle.removal_changes(img, b), scan)
            records, more = lifecycle.fence_records(img, b)
            self.replay(records)
            while more:  # step by step, as the controller writes them
                records, more = lifecycle.removal_step(img, b)
                self.replay(records)
            assert not lifecycle.removal_changes(img, b)
        elif kind == "unfence" and reg.fenced:
            self.replay([(BrokerRegistrationChangeRecord(broker_id=b, broker_epoch=reg.epoch, fenced=-1), 0)])
            scan = [broker_returned(img, p, b) for _, p in img.topics.partitions()]
            got = [r for r, _ in lifecycle.unfence_records(img, b)[1:]]
            check_same(got, scan)
            self.replay([(r, 2) for r in got])
        elif kind == "shutdown" and reg.active:
            assert lifecycle.leads_any(img, b) == any(p.leader == b for _, p in img.topics.partitions())
            more = True
            while more:  # step by step, as the controller writes them
                records, more = lifecycle.controlled_shutdown_records(img, b)
                self.replay(records)
        elif kind == "unregister":
            scan = [broker_unclean_shutdown(img, t.name, p, b) for t, p in img.topics.partitions()]
            got = lifecycle.unregister_records(img, b)
            check_same([r for r, _ in got[:-1]], scan)
            self.replay(got)
            self.register(b)
        elif kind == "register":
            scan = [broker_unclean_shutdown(img, t.name, p, b) for t, p in img.topics.partitions()]
            got = [c for c in (broker_unclean_shutdown(img, t.name, p, b)
                               for t, p in img.topics.partitions_of(b)) if c is not None]
            check_same(got, scan)
            self.replay([(c, 2) for c in got])
            self.register(b)

    def warm(self) -> None:
        """Some idle turns of the active controller (``TopicsImage.warm``)."""
        for _ in range(self.rnd.randint(1, 3)):
            self.image.topics.warm(self.rnd.choice((1, 50, 200)))

    def snapshot_load(self) -> None:
        """A new image from this one's snapshot (as a restarted controller loads it)."""
        values = self.image.snapshot_records()
        img = MetadataImage()
        for i, v in enumerate(values):
            img.replay(v, i)
        assert img.snapshot_records() == values
        self.image = img


def check_same(got, scan) -> None:
    want = [encode_metadata_record(r, 2) for r in scan if r is not None]
    assert [encode_metadata_record(r, 2) for r in got] == want


def check_index(img: MetadataImage) -> None:
    """The index (built on first use, then kept) against a full scan."""
    index = img.topics.index()
    want: dict[int, set] = {}
    leads: dict[int, int] = {}
    for t, p in img.topics.partitions():
        for k in {*p.isr, *(p.eligible_leader_replicas or ()), *((NO_LEADER,) if p.leader == NO_LEADER else ())}:
            want.setdefault(k, set()).add((t.topic_id, p.partition_id))
        if p.leader >= 0:
            leads[p.leader] = leads.get(p.leader, 0) + 1
    got = {k: {(tid, pid) for tid, mask in by_topic.items() for pid in mask_ids(mask)}
           for k, by_topic in index.masks.items()}
    assert {k: v for k, v in got.items() if v} == want
    assert all(mask for by_topic in index.masks.values() for mask in by_topic.values())
    assert index.leads == leads
    scan = elections._elect_up_to(img, (p for t, p in img.topics.partitions()
                                        if p.leader < 0 and unclean_enabled(img, t.name)), elections.UNCLEAN, 10)
    assert [encode_metadata_record(r, v) for r, v in elections.leaderless_unclean(img, 10)] == \
        [encode_metadata_record(r, v) for r, v in scan]
    for k in [*BROKERS, NO_LEADER]:
        order = [(t.name, p.partition_id) for t, p in img.topics.partitions()
                 if (t.topic_id, p.partition_id) in want.get(k, ())]
        assert [(t.name, p.partition_id) for t, p in img.topics.partitions_of(k)] == order


def run(seed: int, steps: int = 400) -> None:
    print(f"broker index seed {seed}")
    rnd = random.Random(seed)
    c = Cluster(rnd)
    ops = [c.create] * 3 + [c.change] * 6 + [c.delete, c.clear_elr] + [c.lifecycle] * 4 + [c.snapshot_load, c.warm, c.warm]
    if rnd.random() < 0.5:
        check_index(c.image)  # built before anything (kept up to date from the first record)
    for step in range(steps):
        rnd.choice(ops)()
        if rnd.random() < 0.15:
            check_index(c.image)
    check_index(c.image)


@pytest.mark.parametrize("seed", [41, FRESH_SEED], ids=["fixed", "fresh"])
def test_index_equals_a_full_scan(seed, monkeypatch):
    monkeypatch.setattr(lifecycle, "MOVES_PER_WRITE", 3)  # fencings and shutdowns take steps
    run(seed)


def test_mask_ids():
    assert mask_ids(0) == []
    assert mask_ids(0b1011) == [0, 1, 3]
    assert mask_ids(1 << 5000 | 1) == [0, 5000]


def test_warm_decodes_a_budget_a_turn():
    c = Cluster(random.Random(8))
    for _ in range(20):
        c.create()
    c.snapshot_load()
    topics = c.image.topics
    assert all(t.pending for t in topics.by_id.values())
    turns = 0
    left = sum(len(t.pending) for t in topics.by_id.values())
    while topics.warm(100):
        turns += 1
        now = sum(len(t.pending or ()) for t in topics.by_id.values())
        assert now == left - 100  # a topic decoded in part when the budget ends in it
        left = now
    assert turns >= 3 and not any(t.pending for t in topics.by_id.values())
    check_index(c.image)


def test_index_built_on_first_question_then_kept():
    c = Cluster(random.Random(7))
    c.create()
    assert c.image.topics._index is None  # replay alone builds nothing
    check_index(c.image)
    for _ in range(30):
        c.create()
        c.change()
    check_index(c.image)
