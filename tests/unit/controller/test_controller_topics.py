"""CreateTopics decisions (validation, striped placement, the atomic batch),
AllocateProducerIds blocks and the Envelope round trip, on a one-voter controller
driven by hand and as pure functions."""
from __future__ import annotations

import random
import uuid
from collections import Counter

import pytest

from kraft_server.controller.replication.placement import Candidate, PlacementError, place
from kraft_server.controller.admin_requests import allocate_producer_ids_op, create_topics_op
from wire.errors import ErrorCode
from wire.messages import AllocateProducerIdsRequest, CreateTopicsRequest, CreateTopicsResponse
from wire.messages.create_topics_request import CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig

from tests.unit.controller.test_controller_brokers import Cluster


def topic(name, n=-1, rf=-1, configs=(), assignments=()):
    return CreatableTopic(name=name, num_partitions=n, replication_factor=rf,
                          configs=[CreatableTopicConfig(name=k, value=v) for k, v in configs],
                          assignments=[CreatableReplicaAssignment(partition_index=i, broker_ids=b)
                                       for i, b in assignments])


def run(c, op_and_fail):
    run_fn, fail = op_and_fail
    out = []
    c.controller.submit_write("test", run_fn, fail, out.append)
    for _ in range(100):
        if out:
            return out[0]
        c.run_for(5)
    raise AssertionError("no answer")


def three():
    c = Cluster()
    epochs = {b: c.up(b) for b in (1, 2, 3)}
    return c, epochs


def test_placement_stripes_leaders_and_never_repeats_a_broker():
    cands = [Candidate(i, None, False) for i in range(1, 4)]
    out = place(cands, 6, 3, random.Random(1))
    assert all(sorted(r) == [1, 2, 3] for r in out)
    assert Counter(r[0] for r in out) == {1: 2, 2: 2, 3: 2}


def test_placement_spreads_over_racks_and_prefers_unfenced():
    cands = [Candidate(1, "a", False), Candidate(2, "a", False), Candidate(3, "b", False),
             Candidate(4, "b", True)]
    for r in place(cands, 8, 2, random.Random(3)):
        racks = {c.rack for c in cands if c.broker_id in r}
        assert racks == {"a", "b"}
        assert r[0] != 4  # a fenced broker never comes first
    with pytest.raises(PlacementError):
        place(cands, 1, 5)
    with pytest.raises(PlacementError):
        place([Candidate(1, None, True)], 1, 1)


def test_create_topics_one_atomic_batch_answered_after_commit():
    c, _ = three()
    req = CreateTopicsRequest(topics=[topic("t", 6, 3, configs=[("min.insync.replicas", "2")])])
    r = run(c, create_topics_op(req, 7, random.Random(5)))
    res = r.topics[0]
    assert (res.error_code, res.num_partitions, res.replication_factor) == (0, 6, 3)
    img = c.controller.image
    t = img.topics.by_name["t"]
    assert t.topic_id == res.topic_id and len(t.partitions) == 6
    assert img.configs[(2, "t", "min.insync.replicas")] == "2"
    # TopicRecord, ConfigRecord, ClearElrRecord (a min.insync.replicas config with ELR
    # on, as Kafka 4.3.1 writes it), PartitionRecords
    assert c.data_batches()[-1] == [(2, 0), (4, 0), (28, 0)] + [(3, 2)] * 6
    for p in t.partitions.values():
        assert p.leader == p.isr[0] == p.replicas[0] and sorted(p.isr) == [1, 2, 3]
        assert (p.leader_epoch, p.partition_epoch) == (0, 0)
        assert p.directories == tuple(img.brokers.get(b).record.log_dirs[0] for b in p.replicas)


