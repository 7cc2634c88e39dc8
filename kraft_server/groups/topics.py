"""The one topic whose offsets a group may commit here: ``__cluster_metadata`` partition 0.

Its topic id is Kafka's reserved ``Uuid.METADATA_TOPIC_ID`` (ONE_UUID), used by
OffsetCommit/OffsetFetch v10, which address topics by id.
"""
from __future__ import annotations

import uuid
from wire.uuids import ZERO_UUID

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
METADATA_TOPIC_ID = uuid.UUID(int=1)


def topic_name(topic_id: uuid.UUID) -> str | None:
    return METADATA_TOPIC if topic_id == METADATA_TOPIC_ID else None


def topic_id(name: str) -> uuid.UUID:
    return METADATA_TOPIC_ID if name == METADATA_TOPIC else ZERO_UUID


def served(topic: str, partition: int) -> bool:
    return topic == METADATA_TOPIC and partition == METADATA_PARTITION
