"""Admin answers of the active controller, ours against a live Apache Kafka
controller (issue 26's gaps).

CreateTopics' configs list (v5+):
the same bytes to a 1-voter quorum of each, both with the same properties file settings
(topic configs' broker fallbacks), the same dynamic broker configs (cluster default and
this node's), one broker registered and unfenced, then the same CreateTopics requests.
What must agree, topic by topic: the error code and message, partition count,
replication factor, TopicConfigErrorCode and the whole configs list (names in order,
values, read-only, source, sensitive), for a created topic, a validateOnly one, one Kafka
refuses (an empty list), one setting an internal config (Kafka accepts it: found here),
and a v4 request (no configs on the wire).

AlterPartitionReassignments' TimeoutMs: the alter's deadline in the controller's queue,
so a TimeoutMs of 0 always expires (REQUEST_TIMED_OUT at the top and on each partition,
no message), while one in time is carried out. The same for CreateTopics (validateOnly
too), DeleteTopics (by name, v4 and v6), CreatePartitions and ElectLeaders (named
partitions, v0, null = all): every part REQUEST_TIMED_OUT with no message, ElectLeaders
at the top too from v1; an empty request is answered as usual (Kafka queues no event)."""
from __future__ import annotations

import uuid

import pytest

from kraft_server.common.features import SUPPORTED
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, _roundtrip, wait_for
from tools.kafka_dist.controller import KafkaController
from wire.messages import BrokerHeartbeatRequest, BrokerRegistrationRequest, CreateTopicsRequest
from wire.messages import AlterPartitionReassignmentsRequest, IncrementalAlterConfigsRequest
from wire.messages.alter_partition_reassignments_request import ReassignablePartition, ReassignableTopic
from wire.messages.broker_registration_request import Feature, Listener
from wire.messages.create_topics_request import CreatableTopic, CreatableTopicConfig
from wire.messages.incremental_alter_configs_request import AlterableConfig, AlterConfigsResource
from wire.messages import CreatePartitionsRequest, DeleteTopicsRequest, ElectLeadersRequest
from wire.messages.create_partitions_request import CreatePartitionsTopic
from wire.messages.delete_topics_request import DeleteTopicState
from wire.messages.elect_leaders_request import TopicPartitions as ElectTopic

pytestmark = pytest.mark.java
CLUSTER = "Q3JlYXRlQ29uZmlnc0RpZmY"
NODE = 1
BROKER = 100
# topic configs fall back to these (STATIC_BROKER_CONFIG), and to the dynamic ones below
STATIC = {"log.retention.hours": "48", "log.roll.ms": "3600000", "log.segment.bytes": "4194304",
          "broker.session.timeout.ms": "60000"}
DYNAMIC = {"": [("log.segment.bytes", "2097152"), ("log.retention.minutes", "30")],
           str(NODE): [("log.cleaner.delete.retention.ms", "1000")]}
# what a broker of the release our controller follows offers (4.4.0: metadata.version to 33)
FEATURES = tuple((name, lo, hi) for name, (lo, hi) in SUPPORTED.items())


@pytest.fixture(scope="module")
def controllers(tmp_path_factory):
    """``{"kafka": port, "ours": port}`` of two started 1-voter quorums."""
    need_jdk()
    tmp = tmp_path_factory.mktemp("create-configs")
    kafka = KafkaController(tmp / "kafka", node_id=NODE, cluster_id=CLUSTER, overrides=STATIC)
    (tmp / "ours").mkdir()
    ours = OurNode(tmp / "ours", node_id=NODE, extra=tuple(f"{k}={v}" for k, v in STATIC.items()))
    try:
        ours.format_with_ours(CLUSTER)
        ours.start()
        kafka.start_ready()
        ours.wait_leader()
        ports = {"kafka": kafka.port, "ours": ours.port}
        for port in ports.values():  # one broker, and the dynamic configs topic configs fall back to
            _broker_up(port)
            assert _set_dynamic(port) == [("", 0), (str(NODE), 0)]
        yield ports
    finally:
        kafka.close()
        ours.kill()


