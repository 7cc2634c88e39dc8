"""A snapshot rendered a slice at a time (``controller/image/snapshot_build.py``): the bytes
equal those rendered at once from the image as it was when the build started,
whatever replay changed meanwhile; the controller renders a due snapshot over
several polls, starts no other meanwhile, and writes the image at its offset."""
from __future__ import annotations

import uuid

from kraft_server.common.values import OffsetAndEpoch
from kraft_server.controller.image import records as rec
from kraft_server.controller.image import snapshot_build
from kraft_server.controller.image.loader import MetadataLoader
from kraft_server.controller.image.snapshot_build import SnapshotBuild, render_snapshot
from kraft_server.log.file_log import FileReplicatedLog
from wire.messages import PartitionChangeRecord, PartitionRecord, RemoveTopicRecord, TopicRecord
from wire.records import encode_metadata_record

from tests.unit.controller.test_controller_active import Single
from tests.unit.controller.test_controller_snapshot_load import _image


def _topic_values(t: int, partitions: int) -> list[bytes]:
    tid = uuid.UUID(int=5000 + t)
    out = [encode_metadata_record(TopicRecord(name=f"big{t}", topic_id=tid), 0)]
    for p in range(partitions):
        reps = [100 + (p + i) % 3 for i in range(3)]
        out.append(encode_metadata_record(PartitionRecord(
            partition_id=p, topic_id=tid, replicas=reps, isr=reps, leader=reps[0]), 2))
    return out


def test_sliced_build_writes_the_image_as_it_was_at_its_start(monkeypatch):
    monkeypatch.setattr(snapshot_build, "RECORDS_PER_BATCH", 64)
    img = _image(topics=12, partitions=200)
    _decoded(img)  # these are encoded by the slices, the rest go as committed
    expected = render_snapshot(_decoded(_image(topics=12, partitions=200)), OffsetAndEpoch(10, 1), 0, None, 5)
    build = SnapshotBuild(img, OffsetAndEpoch(10, 1), 0, None, 5)
    t0 = img.topics.by_name["t0"]
    steps = 0
    while not build.step(max_encodes=300):
        steps += 1
        # replay goes on between slices: a change, a removal, a new topic, a feature
        img.topics.change_partition(PartitionChangeRecord(partition_id=steps % 200, topic_id=t0.topic_id,
                                                          leader=101, isr=[101]))
        if steps == 1:
            img.replay(encode_metadata_record(RemoveTopicRecord(topic_id=img.topics.by_name["t9"].topic_id), 0))
            for value in _topic_values(0, 3):
                img.replay(value)
            img.replay(rec.feature_level("group.version", 1))
    assert steps >= 4  # 1,600 records to encode, 300 a step (whole batches of 64)
    assert build.step() is True and build.data() == expected
    assert render_snapshot(img, OffsetAndEpoch(10, 1), 0, None, 5) != expected  # the image did move on


def _replay_and_decode(s, topics: int) -> None:
    """Run until ``topics`` topics are replayed, then decode them, as changed since
    (as after an election of every partition)."""
    while len(s.controller.image.topics) < topics:
        _one_poll(s)
    for t in s.controller.image.topics:
        t.partitions
        t.values.clear()


def _one_poll(s) -> None:
    """One turn of the Ready loop and one controller poll (``Single.cycle`` polls until idle)."""
    s.now += 5
    s.core.tick(s.now)
    s.core.shell.turn(s.now, lambda r: None, lambda r: None)
    s.controller.poll(s.now)


def _decoded(img):
    """The first 8 topics decoded and changed since (no value to write as it is)."""
    for t in list(img.topics)[:8]:
        t.partitions
        t.values.clear()
    return img


def _building(tmp_path, monkeypatch, slice_encodes: int, batch: int, interval_ms: int, topics: int,
              partitions: int):
    """A single controller, retention off, whose image holds ``topics`` topics of
    ``partitions`` decoded partitions, run until a due snapshot starts rendering."""
    monkeypatch.setattr(snapshot_build, "SLICE_ENCODES", slice_encodes)
    monkeypatch.setattr(snapshot_build, "RECORDS_PER_BATCH", batch)
    log = FileReplicatedLog(tmp_path / "__cluster_metadata-0")
    s = Single(log=log, idle_ms=50, snapshot_max_bytes=1 << 30, snapshot_interval_ms=interval_ms,
               retention_bytes=-1, retention_ms=-1)
    s.run_for(2 * interval_ms)
    for t in range(topics):
        s.core.propose(_topic_values(t, partitions), s.now)
    _replay_and_decode(s, topics)
    while s.controller.building is None:
        _one_poll(s)
    return s, log


