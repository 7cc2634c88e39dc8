"""Loading a snapshot into the image (``MetadataLoader.load_snapshot``): PartitionRecords
wait undecoded under their topic until it is read, and the image then equals the one
replay builds record by record; an undecodable one is counted then, like at replay."""
from __future__ import annotations

import uuid

from kraft_server.common.values import OffsetAndEpoch
from kraft_server.controller.image import records as rec
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.image.loader import MetadataLoader
from kraft_server.controller.image.snapshot_generator import render_snapshot
from wire.messages import PartitionChangeRecord, PartitionRecord, TopicRecord
from wire.records import encode_metadata_record

DIRS = [uuid.UUID(int=7 + i) for i in range(3)]


def _image(topics: int = 3, partitions: int = 4) -> MetadataImage:
    img = MetadataImage()
    img.replay(rec.feature_level("metadata.version", 30), 0)
    for t in range(topics):
        tid = uuid.UUID(int=1000 + t)
        img.replay(encode_metadata_record(TopicRecord(name=f"t{t}", topic_id=tid), 0), 1)
        for p in range(partitions):
            reps = [100 + (p + i) % 3 for i in range(3)]
            img.replay(encode_metadata_record(PartitionRecord(
                partition_id=p, topic_id=tid, replicas=reps, isr=list(reps), leader=reps[0], leader_epoch=0,
                partition_epoch=0,
                directories=list(DIRS)), 2), 2)
    img.offset, img.epoch = 9, 1
    return img


class _SnapshotOnly:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read_snapshot(self, snapshot_id, position, size):
        return self.data[position:position + size]

    def snapshot_size(self, snapshot_id):
        return len(self.data)


def _load(data: bytes) -> MetadataImage:
    loader = MetadataLoader(_SnapshotOnly(data))
    loader.load_snapshot(OffsetAndEpoch(10, 1))
    return loader.image


def test_a_loaded_snapshot_decodes_a_topic_when_read_and_equals_replay():
    img = _image()
    loaded = _load(render_snapshot(img, OffsetAndEpoch(10, 1), 0, None, 0))
    t1 = loaded.topics.by_name["t1"]
    assert len(t1.pending) == 4 and loaded.topics.by_name["t0"].pending is not None
    assert sorted(t1.partitions) == [0, 1, 2, 3] and t1.pending is None
    assert loaded.topics.by_name["t0"].pending is not None  # only the topic read
    assert loaded.content() == img.content()  # reads (and so decodes) the rest
    assert loaded.offset == 9 and loaded.bad_records == 0
    # one object per topic id and per directory id, whatever the number of partitions
    ps = [p for _, p in loaded.topics.partitions()]
    assert all(p.topic_id is loaded.topics.by_name[f"t{i // 4}"].topic_id for i, p in enumerate(ps))
    assert len({id(d) for p in ps for d in p.directories}) == 3


def test_a_change_after_the_snapshot_applies_to_the_decoded_partition():
    loaded = _load(render_snapshot(_image(), OffsetAndEpoch(10, 1), 0, None, 0))
    tid = uuid.UUID(int=1002)
    loaded.replay(encode_metadata_record(PartitionChangeRecord(partition_id=3, topic_id=tid, leader=101), 2), 11)
    p = loaded.topics.by_id[tid].partitions[3]
    assert (p.leader, p.leader_epoch, p.partition_epoch) == (101, 1, 1)


def test_an_undecodable_partition_in_a_snapshot_counts_when_its_topic_is_read():
    img = _image(topics=1, partitions=2)
    good = render_snapshot(img, OffsetAndEpoch(10, 1), 0, None, 0)
    value = encode_metadata_record(img.topics.by_name["t0"].partitions[1], 2)
    # Replicas' compact-array length (just after the 20-byte id prefix) claims 100 elements.
    bad_value = value[:23] + bytes([101]) + value[24:]
    assert good.count(value) == 1
    loaded = _load(_rebuild_with(good, value, bad_value))
    assert loaded.bad_records == 0
    assert sorted(loaded.topics.by_name["t0"].partitions) == [0]
    assert loaded.bad_records == 1


def _rebuild_with(snapshot: bytes, old: bytes, new: bytes) -> bytes:
    """The snapshot with one record value replaced (batches rebuilt, so CRCs hold)."""
    from wire.records import batch_records, build_batch, walk
    parts = []
    for info in walk(snapshot):
        if info.is_control:
            parts.append(snapshot[info.start:info.end])
        else:
            values = [new if v == old else v for _, v in batch_records(snapshot, info)]
            parts.append(build_batch(info.base_offset, info.epoch, 0, [(None, v) for v in values]))
    return b"".join(parts)


def test_replayed_partitions_wait_undecoded_and_a_snapshot_writes_their_bytes_back():
    img = _image(topics=2, partitions=3)
    t0, t1 = img.topics.by_name["t0"], img.topics.by_name["t1"]
    assert len(t0.pending) == 3 and len(t1.pending) == 3  # nothing decoded by replay
    values = list(t1.pending)
    assert t0.partitions[2].leader == 102  # t0 decoded when read, t1 still waits
    assert t1.pending == values
    records = img.snapshot_records()
    assert all(v in records for v in values)  # t1 as committed, byte for byte
    assert encode_metadata_record(t0.partitions[2], 2) in records  # t0 encoded again
    # a topic read and then given one more partition is written encoded, in order
    tid = t0.topic_id
    img.replay(encode_metadata_record(PartitionRecord(partition_id=3, topic_id=tid, replicas=[100], isr=[100],
                                                      leader=100, leader_epoch=0, partition_epoch=0), 2), 3)
    assert t0.pending_values(2) is None
    assert sorted(t0.partitions) == [0, 1, 2, 3]
    assert _load(render_snapshot(img, OffsetAndEpoch(10, 1), 0, None, 0)).content() == img.content()