def _broker_up(port: int) -> None:
    """BrokerRegistration v4 of one broker with one log dir, then heartbeats until the
    controller unfences it."""
    r = _roundtrip(port, BrokerRegistrationRequest(
        broker_id=BROKER, cluster_id=CLUSTER, incarnation_id=uuid.uuid4(),
        listeners=[Listener(name="PLAINTEXT", host="127.0.0.1", port=9, security_protocol=0)],
        features=[Feature(name=n, min_supported_version=lo, max_supported_version=hi) for n, lo, hi in FEATURES],
        rack=None, log_dirs=[uuid.uuid4()], previous_broker_epoch=-1), 4)
    assert r.error_code == 0, r

    def unfenced():
        h = _roundtrip(port, BrokerHeartbeatRequest(broker_id=BROKER, broker_epoch=r.broker_epoch,
                                                     current_metadata_offset=1 << 62), 1)
        return h.error_code == 0 and not h.is_fenced
    wait_for(unfenced, 30, f"broker {BROKER} unfenced")


def _set_dynamic(port: int):
    r = _roundtrip(port, IncrementalAlterConfigsRequest(resources=[
        AlterConfigsResource(resource_type=4, resource_name=name, configs=[
            AlterableConfig(name=k, config_operation=0, value=v) for k, v in pairs])
        for name, pairs in DYNAMIC.items()]), 1)
    # sorted: Kafka's controller answers the resources in a hash map's order, which can change
    # from one JVM to the next (a resource type's hash is the enum's identity hash)
    return sorted((x.resource_name, x.error_code) for x in r.responses)


def _topic(name, configs=()):
    return CreatableTopic(name=name, num_partitions=2, replication_factor=1,
                          configs=[CreatableTopicConfig(name=k, value=v) for k, v in configs])


REQUESTS = [  # (version, validate_only, topics)
    (7, False, [_topic("t", [("cleanup.policy", "compact"), ("max.message.bytes", "2000000"),
                             ("retention.bytes", "123456789")])]),
    (7, True, [_topic("checked", [("segment.ms", "7200000")])]),
    (7, False, [_topic("plain"), _topic("bad", [("retention.ms", "soon")]), _topic("t"),
                _topic("internal", [("internal.segment.bytes", "1048576")])]),
    (4, False, [_topic("old", [("retention.ms", "5000")])]),
]


def _session(port: int) -> dict:
    out = {}
    for i, (version, validate_only, topics) in enumerate(REQUESTS):
        r = _roundtrip(port, CreateTopicsRequest(topics=topics, timeout_ms=30000, validate_only=validate_only),
                       version)
        out[i] = [(t.name, t.error_code, t.num_partitions, t.replication_factor, t.topic_config_error_code,
                   None if t.configs is None else
                   [(c.name, c.value, c.read_only, c.config_source, c.is_sensitive) for c in t.configs],
                   t.error_message) for t in r.topics]
    return out


def test_create_topics_lists_the_configs_kafkas_controller_lists(controllers):
    kafka, ours = _session(controllers["kafka"]), _session(controllers["ours"])
    for i in range(len(REQUESTS)):
        assert [t[0] for t in kafka[i]] == [t[0] for t in ours[i]]
        for k, o in zip(kafka[i], ours[i]):
            assert k == o, f"request {i}, topic {k[0]}:\nKafka {k}\nours  {o}"
    created = dict((t[0], t) for t in kafka[0])["t"]
    sources = {c[3] for c in created[5]}
    assert created[1] == 0 and len(created[5]) > 30 and sources == {1, 2, 3, 4, 5}  # every layer seen


def _reassign(port: int, timeout_ms: int):
    r = _roundtrip(port, AlterPartitionReassignmentsRequest(timeout_ms=timeout_ms, topics=[
        ReassignableTopic(name="r", partitions=[ReassignablePartition(partition_index=i, replicas=[BROKER])
                                                for i in (0, 1)])]), 1)
    return (r.error_code, r.error_message, [(t.name, [(p.partition_index, p.error_code, p.error_message)
                                                      for p in t.partitions]) for t in r.responses])