@pytest.mark.parametrize("t,code", [
    (topic("a", 1, 4), ErrorCode.INVALID_REPLICATION_FACTOR),
    (topic("a", 0, 1), ErrorCode.INVALID_PARTITIONS),
    (topic("a", 1, 0), ErrorCode.INVALID_REPLICATION_FACTOR),
    (topic("bad name", 1, 1), ErrorCode.INVALID_TOPIC_EXCEPTION),
    (topic("__cluster_metadata", 1, 1), ErrorCode.INVALID_REQUEST),
    (topic("a", 1, 1, configs=[("x", None)]), ErrorCode.INVALID_CONFIG),
    (topic("a", 1, 1, assignments=[(0, [1])]), ErrorCode.INVALID_REQUEST),
    (topic("a", assignments=[(0, [1, 1])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    (topic("a", assignments=[(0, [9])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    (topic("a", assignments=[(1, [1])]), ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    (topic("a", 10_001, 1), ErrorCode.POLICY_VIOLATION),
])
def test_create_topics_refusals(t, code):
    c, _ = three()
    r = run(c, create_topics_op(CreateTopicsRequest(topics=[t]), 7))
    assert r.topics[0].error_code == code
    assert len(c.controller.image.topics) == 0


def test_existing_colliding_duplicate_and_validate_only():
    c, _ = three()
    assert run(c, create_topics_op(CreateTopicsRequest(topics=[topic("a.b", 1, 1)]), 7)).topics[0].error_code == 0
    r = run(c, create_topics_op(CreateTopicsRequest(topics=[topic("a.b", 1, 1), topic("a_b", 1, 1),
                                                            topic("d", 1, 1), topic("d", 1, 1),
                                                            topic("ok", assignments=[(0, [2, 3])])]), 7))
    codes = [t.error_code for t in r.topics]
    assert codes == [ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.INVALID_TOPIC_EXCEPTION,
                     ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, 0]
    assert c.controller.image.topics.by_name["ok"].partitions[0].replicas == (2, 3)
    before = c.controller.image.offset
    r = run(c, create_topics_op(CreateTopicsRequest(topics=[topic("v", 2, 2)], validate_only=True), 7))
    assert r.topics[0].error_code == 0 and "v" not in c.controller.image.topics.by_name
    assert c.controller.image.offset - before < 3  # nothing but NoOps written


def test_allocate_producer_ids_hands_out_consecutive_blocks():
    c, epochs = three()
    a = run(c, allocate_producer_ids_op(AllocateProducerIdsRequest(broker_id=1, broker_epoch=epochs[1])))
    b = run(c, allocate_producer_ids_op(AllocateProducerIdsRequest(broker_id=2, broker_epoch=epochs[2])))
    assert (a.error_code, a.producer_id_start, a.producer_id_len) == (0, 0, 1000)
    assert (b.producer_id_start, c.controller.image.next_producer_id) == (1000, 2000)
    stale = run(c, allocate_producer_ids_op(AllocateProducerIdsRequest(broker_id=1, broker_epoch=epochs[1] + 1)))
    assert stale.error_code == ErrorCode.STALE_BROKER_EPOCH


def enveloped(c, api_key, version, correlation_id, body):
    """``body`` forwarded in an Envelope to ``c``'s controller: (the EnvelopeResponse, the
    call, so that another body can go the same way)."""
    from types import SimpleNamespace
    from kraft_server.api.controller_writes import handle_envelope_request
    from wire.headers import encode_request
    from wire.messages import EnvelopeRequest

    inner = encode_request(api_key, version, correlation_id, body, "adminclient-1")[4:]
    answers = []
    call = SimpleNamespace(body=EnvelopeRequest(request_data=inner, request_principal=b"\x00\x00",
                                                client_host_address=b"\x7f\x00\x00\x01"),
                           done=False, respond=answers.append, inner=inner, answers=answers,
                           listener="CONTROLLER", principal="User:ANONYMOUS")
    handle_envelope_request(call, SimpleNamespace(controller=c.controller))
    for _ in range(100):
        if answers:
            break
        c.run_for(5)
    return answers[0], call


def test_envelope_unwraps_create_topics_and_wraps_the_answer():
    from types import SimpleNamespace
    from kraft_server.api.controller_writes import handle_envelope_request
    from wire.headers import decode_response
    from wire.messages import EnvelopeRequest

    c, _ = three()
    env, call = enveloped(c, 19, 7, 4242, CreateTopicsRequest(topics=[topic("env", 2, 3)]))
    inner, answers = call.inner, call.answers
    assert env.error_code == 0
    data = bytes(env.response_data)
    corr, body = decode_response(data, 19, 7)
    assert corr.correlation_id == 4242 and body.topics[0].error_code == 0 and body.topics[0].num_partitions == 2
    # an API we do not serve inside an envelope
    answers.clear()
    call.body = EnvelopeRequest(request_data=b"\x00\x03" + inner[2:])  # key 3, Metadata: never forwarded
    handle_envelope_request(call, SimpleNamespace(controller=c.controller))
    assert answers[0].error_code == ErrorCode.UNSUPPORTED_VERSION


def test_delete_topics_by_name_and_id_in_one_batch():
    from kraft_server.controller.admin_requests import delete_topics_op
    from wire.messages import DeleteTopicsRequest
    from wire.messages.delete_topics_request import DeleteTopicState

    c, _ = three()
    made = run(c, create_topics_op(CreateTopicsRequest(topics=[topic("a", 2, 1, configs=[("retention.ms", "1")]),
                                                               topic("b", 1, 1), topic("c", 1, 1)]), 7))
    ids = {t.name: t.topic_id for t in made.topics}
    r = run(c, delete_topics_op(DeleteTopicsRequest(topics=[
        DeleteTopicState(name="a"), DeleteTopicState(topic_id=ids["b"]), DeleteTopicState(name="zz"),
        DeleteTopicState(topic_id=uuid.UUID(int=99)), DeleteTopicState(name="c", topic_id=ids["c"])],
        timeout_ms=30000), 6))
    assert [(x.name, x.error_code) for x in r.responses] == [
        ("a", 0), ("b", 0), ("zz", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (None, ErrorCode.UNKNOWN_TOPIC_ID),
        ("c", ErrorCode.INVALID_REQUEST)]
    assert r.responses[1].topic_id == ids["b"]
    img = c.controller.image
    assert set(img.topics.by_name) == {"c"} and not any(k[1] == "a" for k in img.configs)
    assert c.data_batches()[-1] == [(9, 0), (9, 0)]
    old = run(c, delete_topics_op(DeleteTopicsRequest(topic_names=["c", "c"], timeout_ms=30000), 5))
    assert [x.error_code for x in old.responses] == [ErrorCode.INVALID_REQUEST] * 2


def _alter(broker, epoch, tid, leader_epoch, partition_epoch, isr, version=3, epochs=None, lrs=0):
    from wire.messages import AlterPartitionRequest
    from wire.messages.alter_partition_request import BrokerState, PartitionData, TopicData

    part = PartitionData(partition_index=0, leader_epoch=leader_epoch, partition_epoch=partition_epoch,
                         leader_recovery_state=lrs)
    if version >= 3:
        part.new_isr_with_epochs = [BrokerState(broker_id=b, broker_epoch=(epochs or {}).get(b, -1)) for b in isr]
    else:
        part.new_isr = list(isr)
    return AlterPartitionRequest(broker_id=broker, broker_epoch=epoch,
                                 topics=[TopicData(topic_id=tid, partitions=[part])])


def test_alter_partition_shrinks_and_expands_the_isr_with_kafka_error_order():
    from kraft_server.controller.admin_requests import alter_partition_op

    c, epochs = three()
    made = run(c, create_topics_op(CreateTopicsRequest(topics=[topic("t", assignments=[(0, [1, 2, 3])])]), 7))
    tid = made.topics[0].topic_id

    def alter(req, version=3):
        return run(c, alter_partition_op(req, version))

    # shrink to [1, 2] (min ISR 1: no ELR): partition epoch +1, leader epoch kept
    r = alter(_alter(1, epochs[1], tid, 0, 0, [1, 2], epochs=epochs))
    p = r.topics[0].partitions[0]
    assert (r.error_code, p.error_code, p.leader_id, p.isr, p.leader_epoch, p.partition_epoch) == (0, 0, 1, [1, 2], 0, 1)
    q = c.controller.image.topics.by_name["t"].partitions[0]
    assert (q.isr, q.leader_epoch, q.partition_epoch) == ((1, 2), 0, 1)
    # the same request again: its partition epoch is now stale
    assert alter(_alter(1, epochs[1], tid, 0, 0, [1, 2])).topics[0].partitions[0].error_code == ErrorCode.INVALID_UPDATE_VERSION
    # errors in Kafka's order
    cases = [
        (_alter(1, epochs[1] + 5, tid, 0, 1, [1]), "top", ErrorCode.STALE_BROKER_EPOCH),
        (_alter(1, epochs[1], uuid.UUID(int=12345), 0, 1, [1]), "part", ErrorCode.UNKNOWN_TOPIC_ID),
        (_alter(1, epochs[1], tid, 1, 1, [1]), "part", ErrorCode.NOT_CONTROLLER),
        (_alter(1, epochs[1], tid, 0, 2, [1]), "part", ErrorCode.NOT_CONTROLLER),
        (_alter(2, epochs[2], tid, 0, 1, [1, 2]), "part", ErrorCode.INVALID_REQUEST),  # not the leader
        (_alter(1, epochs[1], tid, 0, 1, [1, 9]), "part", ErrorCode.INVALID_REQUEST),
        (_alter(1, epochs[1], tid, 0, 1, [2, 3]), "part", ErrorCode.INVALID_REQUEST),
        (_alter(1, epochs[1], tid, 0, 1, [1, 3], epochs={3: epochs[3] + 1}), "part", ErrorCode.INELIGIBLE_REPLICA),
        (_alter(1, epochs[1], tid, 0, 1, [1], lrs=1), "part", ErrorCode.INVALID_REQUEST),
    ]
    for req, where, code in cases:
        r = alter(req)
        got = r.error_code if where == "top" else r.topics[0].partitions[0].error_code
        assert got == code, (req, got)
    # expand back with v2 (no broker epochs)
    r = alter(_alter(1, epochs[1], tid, 0, 1, [1, 2, 3], version=2), version=2)
    assert r.topics[0].partitions[0].isr == [1, 2, 3]
    assert c.controller.image.topics.by_name["t"].partitions[0].partition_epoch == 2


def test_alter_partition_below_min_isr_fills_the_elr():
    from kraft_server.controller.admin_requests import alter_partition_op

    c, epochs = three()
    made = run(c, create_topics_op(CreateTopicsRequest(topics=[topic(
        "t", assignments=[(0, [1, 2, 3])], configs=[("min.insync.replicas", "2")])]), 7))
    tid = made.topics[0].topic_id
    run(c, alter_partition_op(_alter(1, epochs[1], tid, 0, 0, [1]), 3))
    q = c.controller.image.topics.by_name["t"].partitions[0]
    assert (q.isr, q.eligible_leader_replicas) == ((1,), (2, 3))
    run(c, alter_partition_op(_alter(1, epochs[1], tid, 0, 1, [1, 2]), 3))
    q = c.controller.image.topics.by_name["t"].partitions[0]
    assert (q.isr, q.eligible_leader_replicas) == ((1, 2), None)


def test_create_partitions_grows_a_topic_at_its_replication_factor():
    from kraft_server.controller.admin_requests import create_partitions_op
    from wire.messages import CreatePartitionsRequest
    from wire.messages.create_partitions_request import CreatePartitionsAssignment, CreatePartitionsTopic

    c, _ = three()
    run(c, create_topics_op(CreateTopicsRequest(topics=[topic("t", 2, 2), topic("u", 1, 1)]), 7))
    r = run(c, create_partitions_op(CreatePartitionsRequest(topics=[
        CreatePartitionsTopic(name="t", count=5, assignments=None),
        CreatePartitionsTopic(name="u", count=3, assignments=[CreatePartitionsAssignment(broker_ids=[3]),
                                                              CreatePartitionsAssignment(broker_ids=[2])]),
        CreatePartitionsTopic(name="zz", count=3, assignments=None)], timeout_ms=30000), 3))
    assert [(x.name, x.error_code) for x in r.results] == [("t", 0), ("u", 0),
                                                           ("zz", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    img = c.controller.image
    t = img.topics.by_name["t"]
    assert sorted(t.partitions) == [0, 1, 2, 3, 4] and all(len(p.replicas) == 2 for p in t.partitions.values())
    assert [img.topics.by_name["u"].partitions[i].replicas for i in (1, 2)] == [(3,), (2,)]
    bad = run(c, create_partitions_op(CreatePartitionsRequest(topics=[
        CreatePartitionsTopic(name="t", count=5, assignments=None),
        CreatePartitionsTopic(name="u", count=4, assignments=[CreatePartitionsAssignment(broker_ids=[1, 2])])],
        timeout_ms=30000), 3))
    assert [x.error_code for x in bad.results] == [ErrorCode.INVALID_PARTITIONS, ErrorCode.INVALID_REPLICA_ASSIGNMENT]


def test_unregister_broker_takes_it_out_of_isrs_then_removes_it():
    from kraft_server.controller.admin_requests import unregister_broker_op
    from wire.messages import UnregisterBrokerRequest

    c, _ = three()
    run(c, create_topics_op(CreateTopicsRequest(topics=[topic("t", assignments=[(0, [1, 2, 3])])]), 7))
    assert run(c, unregister_broker_op(UnregisterBrokerRequest(broker_id=9))).error_code == \
        ErrorCode.BROKER_ID_NOT_REGISTERED
    r = run(c, unregister_broker_op(UnregisterBrokerRequest(broker_id=1)))
    assert r.error_code == 0
    img = c.controller.image
    assert img.brokers.get(1) is None
    p = img.topics.by_name["t"].partitions[0]
    assert p.isr == (2, 3) and p.leader == 2
    assert c.data_batches()[-1] == [(5, 2), (1, 0)]


def test_elect_leaders_preferred_and_unclean():
    from kraft_server.controller.admin_requests import elect_leaders_op
    from kraft_server.controller.replication.elections import imbalanced
    from wire.messages import ElectLeadersRequest
    from wire.messages.elect_leaders_request import TopicPartitions
    from tests.unit.controller.test_controller_brokers import heartbeat

    c, epochs = three()
    run(c, create_topics_op(CreateTopicsRequest(topics=[topic("t", assignments=[(0, [1, 2, 3]), (1, [2, 3, 1])])]), 7))
    # broker 1 fences itself: partition 0 moves to 2
    c.call("heartbeat", heartbeat(1, epochs[1], c.controller.image.offset, want_fence=True), 2)
    assert c.controller.image.topics.by_name["t"].partitions[0].leader == 2
    req = ElectLeadersRequest(election_type=0, topic_partitions=[TopicPartitions(topic="t", partitions=[0, 1, 7])])
    r = run(c, elect_leaders_op(req, 2))
    assert [(x.partition_id, x.error_code) for x in r.replica_election_results[0].partition_result] == [
        (0, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE), (1, ErrorCode.ELECTION_NOT_NEEDED),
        (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    # back in the ISR (AlterPartition would do this), unfenced: the preferred election moves it back
    from kraft_server.controller.admin_requests import alter_partition_op
    from tests.unit.controller.test_controller_topics import _alter
    c.call("heartbeat", heartbeat(1, epochs[1], c.controller.image.offset), 2)
    p = c.controller.image.topics.by_name["t"].partitions[0]
    run(c, alter_partition_op(_alter(2, epochs[2], p.topic_id, p.leader_epoch, p.partition_epoch, [2, 3, 1]), 3))
    assert len(imbalanced(c.controller.image)) == 1
    r = run(c, elect_leaders_op(ElectLeadersRequest(election_type=0, topic_partitions=None), 2))
    assert [(x.topic, [(y.partition_id, y.error_code) for y in x.partition_result]) for x in r.replica_election_results] \
        == [("t", [(0, 0)])]  # partitions needing no election are left out
    p = c.controller.image.topics.by_name["t"].partitions[0]
    assert (p.leader, p.leader_epoch) == (1, 2)
    unclean = run(c, elect_leaders_op(ElectLeadersRequest(election_type=1, topic_partitions=[
        TopicPartitions(topic="t", partitions=[0])]), 2))
    assert unclean.replica_election_results[0].partition_result[0].error_code == ErrorCode.ELECTION_NOT_NEEDED


def test_unclean_election_picks_the_first_active_replica_as_recovering():
    from kraft_server.controller.replication.elections import UNCLEAN, elect
    from wire.messages import PartitionRecord

    c, _ = three()
    p = PartitionRecord(partition_id=0, topic_id=uuid.UUID(int=3), replicas=[9, 2, 3], isr=[9], leader=-1,
                        leader_epoch=4, partition_epoch=5)
    error, record = elect(c.controller.image, p, UNCLEAN)
    assert error == 0 and (record.leader, record.isr, record.leader_recovery_state) == (2, [2], 1)
    p.isr = [3]
    error, record = elect(c.controller.image, p, UNCLEAN)
    assert (record.leader, record.isr, record.leader_recovery_state) == (3, None, -1)  # clean: from the ISR
    p.replicas, p.isr = [9, 8], [9]
    assert elect(c.controller.image, p, UNCLEAN) == (ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, None)


def test_the_periodic_task_moves_leaders_back_to_their_preferred_replica():
    from kraft_server.controller.admin_requests import alter_partition_op
    from tests.unit.controller.test_controller_brokers import heartbeat

    c, epochs = three()
    c.controller.settings.leader_balance_interval_ms = 2000
    c.controller.next_task_ms.clear()  # re-arm with the shorter interval
    run(c, create_topics_op(CreateTopicsRequest(topics=[topic("t", assignments=[(0, [1, 2, 3])])]), 7))
    c.call("heartbeat", heartbeat(1, epochs[1], c.controller.image.offset, want_fence=True), 2)
    c.call("heartbeat", heartbeat(1, epochs[1], c.controller.image.offset), 2)
    p = c.controller.image.topics.by_name["t"].partitions[0]
    run(c, alter_partition_op(_alter(2, epochs[2], p.topic_id, p.leader_epoch, p.partition_epoch, [2, 3, 1]), 3))
    assert c.controller.image.topics.by_name["t"].partitions[0].leader == 2
    c.run_for(2500)
    assert c.controller.image.topics.by_name["t"].partitions[0].leader == 1


def test_envelope_on_a_non_active_controller_is_an_envelope_not_controller():
    from types import SimpleNamespace
    from kraft_server.api.controller_writes import handle_envelope_request
    from kraft_server.controller.write_queue import WriteQueue
    from kraft_server.raft.roles.base import Role
    from wire.headers import encode_request
    from wire.messages import EnvelopeRequest

    queue = WriteQueue()
    controller = SimpleNamespace(submit_write=queue.submit, settings=None)
    inner = encode_request(19, 7, 5, CreateTopicsRequest(topics=[topic("x", 1, 1)]), "admin")[4:]
    answers = []
    call = SimpleNamespace(body=EnvelopeRequest(request_data=inner), done=False, respond=answers.append,
                           listener="CONTROLLER", principal="User:ANONYMOUS")
    handle_envelope_request(call, SimpleNamespace(controller=controller))
    queue.poll(SimpleNamespace(role=Role.FOLLOWER, epoch=2), None, False, 0)
    assert (answers[0].error_code, answers[0].response_data) == (ErrorCode.NOT_CONTROLLER, None)


def test_the_unclean_task_elects_leaderless_partitions_of_topics_that_allow_it():
    from kraft_server.controller.image import records as rec
    from tests.unit.controller.test_controller_brokers import heartbeat

    c, epochs = three()
    c.controller.settings.unclean_election_interval_ms = 2000
    c.controller.next_task_ms.clear()
    run(c, create_topics_op(CreateTopicsRequest(topics=[
        topic("dirty", assignments=[(0, [1, 2])]), topic("clean", assignments=[(0, [1, 2])])]), 7))
    # 2 leaves the ISRs (fenced, then back), then 1 is fenced: both partitions lose their leader
    c.call("heartbeat", heartbeat(2, epochs[2], c.controller.image.offset, want_fence=True), 2)
    c.call("heartbeat", heartbeat(2, epochs[2], c.controller.image.offset), 2)
    c.call("heartbeat", heartbeat(1, epochs[1], c.controller.image.offset, want_fence=True), 2)
    img = c.controller.image
    assert [img.topics.by_name[n].partitions[0].leader for n in ("dirty", "clean")] == [-1, -1]
    # unclean election allowed afterwards (what kafka-configs --alter would write)
    c.core.propose([rec.config(2, "dirty", "unclean.leader.election.enable", "true")], c.now)
    c.run_for(2500)
    dirty = c.controller.image.topics.by_name["dirty"].partitions[0]
    assert (dirty.leader, dirty.isr, dirty.leader_recovery_state) == (2, (2,), 1)
    assert c.controller.image.topics.by_name["clean"].partitions[0].leader == -1


def test_fencing_elects_uncleanly_for_topics_that_allow_it():
    from tests.unit.controller.test_controller_brokers import heartbeat

    c, epochs = three()
    run(c, create_topics_op(CreateTopicsRequest(topics=[
        topic("dirty", assignments=[(0, [1, 2])], configs=[("unclean.leader.election.enable", "true")]),
        topic("clean", assignments=[(0, [1, 2])])]), 7))
    c.call("heartbeat", heartbeat(2, epochs[2], c.controller.image.offset, want_fence=True), 2)
    c.call("heartbeat", heartbeat(2, epochs[2], c.controller.image.offset), 2)  # back, not in the ISRs
    c.call("heartbeat", heartbeat(1, epochs[1], c.controller.image.offset, want_fence=True), 2)
    img = c.controller.image
    dirty, clean = (img.topics.by_name[n].partitions[0] for n in ("dirty", "clean"))
    assert (dirty.leader, dirty.isr, dirty.leader_recovery_state) == (2, (2,), 1)
    assert (clean.leader, clean.isr) == (-1, ())
