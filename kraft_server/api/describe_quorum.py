"""DescribeQuorum (key 55), v0-3, answered from the node's ``QuorumView``.

Kafka answers it inside ``KafkaRaftClient`` (``handleDescribeQuorumRequest``) and
builds the reply in ``RaftUtil.singletonDescribeQuorumResponse``; we follow it:

- A request for anything but ``__cluster_metadata``/0 gets a partition-level
  UNKNOWN_TOPIC_OR_PARTITION for each partition it named (none named, none
  answered).
- Only the leader describes the quorum; elsewhere the answer is a partition-level
  NOT_LEADER_OR_FOLLOWER for ``__cluster_metadata``/0.
- ``CurrentVoters`` are the replica states of the latest voter set (uncommitted
  changes included, as ``LeaderState.voterStates``); the leader reports its own
  fetch and caught-up timestamps as "now". ``Observers`` are replicas that fetched
  recently. v0 has no timestamps, v2 adds directory ids and ``Nodes`` (the voters'
  endpoints only).
- v3 (ours, not Kafka's) adds ``CommittedVoters``: the voter set as of the high
  watermark, null while the leader does not know it yet.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.errors import error_message as _error_message
from wire.messages import DescribeQuorumResponse
from wire.messages.describe_quorum_response import (
    Listener, Node, PartitionData, ReplicaState, TopicData)

from wire.uuids import ZERO_UUID

from .views import QuorumView, ReplicaView

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0


def _valid_topic_partition(body) -> bool:
    topics = body.topics
    return (len(topics) == 1 and topics[0].topic_name == METADATA_TOPIC
            and len(topics[0].partitions) == 1
            and topics[0].partitions[0].partition_index == METADATA_PARTITION)


def _replica(r: ReplicaView, version: int) -> ReplicaState:
    return ReplicaState(
        replica_id=r.replica_id,
        replica_directory_id=r.directory_id if version >= 2 else ZERO_UUID,
        log_end_offset=r.log_end_offset,
        last_fetch_timestamp=r.last_fetch_timestamp if version >= 1 else -1,
        last_caught_up_timestamp=r.last_caught_up_timestamp if version >= 1 else -1,
    )


def unknown_partitions_response(body) -> DescribeQuorumResponse:
    message = _error_message(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    return DescribeQuorumResponse(topics=[
        TopicData(topic_name=t.topic_name, partitions=[
            PartitionData(partition_index=p.partition_index,
                          error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                          error_message=message)
            for p in t.partitions])
        for t in body.topics])


def not_leader_response() -> DescribeQuorumResponse:
    return DescribeQuorumResponse(topics=[TopicData(topic_name=METADATA_TOPIC, partitions=[
        PartitionData(partition_index=METADATA_PARTITION,
                      error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                      error_message=_error_message(ErrorCode.NOT_LEADER_OR_FOLLOWER))])])


def describe_quorum_response(version: int, body, quorum: QuorumView, node_id: int) -> DescribeQuorumResponse:
    if not _valid_topic_partition(body):
        return unknown_partitions_response(body)
    if not quorum.is_leader:
        return not_leader_response()
    partition = PartitionData(
        partition_index=METADATA_PARTITION,
        error_code=0,
        leader_id=node_id,
        leader_epoch=quorum.epoch,
        high_watermark=quorum.high_watermark,
        current_voters=[_replica(r, version) for r in quorum.voters],
        observers=[_replica(r, version) for r in quorum.observers],
    )
    if version >= 3 and quorum.committed_voters is not None:
        partition.committed_voters = [_replica(r, version) for r in quorum.committed_voters]
    resp = DescribeQuorumResponse(topics=[TopicData(topic_name=METADATA_TOPIC, partitions=[partition])])
    if version >= 2:
        resp.nodes = [
            Node(node_id=v.node_id, listeners=[Listener(name=e.name, host=e.host, port=e.port)
                                               for e in v.endpoints])
            for v in quorum.voter_nodes
        ]
    return resp


def handle_describe_quorum_request(call, view) -> None:
    quorum = view.quorum(view.now_ms())
    call.respond(describe_quorum_response(call.api_version, call.body, quorum, view.node_id))
