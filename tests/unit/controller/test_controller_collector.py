"""Keeping the cyclic collector off the image (``controller/image/collector.py``): partition
records made (decoded or replaced) are counted, ``Freezer`` freezes once enough were
made, garbage is collected before a freeze, and a whole freeze (or a new snapshot)
also frees what an earlier freeze froze and is cyclic garbage now."""
from __future__ import annotations

import gc
import weakref

import pytest

from kraft_server.common.values import OffsetAndEpoch
from kraft_server.controller.image import collector
from kraft_server.controller.image.collector import Freezer
from kraft_server.controller.image.loader import MetadataLoader
from kraft_server.controller.image.snapshot_build import render_snapshot
from wire.messages import ClearElrRecord, PartitionChangeRecord
from wire.records import encode_metadata_record

from tests.unit.controller.test_controller_active import Single
from tests.unit.controller.test_controller_snapshot_load import _SnapshotOnly, _image


@pytest.fixture(autouse=True)
def _unfrozen():
    yield
    gc.unfreeze()  # what a test froze goes back to the collector


class Cycle:
    def __init__(self) -> None:
        self.me = self


def _garbage_cycle():
    c = Cycle()
    ref = weakref.ref(c)
    del c
    return ref


def test_records_made_are_counted_decode_change_and_clear_elr():
    img = _image(topics=2, partitions=5)
    assert img.topics.made == 0  # replayed PartitionRecords wait as their values
    t0 = img.topics.by_name["t0"]
    assert len(t0.partitions) == 5 and img.topics.made == 5  # decoded on first read
    img.topics.change_partition(PartitionChangeRecord(partition_id=1, topic_id=t0.topic_id, leader=101,
                                                      eligible_leader_replicas=[102]))
    assert img.topics.made == 6  # the change replaces the record
    img.replay(encode_metadata_record(ClearElrRecord(topic_name=""), 0))
    assert img.topics.made == 12  # t1 decoded (5), t0's partition with an ELR replaced (1)


def _frozen(obj) -> bool:
    """Out of the collector's reach: in no generation (``gc.get_objects`` skips the
    permanent one)."""
    return all(o is not obj for o in gc.get_objects())


def test_freezer_freezes_after_enough_records_and_not_before():
    img = _image(topics=3, partitions=10)
    freezer = Freezer(now_ms=0, threshold=20)
    img.topics.by_name["t0"].partitions
    assert not freezer.poll(img, 1)  # 10 made
    before = gc.get_freeze_count()
    img.topics.by_name["t1"].partitions
    garbage = _garbage_cycle()
    assert freezer.poll(img, 2) and freezer.freezes == 1  # 20 made
    assert gc.get_freeze_count() > before
    assert garbage() is None  # collected first, never frozen
    assert _frozen(img.topics.by_name["t1"].partitions[0])
    assert not freezer.poll(img, 3)  # counted from the last freeze
    # A new image (a snapshot loaded) is counted from zero.
    other = _image(topics=3, partitions=10)
    other.topics.by_name["t2"].partitions
    assert not freezer.poll(other, 4)


def test_a_whole_freeze_frees_what_an_earlier_freeze_froze():
    c = Cycle()
    ref = weakref.ref(c)
    collector.freeze()
    del c  # frozen, then cyclic garbage: no collection looks at it
    gc.collect()
    assert ref() is not None
    collector.freeze()
    assert ref() is not None  # a plain freeze does not either
    collector.freeze(whole=True)
    assert ref() is None


def test_freezer_does_a_whole_freeze_every_ten_minutes():
    img = _image(topics=4, partitions=10)
    freezer = Freezer(now_ms=0, threshold=10, whole_every_ms=600_000)
    c = Cycle()
    ref = weakref.ref(c)
    img.topics.by_name["t0"].partitions
    assert freezer.poll(img, 1_000)
    del c
    img.topics.by_name["t1"].partitions
    assert freezer.poll(img, 599_999) and ref() is not None
    img.topics.by_name["t2"].partitions
    assert freezer.poll(img, 600_000) and ref() is None and freezer.last_whole_ms == 600_000


def test_loading_a_large_snapshot_again_frees_the_image_it_replaces(monkeypatch):
    monkeypatch.setattr("kraft_server.controller.image.loader.FREEZE_RECORDS", 50)
    data = render_snapshot(_image(topics=4, partitions=20), OffsetAndEpoch(10, 1), 0, None, 0)
    loader = MetadataLoader(_SnapshotOnly(data))
    loader.load_snapshot(OffsetAndEpoch(10, 1))
    first = weakref.ref(loader.image.topics)  # a cycle: each topic points at its TopicsImage
    assert _frozen(first())
    loader.load_snapshot(OffsetAndEpoch(10, 1))  # a follower installing the leader's snapshot
    assert first() is None  # frozen by the first load, garbage now: freed
    assert len(list(loader.image.topics.partitions())) == 80


def test_a_large_replay_is_collected_before_and_frozen_after(tmp_path):
    from kraft_server.log.file_log import FileReplicatedLog
    from tests.unit.controller.test_snapshot_build import _one_poll, _topic_values

    s = Single(log=FileReplicatedLog(tmp_path / "__cluster_metadata-0"), idle_ms=50,
               snapshot_max_bytes=1 << 30, retention_bytes=-1, retention_ms=-1)
    s.run_for(200)
    freezer = s.controller.loader.freezer
    s.core.propose(_topic_values(0, 12_000), s.now)  # one batch of ~700 KB
    s.core.drain_proposals()
    garbage = _garbage_cycle()  # made before the replay: collected, not frozen
    before = freezer.freezes
    while not s.controller.image.topics:
        _one_poll(s)
    assert freezer.freezes == before + 1 and garbage() is None
    t = s.controller.image.topics.by_name["big0"]
    assert len(t.pending) == 12_000 and _frozen(t.pending)
