"""Control records re-encoded as ordinary data records, for the companion topics.

A control batch keeps its base offset, offset deltas, partition leader epoch and
timestamps, so every record keeps its offset; only the control flag is cleared and
each record becomes ``key`` = the control type's name (UTF-8,
``wire.records.control_names``: LeaderChange, Voters, KRaftVersion, SnapshotHeader,
SnapshotFooter),
``value`` = the control record's value unchanged: the type's message at v0 with no
version prefix (``LeaderChangeMessage``, ``VotersRecord``, ...; decode it with
``wire.records.control`` or ``wire.messages``). ``headers`` (name, bytes) pairs are
added to every record.

``skip_batch`` covers offsets a consumer has nothing to read in: an empty control
batch (no records, ``lastOffsetDelta`` spanning the range). Consumers move their
position past it (Java: ``nextFetchOffset = batch.nextOffset()``; kafka-python and
librdkafka likewise), so a consumer of a topic with gaps still reaches the high
watermark, which Spark's Kafka source requires of every offset range it plans.
"""
from __future__ import annotations

from wire.records import CONTROL_MASK, ControlRecordType, RecordBatch, decode_batch, decode_control_key
from wire.records.control_names import CONTROL_TYPE_NAMES
from wire.records.record import Record


def control_name(key) -> str:
    _, type_id = decode_control_key(key)
    try:
        return CONTROL_TYPE_NAMES[ControlRecordType(type_id)]
    except ValueError:
        return f"Unknown{type_id}"


def as_data_batch(raw, headers=()) -> bytes:
    """The control batch ``raw`` as a data batch (see the module docstring)."""
    batch, _ = decode_batch(raw)
    records = [Record(timestamp_delta=r.timestamp_delta, offset_delta=r.offset_delta,
                      key=control_name(r.key).encode(), value=r.value, headers=headers)
               for r in batch.records]
    return RecordBatch(
        base_offset=batch.base_offset, partition_leader_epoch=batch.partition_leader_epoch,
        attributes=batch.attributes & ~CONTROL_MASK, last_offset_delta=batch.last_offset_delta,
        base_timestamp=batch.base_timestamp, max_timestamp=batch.max_timestamp,
        producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence, records=records).encode()


def skip_batch(start: int, end: int, epoch: int) -> bytes:
    """An empty control batch covering offsets [start, end)."""
    return RecordBatch(base_offset=start, partition_leader_epoch=epoch, attributes=CONTROL_MASK,
                       last_offset_delta=end - start - 1, base_timestamp=-1, max_timestamp=-1,
                       records=[]).encode()
