"""BrokerRegistration and BrokerHeartbeat on a one-voter controller driven by hand:
registration checks, RegisterBrokerRecord v4 (fenced) answered after commit with the
record's offset as epoch, unfencing once caught up, STALE_BROKER_EPOCH, fencing on
session expiry, controlled shutdown, leader moves."""
from __future__ import annotations

import uuid

from kraft_server.controller.cluster import broker_lifecycle as lifecycle
from kraft_server.controller.image.metadata_image import MetadataImage
from wire.errors import ErrorCode
from wire.messages import (
    BrokerHeartbeatRequest, BrokerRegistrationRequest, FeatureLevelRecord, PartitionRecord,
    TopicRecord,
)
from wire.messages.broker_registration_request import Feature, Listener
from wire.records import encode_metadata_record

from tests.unit.controller.test_controller_active import Single

CLUSTER = "c" * 22
# what a Kafka 4.4.0 broker registers with
FEATURES = [("metadata.version", 7, 33), ("kraft.version", 0, 1), ("group.version", 0, 1),
            ("transaction.version", 0, 2), ("eligible.leader.replicas.version", 0, 1),
            ("share.version", 0, 2), ("streams.version", 0, 1)]


def registration(broker_id, incarnation=None, cluster=CLUSTER, dirs=None, features=FEATURES):
    return BrokerRegistrationRequest(
        broker_id=broker_id, cluster_id=cluster, incarnation_id=incarnation or uuid.UUID(int=broker_id),
        listeners=[Listener(name="PLAINTEXT", host="127.0.0.1", port=9000 + broker_id, security_protocol=0)],
        features=[Feature(name=n, min_supported_version=lo, max_supported_version=hi) for n, lo, hi in features],
        rack=None, log_dirs=dirs if dirs is not None else [uuid.UUID(int=(broker_id << 64) | 7)],
        previous_broker_epoch=-1)


def heartbeat(broker_id, epoch, offset, want_fence=False, want_shut_down=False, cordoned=None):
    return BrokerHeartbeatRequest(broker_id=broker_id, broker_epoch=epoch, current_metadata_offset=offset,
                                  want_fence=want_fence, want_shut_down=want_shut_down,
                                  cordoned_log_dirs=cordoned)


class Cluster(Single):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.run_for(200)  # bootstrap and self-registration committed

    def call(self, kind, body, version):
        out = []
        submit = (self.controller.submit_broker_registration if kind == "register"
                  else self.controller.submit_broker_heartbeat)
        submit(body, version, out.append)
        for _ in range(200):
            if out:
                return out[0]
            self.run_for(5)
        raise AssertionError("no answer")

    def register(self, broker_id, **kw):
        return self.call("register", registration(broker_id, **kw), 4)

    def beat(self, broker_id, epoch, offset=None, **kw):
        if offset is None:
            offset = self.controller.image.offset
        return self.call("heartbeat", heartbeat(broker_id, epoch, offset, **kw), 2)

    def up(self, broker_id):
        r = self.register(broker_id)
        assert r.error_code == 0
        h = self.beat(broker_id, r.broker_epoch, cordoned=[])
        assert not h.is_fenced, h
        return r.broker_epoch


def test_register_writes_a_fenced_v4_record_whose_offset_is_the_epoch():
    c = Cluster()
    r = c.register(1)
    assert r.error_code == 0
    b = c.controller.image.brokers.get(1)
    assert b.fenced and b.epoch == r.broker_epoch == b.register_offset
    assert [k for k in c.data_batches()[-1]] == [(0, 4)]
    # not caught up: still fenced; caught up with WantFence: still fenced
    h = c.beat(1, r.broker_epoch, offset=r.broker_epoch - 1)
    assert (h.error_code, h.is_caught_up, h.is_fenced) == (0, False, True)
    h = c.beat(1, r.broker_epoch, want_fence=True)
    assert (h.is_caught_up, h.is_fenced) == (True, True)
    h = c.beat(1, r.broker_epoch, cordoned=[])
    assert (h.error_code, h.is_caught_up, h.is_fenced, h.should_shut_down) == (0, True, False, False)
    assert c.data_batches()[-1] == [(17, 0), (17, 3)]  # unfence, then CordonedLogDirs=[]
    assert not c.controller.image.brokers.get(1).fenced
    # resending the same incarnation keeps epoch and state
    again = c.register(1)
    assert again.broker_epoch == r.broker_epoch and not c.controller.image.brokers.get(1).fenced


