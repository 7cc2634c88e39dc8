"""AssignReplicasToDirs (key 73, v0): a JBOD broker names the directory of each of its
replicas; the controller answers per partition in Kafka's order and writes a
PartitionChangeRecord with Directories, on a one-voter controller driven by hand."""
from __future__ import annotations

import uuid

from kraft_server.api.registry import CONTROLLER_APIS
from kraft_server.controller.admin_requests import assign_dirs_op, create_topics_op
from kraft_server.controller.replication.assign_dirs import assign_dirs
from wire.errors import ErrorCode
from wire.messages import AssignReplicasToDirsRequest, CreateTopicsRequest
from wire.messages.assign_replicas_to_dirs_request import DirectoryData, PartitionData, TopicData

from tests.unit.controller.test_controller_brokers import Cluster
from tests.unit.controller.test_controller_topics import run, topic

UNASSIGNED = uuid.UUID(int=1)


def dirs_of(b):
    return [uuid.UUID(int=(b << 64) | 10), uuid.UUID(int=(b << 64) | 11)]


def jbod_cluster():
    """Brokers 1-3 with two log dirs each; topic t: 2 partitions on [1, 2] and [2, 1]."""
    c = Cluster()
    epochs = {}
    for b in (1, 2, 3):
        r = c.register(b, dirs=dirs_of(b))
        assert r.error_code == 0
        assert not c.beat(b, r.broker_epoch, cordoned=[]).is_fenced
        epochs[b] = r.broker_epoch
    req = CreateTopicsRequest(topics=[topic("t", assignments=[(0, [1, 2]), (1, [2, 1])])])
    res = run(c, create_topics_op(req, 7)).topics[0]
    assert res.error_code == 0
    return c, epochs, res.topic_id


def request(broker, epoch, entries):
    """entries: [(dir, [(topic id, [partitions])])]"""
    return AssignReplicasToDirsRequest(broker_id=broker, broker_epoch=epoch, directories=[
        DirectoryData(id=d, topics=[TopicData(topic_id=t, partitions=[PartitionData(partition_index=p)
                                                                      for p in ps]) for t, ps in topics])
        for d, topics in entries])


def errors(resp):
    return {(t.topic_id, p.partition_index): p.error_code
            for d in resp.directories for t in d.topics for p in t.partitions}


def test_advertised_on_the_controller_listener():
    assert CONTROLLER_APIS[AssignReplicasToDirsRequest.API_KEY] == (0, 0)


def test_several_dirs_start_unassigned_and_an_assignment_writes_directories():
    c, epochs, tid = jbod_cluster()
    p0 = c.controller.image.topics.by_id[tid].partitions[0]
    assert p0.directories == (UNASSIGNED, UNASSIGNED)  # more than one dir: UNASSIGNED
    d = dirs_of(2)[1]
    resp = run(c, assign_dirs_op(request(2, epochs[2], [(d, [(tid, [0, 1])])])))
    assert resp.error_code == 0 and set(errors(resp).values()) == {0}
    parts = c.controller.image.topics.by_id[tid].partitions
    assert parts[0].directories == (UNASSIGNED, d)  # broker 2 is replica #1 of partition 0
    assert parts[1].directories == (d, UNASSIGNED)
    assert parts[0].leader_epoch == 0 and parts[0].partition_epoch == 1  # a change, not a new leader
    assert c.data_batches()[-1] == [(5, 2), (5, 2)]
    # the same assignment again changes nothing and writes nothing
    before = c.controller.image.offset
    resp = run(c, assign_dirs_op(request(2, epochs[2], [(d, [(tid, [0, 1])])])))
    assert set(errors(resp).values()) == {0}
    c.run_for(20)
    assert c.data_batches()[-1] == [(5, 2), (5, 2)] and c.controller.image.offset >= before


def test_errors_in_kafka_order():
    c, epochs, tid = jbod_cluster()
    d = dirs_of(3)[0]
    unknown = uuid.UUID(int=999)
    resp = run(c, assign_dirs_op(request(3, epochs[3], [(d, [(unknown, [0]), (tid, [0, 7])])])))
    assert errors(resp) == {(unknown, 0): ErrorCode.UNKNOWN_TOPIC_ID,
                            (tid, 0): ErrorCode.NOT_LEADER_OR_FOLLOWER,  # 3 is not a replica
                            (tid, 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    stale = run(c, assign_dirs_op(request(3, epochs[3] + 1, [(d, [(tid, [0])])])))
    assert stale.error_code == ErrorCode.STALE_BROKER_EPOCH and stale.directories == []


def test_pure_function_builds_on_earlier_entries_for_one_partition():
    c, epochs, tid = jbod_cluster()
    img = c.controller.image
    a, b = dirs_of(1)
    # broker 1 names partition 0 in dir a, then in dir b: the last one wins, one record
    resp, records = assign_dirs(img, request(1, epochs[1], [(a, [(tid, [0])]), (b, [(tid, [0])])]))
    assert set(errors(resp).values()) == {0}
    assert len(records) == 1 and records[0][0].directories == [b, UNASSIGNED]
