"""``partition.metadata``: the topic id of the partition (Kafka's
``PartitionMetadataFile``), for ``__cluster_metadata`` always
``Uuid.METADATA_TOPIC_ID``::

    version: 0
    topic_id: AAAAAAAAAAAAAAAAAAAAAQ
"""
from __future__ import annotations

import uuid
from pathlib import Path

from .files import atomic_write
from wire.uuids import METADATA_TOPIC_ID, uuid_from_str, uuid_to_str

PARTITION_METADATA = "partition.metadata"


def render_partition_metadata(topic_id: uuid.UUID = METADATA_TOPIC_ID) -> bytes:
    return f"version: 0\ntopic_id: {uuid_to_str(topic_id)}".encode("ascii")


def write_partition_metadata(partition_dir: str | Path, topic_id: uuid.UUID = METADATA_TOPIC_ID) -> None:
    atomic_write(Path(partition_dir) / PARTITION_METADATA, render_partition_metadata(topic_id))


def read_partition_metadata(partition_dir: str | Path) -> uuid.UUID | None:
    try:
        text = (Path(partition_dir) / PARTITION_METADATA).read_text("ascii")
    except FileNotFoundError:
        return None
    fields = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    if fields.get("version") != "0":
        raise ValueError(f"Unrecognized version of partition.metadata file: {fields.get('version')}")
    return uuid_from_str(fields["topic_id"])
