"""DescribeTopicPartitions (key 75) v0, as Kafka's Admin ``describeTopics`` sends it
(it falls back to Metadata when the API is not advertised: answering saves Spark a
round trip per trigger). The topics are ``__cluster_metadata`` and its companions
(``catalog.py``), partition 0 each, shaped like their Metadata answers
(``metadata_topic.py``); an empty topic list means every topic, in name order. Other
names get UNKNOWN_TOPIC_OR_PARTITION. With one partition per topic the cursor is
only honoured as "start at": a topic named before the cursor's, or the cursor's
own past partition 0, lists no partition; ``NextCursor`` is always null.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import DescribeTopicPartitionsResponse
from wire.messages.describe_topic_partitions_response import (
    DescribeTopicPartitionsResponsePartition, DescribeTopicPartitionsResponseTopic)

from .catalog import NO_TOPICS
from .partition import PARTITION


def _ours(partition, cursor) -> DescribeTopicPartitionsResponseTopic:
    node = partition.node_id
    name = partition.name
    skip = cursor is not None and (cursor.topic_name > name or
                                   (cursor.topic_name == name and cursor.partition_index > PARTITION))
    partitions = [] if skip else [DescribeTopicPartitionsResponsePartition(
        error_code=0, partition_index=PARTITION, leader_id=node, leader_epoch=partition.epoch,
        replica_nodes=[node], isr_nodes=[node], eligible_leader_replicas=[], last_known_elr=[],
        offline_replicas=[])]
    return DescribeTopicPartitionsResponseTopic(error_code=0, name=name, topic_id=partition.topic_id,
                                                is_internal=False, partitions=partitions)


def describe_topic_partitions_response(body, served) -> DescribeTopicPartitionsResponse:
    served = served or NO_TOPICS
    names = [t.name for t in body.topics] if body.topics else sorted(p.name for p in served)
    topics = []
    for name in names:
        partition = served.named(name)
        if partition is not None:
            topics.append(_ours(partition, body.cursor))
        else:
            topics.append(DescribeTopicPartitionsResponseTopic(
                error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name))
    return DescribeTopicPartitionsResponse(topics=topics, next_cursor=None)


def handle_describe_topic_partitions_request(call, topics) -> None:
    call.respond(describe_topic_partitions_response(call.body, topics))