def test_a_due_snapshot_is_rendered_over_several_polls(tmp_path, monkeypatch):
    s, log = _building(tmp_path, monkeypatch, slice_encodes=50, batch=64, interval_ms=200, topics=3,
                       partitions=300)
    # count the polls that render it
    sid = s.controller.building.snapshot_id
    assert s.controller.image.offset == sid.offset - 1
    at_start = s.controller.image.content()
    polls = 0
    while s.controller.building is not None:
        assert s.controller.building.snapshot_id == sid  # no other starts meanwhile...
        s.controller.snapshots.last_ms = -10**9  # ...though one is due by time
        s.core.propose([rec.feature_level("group.version", 1 + polls % 2)], s.now)  # replay goes on
        _one_poll(s)
        polls += 1
    assert polls >= 5 and log.latest_snapshot() == sid
    # The counters kept counting (Kafka resets them when an emission starts): the
    # next replay starts the next snapshot at once (written at once too: every record
    # was just encoded, ``image/topics.py``: ``Topic.values``).
    waited = 0
    while s.controller.building is None and log.latest_snapshot() == sid:
        _one_poll(s)
        waited += 1
        assert waited < 30  # a NoOp a 50 ms, a poll a 5 ms; the interval alone would take 40
    assert (s.controller.building.snapshot_id if s.controller.building else log.latest_snapshot()) > sid
    assert s.controller.image.offset > sid.offset  # records came after it meanwhile
    # The file holds the image at its offset, not what was replayed while it was rendered.
    from_file = MetadataLoader(log)
    from_file.load_snapshot(sid)
    assert from_file.image.content() == at_start != s.controller.image.content()
    assert len(list(from_file.image.topics.partitions())) == 900


def test_snapshot_on_request_finishes_the_one_being_rendered(tmp_path, monkeypatch):
    s, log = _building(tmp_path, monkeypatch, slice_encodes=10, batch=16, interval_ms=100, topics=1,
                       partitions=200)
    first = s.controller.building.snapshot_id
    s.core.propose([rec.feature_level("group.version", 1)], s.now)
    while s.controller.image.offset < first.offset:
        _one_poll(s)  # replayed, while the first is still being rendered
        assert s.controller.building is not None
    second = s.controller.snapshot(s.now, "requested")
    assert s.controller.building is None
    assert first in log.snapshot_ids() and second == log.latest_snapshot() and second.offset > first.offset


def _to_encode(img) -> int:
    return sum(1 for item in img.snapshot_items() if isinstance(item, PartitionRecord))


def test_a_partition_is_encoded_again_only_once_it_changed():
    img = _image(topics=2, partitions=50)
    for t in img.topics:
        t.partitions
    assert _to_encode(img) == 0  # decoded: their committed values are still good
    t0 = img.topics.by_name["t0"]
    img.topics.change_partition(PartitionChangeRecord(partition_id=3, topic_id=t0.topic_id, leader=101))
    img.topics.change_partition(PartitionChangeRecord(partition_id=4, topic_id=t0.topic_id, leader=101))
    assert _to_encode(img) == 2
    first = render_snapshot(img, OffsetAndEpoch(10, 1), 0, None, 5)
    assert _to_encode(img) == 0  # written once: remembered
    for t in img.topics:
        t.values.clear()
    assert render_snapshot(img, OffsetAndEpoch(10, 1), 0, None, 5) == first  # the same bytes encoded afresh
    # A record replaced while its encoding was being written is not remembered for it.
    build = SnapshotBuild(img, OffsetAndEpoch(10, 1), 0, None, 5)
    img.topics.change_partition(PartitionChangeRecord(partition_id=7, topic_id=t0.topic_id, leader=102))
    build.finish()
    assert 7 not in t0.values and _to_encode(img) == 1
