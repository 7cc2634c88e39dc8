"""DescribeTopicPartitions (key 75) v0, as Kafka's Admin ``describeTopics`` sends it
(it falls back to Metadata when the API is not advertised: answering saves Spark a
round trip per trigger). The one topic is ``__cluster_metadata`` with partition 0,
shaped like its Metadata answer (``metadata_topic.py``); an empty topic list means
every topic. Other names get UNKNOWN_TOPIC_OR_PARTITION. With one partition the
cursor is only honoured as "start after": a cursor past partition 0 (or naming
another topic) lists nothing more and ``NextCursor`` is always null.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import DescribeTopicPartitionsResponse
from wire.messages.describe_topic_partitions_response import (
    DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic)

from .partition import PARTITION, TOPIC, TOPIC_ID


def _ours(partition, cursor) -> DescribeTopicPartitionsResponseTopic:
    node = partition.node_id
    skip = cursor is not None and (cursor.topic_name > TOPIC or
                                   (cursor.topic_name == TOPIC and cursor.partition_index > PARTITION))
    partitions = [] if skip else [DescribeTopicPartitionsResponsePartition(
        error_code=0, partition_index=PARTITION, leader_id=node, leader_epoch=partition.epoch,
        replica_nodes=[node], isr_nodes=[node], eligible_leader_replicas=[], last_known_elr=[],
        offline_replicas=[])]
    return DescribeTopicPartitionsResponseTopic(error_code=0, name=TOPIC, topic_id=TOPIC_ID,
                                                is_internal=False, partitions=partitions)


def describe_topic_partitions_response(body, partition) -> DescribeTopicPartitionsResponse:
    names = [t.name for t in body.topics] if body.topics else ([TOPIC] if partition is not None else [])
    topics = []
    for name in names:
        if partition is not None and name == TOPIC:
            topics.append(_ours(partition, body.cursor))
        else:
            topics.append(DescribeTopicPartitionsResponseTopic(
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name))
    return DescribeTopicPartitionsResponse(topics=topics, next_cursor=None)


def handle_describe_topic_partitions_request(call, partition) -> None:
    call.respond(describe_topic_partitions_response(call.body, partition))
