"""A served topic (``__cluster_metadata`` or a companion, ``catalog.py``) in Metadata
(v0-13) answers.

One partition, led by this node (the node that will answer the fetches) at the
epoch the fetch path enforces, with itself as the only replica and ISR.
``is_internal`` is false: Kafka's client-side list of internal topics does not hold
this one, and Spark's Kafka source silently drops partitions of internal topics.
"""
from __future__ import annotations

from wire.messages.metadata_response import MetadataResponsePartition, MetadataResponseTopic

from .partition import PARTITION


def metadata_topic(partition) -> MetadataResponseTopic:
    node = partition.node_id
    return MetadataResponseTopic(
        error_code=0, name=partition.name, topic_id=partition.topic_id, is_internal=False,
        partitions=[MetadataResponsePartition(
            error_code=0, partition_index=PARTITION, leader_id=node, leader_epoch=partition.epoch,
            replica_nodes=[node], isr_nodes=[node], offline_replicas=[])])