def test_registration_checks_in_kafka_order():
    c = Cluster()
    assert c.register(1, cluster="x" * 22).error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    assert c.register(1, dirs=[]).error_code == ErrorCode.INVALID_REGISTRATION
    assert c.register(1, dirs=[uuid.UUID(int=1)]).error_code == ErrorCode.INVALID_REGISTRATION
    assert c.register(1, features=FEATURES[1:]).error_code == ErrorCode.INVALID_REGISTRATION
    old = [("metadata.version", 7, 29)] + FEATURES[1:]
    assert c.register(1, features=old).error_code == ErrorCode.UNSUPPORTED_VERSION
    assert c.register(1, features=FEATURES[:2]).error_code == ErrorCode.UNSUPPORTED_VERSION
    first = c.register(1)
    assert first.error_code == 0
    c.beat(1, first.broker_epoch)
    # another incarnation while the session lives
    dup = c.register(1, incarnation=uuid.uuid4())
    assert dup.error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    # a directory owned by another broker
    assert c.register(2, dirs=[uuid.UUID(int=(1 << 64) | 7)]).error_code == ErrorCode.INVALID_REGISTRATION


def test_stale_epochs_and_unknown_brokers():
    c = Cluster()
    r = c.register(1)
    assert c.beat(1, r.broker_epoch + 1).error_code == ErrorCode.STALE_BROKER_EPOCH
    assert c.beat(9, 5).error_code == ErrorCode.STALE_BROKER_EPOCH


def test_session_expiry_fences_and_moves_leadership():
    c = Cluster()
    e1, e2 = c.up(1), c.up(2)
    img = c.controller.image
    # a topic written straight through the log: leader 1, ISR [1, 2]
    tid = uuid.UUID(int=77)
    c.core.propose([encode_metadata_record(TopicRecord(name="t", topic_id=tid), 0),
                    encode_metadata_record(PartitionRecord(partition_id=0, topic_id=tid, replicas=[1, 2],
                                                           isr=[1, 2], leader=1, leader_epoch=0,
                                                           partition_epoch=0), 2)], c.now)
    c.run_for(100)
    assert c.controller.image.topics.by_name["t"].partitions[0].leader == 1
    # broker 2 keeps heartbeating, broker 1 goes silent past broker.session.timeout.ms
    for _ in range(12):
        c.beat(2, e2)
        c.run_for(1000)
    img = c.controller.image
    assert img.brokers.get(1).fenced and not img.brokers.get(2).fenced
    p = img.topics.by_name["t"].partitions[0]
    assert (p.leader, p.isr, p.leader_epoch) == (2, (2,), 1)
    # ELR on, min ISR 1: |ISR| >= min ISR, so no ELR
    assert p.eligible_leader_replicas is None
    # a heartbeat with the old epoch after re-registration is stale
    r = c.register(1, incarnation=uuid.uuid4())
    assert r.error_code == 0 and r.broker_epoch != e1
    assert c.beat(1, e1).error_code == ErrorCode.STALE_BROKER_EPOCH


def test_controlled_shutdown_moves_leaders_then_lets_the_broker_go():
    c = Cluster()
    e1, e2 = c.up(1), c.up(2)
    tid = uuid.UUID(int=78)
    c.core.propose([encode_metadata_record(TopicRecord(name="t", topic_id=tid), 0),
                    encode_metadata_record(PartitionRecord(partition_id=0, topic_id=tid, replicas=[1, 2],
                                                           isr=[1, 2], leader=1, leader_epoch=0,
                                                           partition_epoch=0), 2)], c.now)
    c.run_for(100)
    h = c.beat(1, e1, want_shut_down=True)
    assert (h.is_fenced, h.should_shut_down) == (False, False)  # CONTROLLED_SHUTDOWN
    img = c.controller.image
    assert img.brokers.get(1).in_controlled_shutdown
    assert img.topics.by_name["t"].partitions[0].leader == 2
    c.beat(2, e2)  # the other broker reports it has applied the move
    h = c.beat(1, e1, want_shut_down=True)
    assert (h.is_fenced, h.should_shut_down) == (True, True)
    assert c.controller.image.brokers.get(1).fenced


def test_controlled_shutdown_moves_leaders_a_bounded_step_a_write(monkeypatch):
    monkeypatch.setattr(lifecycle, "MOVES_PER_WRITE", 2)
    c = Cluster()
    e1, e2 = c.up(1), c.up(2)
    tid = uuid.UUID(int=79)
    c.core.propose([encode_metadata_record(TopicRecord(name="t", topic_id=tid), 0)] + [
        encode_metadata_record(PartitionRecord(partition_id=i, topic_id=tid, replicas=[1, 2], isr=[1, 2], leader=1,
                                               leader_epoch=0, partition_epoch=0), 2) for i in range(5)], c.now)
    c.run_for(100)
    written = c.controller.writes.stats["written"]
    h = c.beat(1, e1, want_shut_down=True)
    assert (h.is_fenced, h.should_shut_down) == (False, False)
    c.run_for(200)  # the rest, a write each step
    parts = c.controller.image.topics.by_name["t"].partitions.values()
    assert all(p.leader == 2 and p.isr == (2,) for p in parts)
    assert c.controller.writes.stats["written"] - written == 3  # 2 + 2 + 1 moves
    h = c.beat(1, e1, want_shut_down=True)  # broker 2 has not read the last step yet
    assert h.should_shut_down is False
    c.beat(2, e2)
    h = c.beat(1, e1, want_shut_down=True)
    assert (h.is_fenced, h.should_shut_down) == (True, True)


