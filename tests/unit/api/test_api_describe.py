"""DescribeQuorum and DescribeCluster handlers, byte for byte against what a real
Kafka 4.3.1 controller answered (tests/data/net/real_controller_4.3.1.json), and
their error cases (recorded behaviour noted on each test)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraft_server.api.describe_cluster import describe_cluster_response
from kraft_server.api.describe_quorum import describe_quorum_response
from kraft_server.api.views import ListenerAddress, QuorumView, ReplicaView, VoterView
from wire.headers import decode_response, encode_response
from wire.messages import DescribeClusterRequest, DescribeQuorumRequest
from wire.messages.describe_quorum_request import PartitionData, TopicData

REAL = json.loads((Path(__file__).parents[2] / "data/net/real_controller_4.3.1.json").read_text())


def dq_request(topic="__cluster_metadata", partitions=(0,)):
    return DescribeQuorumRequest(topics=[TopicData(topic_name=topic, partitions=[
        PartitionData(partition_index=p) for p in partitions])])


def view_from_real():
    """The quorum the recorded v2 answer describes, as our view."""
    _, body = decode_response(bytes.fromhex(REAL["dq_v2"]), 55, 2)
    p = body.topics[0].partitions[0]
    v = p.current_voters[0]
    me = ReplicaView(v.replica_id, v.replica_directory_id, v.log_end_offset,
                     v.last_fetch_timestamp, v.last_caught_up_timestamp)
    node = body.nodes[0]
    voter = VoterView(node.node_id, v.replica_directory_id,
                      tuple(ListenerAddress(l.name, l.host, l.port) for l in node.listeners))
    return QuorumView(is_leader=True, leader_id=p.leader_id, epoch=p.leader_epoch,
                      high_watermark=p.high_watermark, voters=(me,), voter_nodes=(voter,),
                      committed_voters=(me,)), me


@pytest.mark.parametrize("version", [1, 2])
def test_describe_quorum_matches_kafka_byte_for_byte(version):
    view, me = view_from_real()
    frame = bytes.fromhex(REAL[f"dq_v{version}"])
    _, real_body = decode_response(frame, 55, version)
    rs = real_body.topics[0].partitions[0].current_voters[0]
    # Same timestamps as the recorded answer (they are "now" on the leader).
    view = QuorumView(**{**view.__dict__, "voters": (ReplicaView(
        me.replica_id, me.directory_id, me.log_end_offset, rs.last_fetch_timestamp,
        rs.last_caught_up_timestamp),)})
    ours = describe_quorum_response(version, dq_request(), view, node_id=1)
    assert encode_response(55, version, 12, ours)[4:] == frame


def test_describe_quorum_v0_matches_kafka():
    view, _ = view_from_real()
    frame = bytes.fromhex(REAL["dq_v0"])
    ours = describe_quorum_response(0, dq_request(), view, node_id=1)
    assert encode_response(55, 0, 12, ours)[4:] == frame


def test_describe_quorum_v3_adds_committed_voters():
    view, me = view_from_real()
    ours = describe_quorum_response(3, dq_request(), view, node_id=1)
    p = ours.topics[0].partitions[0]
    assert [r.replica_id for r in p.committed_voters] == [1]
    again = decode_response(encode_response(55, 3, 1, ours)[4:], 55, 3)[1]
    assert again == ours
    unknown = QuorumView(**{**view.__dict__, "committed_voters": None})
    assert describe_quorum_response(3, dq_request(), unknown, 1).topics[0].partitions[0].committed_voters is None


def test_describe_quorum_unknown_partition_and_not_leader():
    view, _ = view_from_real()
    # Recorded: topic "foo" → partition-level UNKNOWN_TOPIC_OR_PARTITION, echoing it.
    r = describe_quorum_response(2, dq_request("foo"), view, 1)
    p = r.topics[0].partitions[0]
    assert (r.topics[0].topic_name, p.error_code, p.error_message) == (
        "foo", 3, "This server does not host this topic-partition.")
    # Recorded: no topics at all → an empty answer.
    assert describe_quorum_response(2, DescribeQuorumRequest(topics=[]), view, 1).topics == []
    follower = QuorumView(is_leader=False, leader_id=2, epoch=5)
    p = describe_quorum_response(2, dq_request(), follower, 1).topics[0].partitions[0]
    assert p.error_code == 6  # NOT_LEADER_OR_FOLLOWER (KafkaRaftClient)


def cluster(version, endpoint_type=2, authz=False, served=2):
    req = DescribeClusterRequest(endpoint_type=endpoint_type, include_cluster_authorized_operations=authz)
    return describe_cluster_response(version, req, served=served, cluster_id="zxB4d6t3S5WKVax2lIwo7Q",
                                     controller_id=1, nodes=[(1, "127.0.0.1", 47189)])


@pytest.mark.parametrize("version", [1, 2])
def test_describe_cluster_for_controllers(version):
    r = cluster(version)
    assert (r.error_code, r.endpoint_type, r.controller_id) == (0, 2, 1)
    assert [(b.broker_id, b.host, b.port, b.rack, b.is_fenced) for b in r.brokers] == [
        (1, "127.0.0.1", 47189, None, False)]
    assert r.cluster_authorized_operations == -2147483648
    assert cluster(version, authz=True).cluster_authorized_operations == 8096  # recorded


def test_describe_cluster_endpoint_type_mismatch():
    msg = "The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER"
    r = cluster(1, endpoint_type=1)  # recorded: 114 with this message
    assert (r.error_code, r.error_message, r.endpoint_type) == (114, msg, 1)
    r = cluster(0)  # recorded: v0 cannot ask for controllers → INVALID_REQUEST
    assert (r.error_code, r.error_message) == (42, msg)


def test_metadata_on_the_client_listener_names_us_and_no_topics():
    from kraft_server.api.metadata import metadata_response
    from wire.messages import MetadataRequest
    from wire.messages.metadata_request import MetadataRequestTopic
    r = metadata_response(12, MetadataRequest(topics=None), node_id=1, host="127.0.0.1", port=9092,
                          cluster_id="c")
    assert [(b.node_id, b.host, b.port) for b in r.brokers] == [(1, "127.0.0.1", 9092)]
    assert (r.cluster_id, r.controller_id, r.topics) == ("c", 1, [])
    r = metadata_response(12, MetadataRequest(topics=[MetadataRequestTopic(name="t")]), node_id=1,
                          host="h", port=1, cluster_id="c")
    assert [(t.name, t.error_code) for t in r.topics] == [("t", 3)]
    for v in range(14):  # every version encodes
        req = MetadataRequest(topics=None if v >= 1 else [])
        encode_response(3, v, 1, metadata_response(v, req, node_id=1, host="h", port=1, cluster_id="c"))
