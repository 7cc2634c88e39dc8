"""Partition reassignment on the active controller (Kafka 4.3.1's
``ReplicationControlManager.alterPartitionReassignment``, ``PartitionReassignmentReplicas``,
``PartitionReassignmentRevert`` and the reassignment part of ``PartitionChangeBuilder``):
the replica arithmetic as a table, then the records, answers and completion through
AlterPartition on a one-voter controller driven by hand."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from kraft_server.controller.replication import reassignment_replicas as rr
from kraft_server.controller.admin_requests import alter_partition_op, create_topics_op
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.replication.reassignment import alter_reassignments_op, list_reassignments_op
from wire.errors import ErrorCode
from wire.messages import (
    AlterPartitionReassignmentsRequest, ConfigRecord, CreateTopicsRequest, ListPartitionReassignmentsRequest,
    PartitionChangeRecord,
)
from wire.messages.alter_partition_reassignments_request import ReassignablePartition, ReassignableTopic
from wire.messages.list_partition_reassignments_request import ListPartitionReassignmentsTopics
from wire.records import batch_records, decode_metadata_record, encode_metadata_record, walk

from tests.unit.controller.test_controller_brokers import Cluster
from tests.unit.controller.test_controller_topics import _alter, enveloped, run, topic


# -- the arithmetic -----------------------------------------------------------------------

@pytest.mark.parametrize("current,target,replicas,removing,adding", [
    ([1, 2, 3], [2, 3, 4], [2, 3, 4, 1], [1], [4]),
    ([1, 2, 3], [4, 5, 6], [4, 5, 6, 1, 2, 3], [1, 2, 3], [4, 5, 6]),
    ([1, 2, 3], [3, 2, 1], [3, 2, 1], [], []),
    ([1, 2, 3], [1, 2], [1, 2, 3], [3], []),
    ([3, 1], [2, 1, 4], [2, 1, 4, 3], [3], [2, 4]),
])
def test_start_orders_target_then_sorted_removing(current, target, replicas, removing, adding):
    r = rr.start(current, target)
    assert (r.replicas, r.removing, r.adding) == (replicas, removing, adding)


@pytest.mark.parametrize("replicas,removing,adding,isr,done", [
    # the adding replica has not joined
    ([2, 3, 4, 1], [1], [4], [1, 2, 3], None),
    # it joined: removing leaves replicas and ISR
    ([2, 3, 4, 1], [1], [4], [1, 2, 3, 4], ([2, 3, 4], [2, 3, 4])),
    # 4.3.1: adding as many as removing needs only the adding ones in sync (3 may lag)
    ([2, 3, 4, 1], [1], [4], [1, 2, 4], ([2, 3, 4], [2, 4])),
    # a shrink (adding fewer than removing) needs every remaining replica in sync
    ([1, 2, 3], [3], [], [1, 3], None),
    ([1, 2, 3], [3], [], [1, 2, 3], ([1, 2], [1, 2])),
    # nothing left in the ISR once removing goes: not done
    ([3, 1, 2], [1, 2], [3], [1, 2], None),
    # no reassignment
    ([1, 2], [], [], [1, 2], None),
])
def test_completion_rule_of_4_3_1(replicas, removing, adding, isr, done):
    assert rr.completed(replicas, removing, adding, isr) == done


def test_revert_drops_adding_and_falls_back_to_the_first_original_replica():
    p = SimpleNamespace(replicas=(4, 5, 1, 2), isr=(1, 2, 4), adding_replicas=(4, 5), removing_replicas=(1, 2))
    assert rr.revert(p) == rr.Revert([1, 2], [1, 2], False)
    p.isr = (4,)
    assert rr.revert(p) == rr.Revert([1, 2], [1], True)


# -- on a controller -----------------------------------------------------------------------

def cluster(n=4):
    c = Cluster()
    epochs = {b: c.up(b) for b in range(1, n + 1)}
    return c, epochs


def make_topic(c, name, assignments):
    made = run(c, create_topics_op(CreateTopicsRequest(topics=[topic(name, assignments=list(enumerate(assignments)))]), 7))
    assert made.topics[0].error_code == 0
    return made.topics[0].topic_id


def reassign(c, name, targets, version=1, allow=True):
    req = AlterPartitionReassignmentsRequest(allow_replication_factor_change=allow, topics=[
        ReassignableTopic(name=name, partitions=[ReassignablePartition(partition_index=i, replicas=r)
                                                 for i, r in targets])])
    r = run(c, alter_reassignments_op(req, version))
    return [(p.partition_index, p.error_code, p.error_message) for t in r.responses for p in t.partitions]


def listed(c, topics=None):
    req = ListPartitionReassignmentsRequest(topics=None if topics is None else [
        ListPartitionReassignmentsTopics(name=n, partition_indexes=ids) for n, ids in topics])
    r = run(c, list_reassignments_op(req))
    assert r.error_code == 0
    return [(t.name, [(p.partition_index, p.replicas, p.adding_replicas, p.removing_replicas) for p in t.partitions])
            for t in r.topics]


def last_batch(c):
    base, last, epoch, data = c.log.batches()[-1]
    return [decode_metadata_record(v).message for _, v in batch_records(data, walk(data)[0])]


def fields(r, *names):
    """Some fields of a decoded record, id lists as lists."""
    return tuple(list(v) if isinstance(v, tuple) else v for v in (getattr(r, n) for n in names))


def part(c, name, i=0):
    return c.controller.image.topics.by_name[name].partitions[i]


def isr_update(c, epochs, name, isr, i=0):
    p = part(c, name, i)
    req = _alter(p.leader, epochs[p.leader], p.topic_id, p.leader_epoch, p.partition_epoch, isr, epochs=epochs)
    req.topics[0].partitions[0].partition_index = i
    return run(c, alter_partition_op(req, 3)).topics[0].partitions[0]


def test_reassignment_adds_then_completes_when_the_new_replica_joins_the_isr():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2, 3]])
    before = part(c, "t")
    assert reassign(c, "t", [(0, [2, 3, 4])]) == [(0, 0, None)]
    (change,) = last_batch(c)
    assert isinstance(change, PartitionChangeRecord)
    assert fields(change, "replicas", "adding_replicas", "removing_replicas", "leader", "isr") == \
        ([2, 3, 4, 1], [4], [1], -2, None)  # every old replica stays: no leader epoch bump yet
    img = c.controller.image
    assert list(change.directories) == [img.brokers.get(b).record.log_dirs[0] for b in (2, 3, 4, 1)]
    p = part(c, "t")
    assert (p.leader_epoch, p.partition_epoch) == (before.leader_epoch, before.partition_epoch + 1)
    assert listed(c) == [("t", [(0, [2, 3, 4, 1], [4], [1])])]
    assert listed(c, [("t", [0, 7]), ("nope", [0])]) == [("t", [(0, [2, 3, 4, 1], [4], [1])])]
    # the leader (1, being removed) adds 4 to the ISR: the reassignment completes, 1 leaves,
    # leadership moves to the first target replica in sync; the sender learns NEW_LEADER_ELECTED
    answer = isr_update(c, epochs, "t", [1, 2, 3, 4])
    assert answer.error_code == ErrorCode.NEW_LEADER_ELECTED
    (change,) = last_batch(c)
    assert fields(change, "replicas", "isr", "leader", "adding_replicas", "removing_replicas") == \
        ([2, 3, 4], [2, 3, 4], 2, [], [])
    p = part(c, "t")
    assert (p.replicas, p.isr, p.leader, p.leader_epoch) == ((2, 3, 4), (2, 3, 4), 2, before.leader_epoch + 1)
    assert not p.adding_replicas and not p.removing_replicas
    assert listed(c) == []


def test_completion_keeping_the_leader_bumps_its_epoch_and_answers_the_new_state():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2, 3]])
    assert reassign(c, "t", [(0, [1, 2, 4])]) == [(0, 0, None)]
    answer = isr_update(c, epochs, "t", [1, 2, 3, 4])
    p = part(c, "t")
    assert (p.replicas, p.isr, p.leader, p.leader_epoch) == ((1, 2, 4), (1, 2, 4), 1, 1)
    assert (answer.error_code, answer.leader_id, answer.isr, answer.leader_epoch, answer.partition_epoch) == \
        (0, 1, [1, 2, 4], 1, p.partition_epoch)


def test_a_shrink_or_a_reorder_completes_in_the_same_record():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2, 3], [1, 2, 3]])
    assert reassign(c, "t", [(0, [1, 2]), (1, [3, 2, 1])]) == [(0, 0, None), (1, 0, None)]
    shrink, reorder = last_batch(c)
    assert fields(shrink, "replicas", "isr", "leader", "adding_replicas", "removing_replicas") == \
        ([1, 2], [1, 2], 1, None, None)  # replica 3 left: leader epoch bumped, same leader
    assert fields(reorder, "replicas", "isr", "leader") == ([3, 2, 1], None, -2)
    assert part(c, "t", 0).leader_epoch == 1 and part(c, "t", 1).leader_epoch == 0
    assert listed(c) == []
    # the same target again writes nothing
    n = len(c.log.batches())
    assert reassign(c, "t", [(1, [3, 2, 1])]) == [(1, 0, None)]
    assert all(not isinstance(r, PartitionChangeRecord) for _, _, _, data in c.log.batches()[n:]
               for r in [decode_metadata_record(v).message for _, v in batch_records(data, walk(data)[0])])


def test_cancel_reverts_and_needs_a_reassignment():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2]])
    cancel = [(0, None)]
    assert reassign(c, "t", cancel) == [(0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
                                         "No partition reassignment is in progress.")]
    assert reassign(c, "t", [(0, [3, 4])]) == [(0, 0, None)]
    assert (part(c, "t").replicas, part(c, "t").adding_replicas) == ((3, 4, 1, 2), (3, 4))
    assert isr_update(c, epochs, "t", [1, 2, 3]).error_code == 0  # 3 joined, 4 not yet
    assert reassign(c, "t", cancel) == [(0, 0, None)]
    (change,) = last_batch(c)
    assert fields(change, "replicas", "isr", "adding_replicas", "removing_replicas", "leader") == \
        ([1, 2], [1, 2], [], [], 1)  # 3 and 4 leave: epoch bump
    p = part(c, "t")
    assert (p.replicas, p.isr, p.leader) == ((1, 2), (1, 2), 1) and listed(c) == []
    assert reassign(c, "t", cancel)[0][1] == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS


def test_cancel_needing_an_unclean_election_is_refused_unless_the_topic_allows_it():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2]])
    assert reassign(c, "t", [(0, [3, 4])]) == [(0, 0, None)]
    assert isr_update(c, epochs, "t", [1, 2, 3]).error_code == 0
    # brokers 1 and 2 fenced: the ISR is only adding replicas [3], still in progress
    for b in (1, 2):
        assert c.beat(b, epochs[b], want_fence=True).is_fenced
    p = part(c, "t")
    assert (p.isr, p.leader, p.adding_replicas, p.removing_replicas) == ((3,), 3, (3, 4), (1, 2))
    assert reassign(c, "t", [(0, None)]) == [(0, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                              "Unable to revert partition assignment for t:0 because it would "
                                              "require an unclean leader election.")]
    c.core.propose([encode_metadata_record(ConfigRecord(resource_type=2, resource_name="t",
                                                        name="unclean.leader.election.enable", value="true"), 0)],
                   c.now)
    c.run_for(50)
    for b in (1, 2):  # back, so that the original replica 1 can lead
        assert not c.beat(b, epochs[b]).is_fenced
    assert reassign(c, "t", [(0, None)]) == [(0, 0, None)]
    p = part(c, "t")
    assert (p.replicas, p.isr, p.leader) == ((1, 2), (1,), 1)
    assert not p.adding_replicas and not p.removing_replicas


def test_validation_in_kafka_order():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2, 3]])
    assert reassign(c, "nope", [(0, [1])]) == [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                 "Unable to find a topic named nope.")]
    assert reassign(c, "t", [(5, [1]), (0, []), (0, [1, 9]), (0, [1, 1, 2])]) == [
        (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:5."),
        (0, ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."),
        (0, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes broker 9, but no such broker is registered."),
        (0, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes the broker 1 more than once."),
    ]
    assert len(part(c, "t").replicas) == 3
    # AllowReplicationFactorChange=false (v1): the size must stay; v0 ignores it
    assert reassign(c, "t", [(0, [1, 2])], allow=False) == [
        (0, ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 3 to 2")]
    assert reassign(c, "t", [(0, [2, 3, 4])], allow=False) == [(0, 0, None)]
    # while it runs, the factor is replicas + adding - removing (3, not 4)
    assert reassign(c, "t", [(0, [3, 4, 1, 2])], allow=False)[0][1] == ErrorCode.INVALID_REPLICATION_FACTOR
    assert reassign(c, "t", [(0, [1, 2])], version=0, allow=False) == [(0, 0, None)]


def test_a_deleted_topic_is_unknown():
    from kraft_server.controller.admin_requests import delete_topics_op
    from wire.messages import DeleteTopicsRequest

    c, epochs = cluster()
    make_topic(c, "t", [[1, 2]])
    assert reassign(c, "t", [(0, [3, 4])]) == [(0, 0, None)]
    assert run(c, delete_topics_op(DeleteTopicsRequest(topic_names=["t"], timeout_ms=30000), 5)).responses[0].error_code == 0
    assert reassign(c, "t", [(0, [1, 2])])[0][1] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert listed(c) == []


def test_fencing_keeps_the_reassignment_and_snapshots_carry_it():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2, 3]])
    assert reassign(c, "t", [(0, [2, 3, 4])]) == [(0, 0, None)]
    assert c.beat(4, epochs[4], want_fence=True).is_fenced  # an adding replica goes
    assert c.beat(1, epochs[1], want_fence=True).is_fenced  # the leader, a removing one
    p = part(c, "t")
    assert (p.replicas, p.adding_replicas, p.removing_replicas, p.isr, p.leader) == \
        ((2, 3, 4, 1), (4,), (1,), (2, 3), 2)
    img = MetadataImage()
    for value in c.controller.image.snapshot_records():
        img.replay(value)
    assert img.content() == c.controller.image.content()
    q = img.topics.by_name["t"].partitions[0]
    assert (q.adding_replicas, q.removing_replicas) == ((4,), (1,))
    # 4 back and in sync: the new leader completes the reassignment and keeps leading
    assert not c.beat(4, epochs[4]).is_fenced
    assert isr_update(c, epochs, "t", [2, 3, 4]).error_code == 0
    p = part(c, "t")
    assert (p.replicas, p.isr, p.leader) == ((2, 3, 4), (2, 3, 4), 2) and not p.removing_replicas


def test_enveloped_list_and_direct_not_controller():
    from kraft_server.api.controller_writes import submit
    from wire.headers import decode_response

    c, epochs = cluster()
    make_topic(c, "t", [[1, 2]])
    assert reassign(c, "t", [(0, [3, 4])]) == [(0, 0, None)]
    env, _ = enveloped(c, 46, 0, 77, ListPartitionReassignmentsRequest(topics=None))
    assert env.error_code == 0
    corr, body = decode_response(bytes(env.response_data), 46, 0)
    assert corr.correlation_id == 77
    assert [(t.name, [(p.partition_index, list(p.replicas)) for p in t.partitions]) for t in body.topics] == \
        [("t", [(0, [3, 4, 1, 2])])]
    # no controller here: Kafka's error response, the code on every partition
    out = []
    req = AlterPartitionReassignmentsRequest(topics=[ReassignableTopic(name="t", partitions=[
        ReassignablePartition(partition_index=0, replicas=None)])])
    submit(SimpleNamespace(controller=None), 45, 1, req, out.append)
    assert out[0].error_code == ErrorCode.NOT_CONTROLLER
    assert out[0].responses[0].partitions[0].error_code == ErrorCode.NOT_CONTROLLER


def test_a_preferred_election_during_a_reassignment_leaves_it_running():
    from kraft_server.controller.admin_requests import elect_leaders_op
    from wire.messages import ElectLeadersRequest
    from wire.messages.elect_leaders_request import TopicPartitions

    c, epochs = cluster()
    make_topic(c, "t", [[1, 2, 3]])
    assert reassign(c, "t", [(0, [2, 3, 4])]) == [(0, 0, None)]
    r = run(c, elect_leaders_op(ElectLeadersRequest(election_type=0, topic_partitions=[
        TopicPartitions(topic="t", partitions=[0])]), 2))
    assert r.replica_election_results[0].partition_result[0].error_code == 0
    p = part(c, "t")  # the first target replica leads; the reassignment is untouched
    assert (p.leader, p.replicas, p.adding_replicas, p.removing_replicas) == (2, (2, 3, 4, 1), (4,), (1,))
    assert isr_update(c, epochs, "t", [1, 2, 3, 4]).error_code == 0  # 2 completes it and keeps leading
    p = part(c, "t")
    assert (p.leader, p.replicas, p.isr) == (2, (2, 3, 4), (2, 3, 4))


# -- TimeoutMs: the alter's deadline in the controller's queue (ControllerApis) -------------

def _submit_alter(c, timeout_ms, targets):
    from kraft_server.api.controller_writes import submit

    out = []
    req = AlterPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=[ReassignableTopic(name="t", partitions=[
        ReassignablePartition(partition_index=i, replicas=r) for i, r in targets])])
    submit(SimpleNamespace(controller=c.controller), 45, 1, req, out.append)
    return out


def _stall(c):
    """An earlier write whose commit does not come (a slow quorum): the queue waits."""
    from kraft_server.controller.write_queue import Write, _Inflight, _Op

    c.controller.writes.inflight = _Inflight(_Op("stalled", None, None, None), Write([], lambda: None), 10**9,
                                             c.core.epoch)


def test_an_alter_not_started_by_its_timeout_is_request_timed_out_everywhere_and_writes_nothing():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2], [2, 3]])
    _stall(c)
    out = _submit_alter(c, 500, [(0, [3, 4]), (1, None)])
    c.cycle()  # seen: the deadline is 500 ms from now
    c.now += 499
    c.cycle()
    assert out == []
    c.now += 1
    c.cycle()
    (r,) = out
    # Kafka: a bare TimeoutException from its event queue, so no message anywhere
    assert (r.error_code, r.error_message) == (ErrorCode.REQUEST_TIMED_OUT, None)
    assert [(p.partition_index, p.error_code, p.error_message) for p in r.responses[0].partitions] == \
        [(0, ErrorCode.REQUEST_TIMED_OUT, None), (1, ErrorCode.REQUEST_TIMED_OUT, None)]
    c.controller.writes.inflight = None
    c.run_for(50)
    assert listed(c) == [] and part(c, "t").replicas == (1, 2)
    # within its deadline the same alter runs
    out = _submit_alter(c, 500, [(0, [3, 4])])
    c.run_for(50)
    assert out[0].error_code == 0 and listed(c) == [("t", [(0, [3, 4, 1, 2], [3, 4], [1, 2])])]


def test_a_timeout_of_zero_or_less_always_expires_and_an_empty_alter_is_answered_at_once():
    c, epochs = cluster()
    make_topic(c, "t", [[1, 2]])
    for timeout in (0, -1):
        out = _submit_alter(c, timeout, [(0, [3, 4])])
        c.run_for(20)
        assert out[0].error_code == ErrorCode.REQUEST_TIMED_OUT
    assert listed(c) == []
    # no topics: Kafka answers without an event, so even a controller that is not active
    from kraft_server.api.controller_writes import submit

    out = []
    submit(SimpleNamespace(controller=SimpleNamespace()), 45, 1,
           AlterPartitionReassignmentsRequest(timeout_ms=0, topics=[]), out.append)
    assert (out[0].error_code, out[0].responses, out[0].allow_replication_factor_change) == (0, [], True)