def test_reassignment_timeout_ms_is_the_deadline_kafkas_controller_keeps(controllers):
    answers = {}
    for side, port in controllers.items():
        made = _roundtrip(port, CreateTopicsRequest(topics=[_topic("r")], timeout_ms=30000), 7)
        assert made.topics[0].error_code == 0
        answers[side] = [_reassign(port, 0), _reassign(port, 30000)]
    assert answers["ours"] == answers["kafka"]
    expired, in_time = answers["kafka"]
    assert expired == (7, None, [("r", [(0, 7, None), (1, 7, None)])])  # REQUEST_TIMED_OUT
    assert in_time == (0, None, [("r", [(0, 0, None), (1, 0, None)])])


# -- TimeoutMs of CreateTopics, DeleteTopics, CreatePartitions and ElectLeaders: the same
# deadline in the controller's queue (0 or less expires; an empty request queues nothing)

def _parts(r):
    """(name, error code, message, ...) of each part of an answer, in order."""
    if hasattr(r, "replica_election_results"):
        return [(t.topic, [(p.partition_id, p.error_code, p.error_message) for p in t.partition_result])
                for t in r.replica_election_results]
    if hasattr(r, "responses"):  # DeleteTopics
        return [(t.name, t.error_code, t.error_message) for t in r.responses]
    if hasattr(r, "results"):  # CreatePartitions
        return [(t.name, t.error_code, t.error_message) for t in r.results]
    return [(t.name, t.error_code, t.error_message, t.num_partitions, t.replication_factor) for t in r.topics]


def _deadline_session(port: int) -> list:
    def elect(timeout_ms, partitions):
        return ElectLeadersRequest(election_type=0, timeout_ms=timeout_ms, topic_partitions=None if partitions is None
                                   else [ElectTopic(topic=t, partitions=p) for t, p in partitions])

    def grow(timeout_ms, count):
        return CreatePartitionsRequest(timeout_ms=timeout_ms, topics=[
            CreatePartitionsTopic(name="d", count=count, assignments=None)])

    def delete(timeout_ms, version):
        if version >= 6:
            return DeleteTopicsRequest(timeout_ms=timeout_ms, topics=[
                DeleteTopicState(name="d", topic_id=uuid.UUID(int=0))])
        return DeleteTopicsRequest(timeout_ms=timeout_ms, topic_names=["d"])

    steps = [  # (request, version), in order
        (CreateTopicsRequest(topics=[_topic("x"), _topic("y")], timeout_ms=0), 7),
        (CreateTopicsRequest(topics=[_topic("x")], timeout_ms=-1, validate_only=True), 7),
        (CreateTopicsRequest(topics=[], timeout_ms=0), 7),
        (CreateTopicsRequest(topics=[_topic("d")], timeout_ms=30000), 7),
        (grow(0, 3), 3), (grow(30000, 3), 3),
        (elect(0, [("d", [0, 1])]), 2), (elect(0, [("d", [0])]), 0), (elect(0, None), 2), (elect(0, []), 2),
        (elect(30000, [("d", [0, 1])]), 2),
        (delete(0, 6), 6), (delete(0, 4), 4), (DeleteTopicsRequest(timeout_ms=0, topics=[]), 6),
        (DeleteTopicsRequest(timeout_ms=0, topics=[DeleteTopicState(name=None, topic_id=uuid.UUID(int=0))]), 6),
        (delete(30000, 6), 6),
    ]
    out = []
    for body, version in steps:
        r = _roundtrip(port, body, version)
        out.append((type(body).__name__, version, getattr(r, "error_code", None), _parts(r)))
    return out


def test_timeout_ms_of_topic_writes_and_elections_is_the_deadline_kafkas_controller_keeps(controllers):
    kafka, ours = (_deadline_session(controllers[side]) for side in ("kafka", "ours"))
    for k, o in zip(kafka, ours):
        assert k == o, f"\nKafka {k}\nours  {o}"
    assert kafka[0][3] == [("x", 7, None, -1, -1), ("y", 7, None, -1, -1)]  # REQUEST_TIMED_OUT, no message
    assert kafka[3][3] == [("d", 0, None, 2, 1)] and kafka[5][3] == [("d", 0, None)]
    assert kafka[6][2:] == (7, [("d", [(0, 7, None), (1, 7, None)])])
    assert kafka[11][3] == [("d", 7, None)] and kafka[15][3] == [("d", 0, None)]
    assert kafka[14][3] == [(None, 42, "Neither topic name nor id were specified.")]  # no event: no deadline