def test_not_controller_from_a_follower():
    from types import SimpleNamespace
    from kraft_server.controller.write_queue import WriteQueue
    from kraft_server.raft.roles.base import Role

    q = WriteQueue()
    out = []
    q.submit("BrokerRegistration", lambda *a: None, lambda code: code, out.append)
    follower = SimpleNamespace(role=Role.FOLLOWER, epoch=3)
    assert q.poll(follower, MetadataImage(), False, 0) is False
    assert out == [ErrorCode.NOT_CONTROLLER]


def test_pure_unfence_reelects_leaderless_partitions():
    img = MetadataImage()
    img.replay(encode_metadata_record(FeatureLevelRecord(name="metadata.version", feature_level=30), 0), 0)
    img.replay(encode_metadata_record(FeatureLevelRecord(name="eligible.leader.replicas.version",
                                                         feature_level=1), 0), 1)
    for i, bid in enumerate((1, 2)):
        out = lifecycle.register(img, registration(bid), 4, 10 + i)
        for r, v in out.records:
            img.replay(encode_metadata_record(r, v), 10 + i)
    tid = uuid.UUID(int=5)
    img.replay(encode_metadata_record(TopicRecord(name="t", topic_id=tid), 0), 20)
    # single replica on broker 1, which was fenced: leaderless with ELR/LastKnownElr [1]
    img.replay(encode_metadata_record(PartitionRecord(
        partition_id=0, topic_id=tid, replicas=[1], isr=[], leader=-1, leader_epoch=3, partition_epoch=4,
        eligible_leader_replicas=[1], last_known_elr=[1]), 2), 21)
    recs = lifecycle.unfence_records(img, 1)
    change = recs[1][0]
    assert (change.leader, change.isr, change.eligible_leader_replicas, change.last_known_elr) == (1, [1], [], [])


def test_describe_cluster_on_a_client_listener_lists_registered_brokers():
    from types import SimpleNamespace
    from kraft_server.api.describe_cluster import handle_describe_cluster_request
    from wire.messages import DescribeClusterRequest

    c = Cluster()
    e1 = c.up(1)
    body = registration(2)
    body.listeners[0].name = "CLIENT"
    assert c.call("register", body, 4).error_code == 0  # fenced, with a CLIENT endpoint
    other = registration(3)
    other.listeners[0].name = "CLIENT"
    other.rack = "r1"
    r3 = c.call("register", other, 4)
    c.beat(3, r3.broker_epoch)
    view = SimpleNamespace(controller=c.controller, node_id=1, cluster_id=CLUSTER, leader_id=lambda: 1)

    def ask(version, include_fenced):
        out = []
        call = SimpleNamespace(listener="CLIENT", api_version=version, respond=out.append,
                               body=DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=include_fenced))
        handle_describe_cluster_request(call, view, controller_listener=False,
                                        advertised={"CLIENT": ("h", 9999)})
        return [(b.broker_id, b.port, b.rack, b.is_fenced) for b in out[0].brokers]

    # broker 1 has no CLIENT endpoint; broker 2 is fenced
    assert ask(2, False) == [(1, 9999, None, False), (3, 9003, "r1", False)]
    assert ask(2, True) == [(1, 9999, None, False), (2, 9002, None, True), (3, 9003, "r1", False)]
    assert e1 > 0


def test_unclean_restart_leaves_the_elr_clean_restart_does_not():
    img = MetadataImage()
    img.replay(encode_metadata_record(FeatureLevelRecord(name="metadata.version", feature_level=30), 0), 0)
    img.replay(encode_metadata_record(FeatureLevelRecord(name="eligible.leader.replicas.version",
                                                         feature_level=1), 0), 1)
    for r, v in lifecycle.register(img, registration(1), 4, 10).records:
        img.replay(encode_metadata_record(r, v), 10)
    tid = uuid.UUID(int=6)
    img.replay(encode_metadata_record(TopicRecord(name="t", topic_id=tid), 0), 20)
    img.replay(encode_metadata_record(PartitionRecord(
        partition_id=0, topic_id=tid, replicas=[1], isr=[], leader=-1, leader_epoch=3, partition_epoch=4,
        eligible_leader_replicas=[1], last_known_elr=[1]), 2), 21)
    again = registration(1, incarnation=uuid.UUID(int=999))
    unclean = lifecycle.register(img, again, 4, 30).records
    assert [type(r).__name__ for r, _ in unclean] == ["PartitionChangeRecord", "RegisterBrokerRecord"]
    assert unclean[0][0].eligible_leader_replicas == [] and unclean[0][0].isr is None
    again.previous_broker_epoch = 10  # the epoch it shut down cleanly in
    clean = lifecycle.register(img, again, 4, 30).records
    assert [type(r).__name__ for r, _ in clean] == ["RegisterBrokerRecord"]
