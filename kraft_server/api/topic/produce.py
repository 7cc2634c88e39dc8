"""Produce (key 0), v3-13: advertised, decoded, and refused per partition.

librdkafka (kcat) does not fetch from a broker that does not advertise Produce (its
MsgVer2 feature needs Produce 3 and Fetch 4), so we advertise it as a Kafka broker
does (from v0: KAFKA-18659) and answer every partition:

- ``__cluster_metadata``-0 (and its read-only companions, ``catalog.py``):
  INVALID_TOPIC_EXCEPTION with a message saying why. It is
  what a Kafka broker answers a client producing to an internal topic
  (``ReplicaManager``: "Cannot append to internal topic"): not retriable, so a
  producer fails at once instead of retrying into a timeout, and it names the
  topic as the problem rather than suggesting ACLs (TOPIC_AUTHORIZATION_FAILED) or
  a transient state (NOT_LEADER_OR_FOLLOWER). Only the KRaft quorum writes this log.
- any other topic (or partition, or v13 topic id): UNKNOWN_TOPIC_OR_PARTITION.

With ``acks=0`` a Kafka broker sends no response, and on an error closes the
connection so the producer notices; we do the same (every such request errs here).
Requests below v3 cannot be decoded and close the connection (Kafka 4 refuses them too).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import ProduceResponse
from wire.messages.produce_response import PartitionProduceResponse, TopicProduceResponse

from .catalog import NO_TOPICS
from .partition import PARTITION

REFUSED = ("Cannot append to internal topic {}: it is the KRaft metadata log or a read-only view "
           "of it, written only by the controller quorum")


def _partition(partition, index: int, version: int) -> PartitionProduceResponse:
    if partition is not None and index == PARTITION:
        return PartitionProduceResponse(index=index, error_code=ErrorCode.INVALID_TOPIC_EXCEPTION,
                                        base_offset=-1, log_start_offset=partition.start_offset(),
                                        error_message=REFUSED.format(partition.name) if version >= 8 else None)
    return PartitionProduceResponse(index=index, error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                    base_offset=-1)


def produce_response(version: int, body, served) -> ProduceResponse:
    served = served or NO_TOPICS
    topics = []
    for t in body.topic_data:
        partition = served.with_id(t.topic_id) if version >= 13 else served.named(t.name)
        topics.append(TopicProduceResponse(
            name=t.name, topic_id=t.topic_id,
            partition_responses=[_partition(partition, p.index, version) for p in t.partition_data]))
    return ProduceResponse(responses=topics)


def handle_produce_request(call, topics) -> None:
    if call.body.acks == 0:
        call.close_connection("produce with acks=0 to a topic that refuses writes")
        return
    call.respond(produce_response(call.api_version, call.body, topics))
