"""Snapshots the controller writes (SnapshotGenerator rules, RecordsSnapshotWriter
layout) and Kafka's retention after them, on the on-disk log."""
from __future__ import annotations


from kraft_server.controller.image import records as rec
from kraft_server.controller.image.loader import MetadataLoader
from kraft_server.controller.image.retention import maybe_clean
from kraft_server.controller.image.snapshot_generator import SnapshotGenerator
from kraft_server.log.bootstrap import DEFAULT_FEATURES
from kraft_server.log.file_log import FileReplicatedLog
from wire.records import batch_records, control_records, walk

from tests.unit.controller.test_controller_active import Single


def _file_log(tmp_path, segment_bytes=600):
    return FileReplicatedLog(tmp_path / "__cluster_metadata-0", segment_bytes=segment_bytes)


def _batch_ends(log) -> set[int]:
    ends, offset = set(), log.start_offset()
    while offset < log.end_offset():
        for info in walk(log.read(offset, 1 << 20)):
            ends.add(info.next_offset)
            offset = max(offset, info.next_offset)
    return ends


def _layout(data: bytes):
    """[(base offset, epoch, control?, [record kinds])] of a snapshot file."""
    out = []
    for info in walk(data):
        if info.is_control:
            kinds = [k.name for k, _ in control_records(data, info)]
        else:
            kinds = [rec.unframe(v)[0] for _, v in batch_records(data, info)]
        out.append((info.base_offset, info.epoch, info.is_control, kinds))
    return out


def test_byte_trigger_writes_kafka_layout(tmp_path):
    log = _file_log(tmp_path)
    s = Single(log=log, idle_ms=50, snapshot_max_bytes=400, retention_bytes=-1, retention_ms=-1)
    s.run_for(1000)
    ids = log.snapshot_ids()
    assert len(ids) >= 3
    names = sorted(p.name for p in log.directory.iterdir() if p.name.endswith(".checkpoint"))
    assert names == [f"{i.offset:020d}-{i.epoch:010d}.checkpoint" for i in ids]
    assert not [p for p in log.directory.iterdir() if p.name.endswith(".part")]
    sid = ids[-1]
    data = log.read_snapshot(sid, 0, log.snapshot_size(sid))
    layout = _layout(data)
    # kraft.version 0 (static voters): the header alone, then the state, then the footer.
    assert layout[0] == (0, sid.epoch, True, ["SNAPSHOT_HEADER"])
    assert layout[1][:3] == (1, sid.epoch, False)
    assert layout[1][3][:6] == [12] * 6 and layout[1][3][-2:] == [27, 4]  # features, controller, config
    assert layout[-1][2:] == (True, ["SNAPSHOT_FOOTER"])
    assert 20 not in layout[1][3]  # a NoOp is not state
    # The id is (last replayed offset + 1, its epoch) and sits on a batch boundary.
    assert sid.offset in _batch_ends(log)
    # Read back, the snapshot holds the image as it was at that offset.
    loader = MetadataLoader(log)
    loader.load_snapshot(sid)
    assert loader.image.features == s.controller.image.features
    assert loader.image.controllers == s.controller.image.controllers
    # Retention disabled: every snapshot and the whole log stay (Kafka never moves the
    # log start on snapshot creation).
    assert log.start_offset() == 0


def test_time_trigger_and_zero_disables(tmp_path):
    s = Single(idle_ms=50, snapshot_max_bytes=1 << 30, snapshot_interval_ms=300, retention_bytes=-1)
    s.run_for(1000)
    n = len(s.log.snapshot_ids())
    assert 2 <= n <= 4
    off = Single(idle_ms=50, snapshot_max_bytes=1 << 30, snapshot_interval_ms=0)
    off.run_for(1000)
    assert off.log.snapshot_ids() == []


def test_retention_moves_log_start_to_a_snapshot_and_restart_loads_it(tmp_path):
    log = _file_log(tmp_path, segment_bytes=300)
    s = Single(log=log, idle_ms=20, snapshot_max_bytes=800, retention_bytes=2000, retention_ms=-1)
    s.run_for(2000)
    start = log.start_offset()
    assert start > 0
    assert start in [i.offset for i in log.snapshot_ids()]  # SnapshotAtLogStart
    assert log.size_bytes() + sum(log.snapshot_size(i) for i in log.snapshot_ids()[1:]) <= 2000 + 600
    bases = sorted(int(p.name[:20]) for p in log.directory.iterdir() if p.suffix == ".log")
    # Segments wholly below the log start go when it moves (deleteOldSegments); one
    # that ended exactly at it may stay until the next move, as in Kafka.
    assert bases[0] <= start and sum(1 for b in bases if b < start) <= 1
    assert all(i.offset >= start for i in log.snapshot_ids())
    image = s.controller.image.content()
    log.flush()
    log.close()
    again_log = _file_log(tmp_path, segment_bytes=300)
    # No log-start checkpoint for the metadata log: a restart starts at the first
    # segment, which may hold a few offsets below the snapshot (Kafka does the same).
    assert again_log.start_offset() <= start <= again_log.latest_snapshot().offset
    again = Single(log=again_log, idle_ms=0, snapshot_max_bytes=1 << 30, incarnation=None)
    again.run_for(50)
    assert again.controller.loader.loaded_snapshot is not None
    assert again.controller.image.content()[0] == image[0]
    assert again.controller.image.controllers.keys() == {1}


def test_retention_by_age_keeps_the_newest(tmp_path):
    log = _file_log(tmp_path)
    s = Single(log=log, idle_ms=20, snapshot_max_bytes=300, retention_bytes=-1, retention_ms=-1)
    s.run_for(600)
    ids = log.snapshot_ids()
    assert len(ids) >= 2
    assert not maybe_clean(log, -1, 10**9, s.now)  # none old enough
    assert maybe_clean(log, -1, 0, s.now + 10**6)  # all too old: all but the newest go
    assert log.snapshot_ids() == [ids[-1]] and log.start_offset() == ids[-1].offset


def test_generator_counts_and_resets():
    g = SnapshotGenerator(100, 1000, now_ms=0)
    assert g.due(60, 10) is None
    assert "bytes" in g.due(40, 20)
    g.reset(20)
    assert g.due(10, 900) is None
    assert "ms" in g.due(10, 1020)
    assert g.due(0, 5000) is None  # checked only when something was replayed


def test_follower_style_load_when_below_log_start(tmp_path):
    """A log that restarts at a snapshot (FetchSnapshot install): the loader rebuilds
    the image from it and continues from its end offset."""
    src = Single(idle_ms=20, snapshot_max_bytes=300)
    src.run_for(300)
    sid = src.log.snapshot_ids()[-1]
    data = src.log.read_snapshot(sid, 0, src.log.snapshot_size(sid))
    log = _file_log(tmp_path)
    w = log.create_snapshot(sid)
    w.append(data)
    w.freeze()
    log.reset_to_snapshot(sid)
    loader = MetadataLoader(log)
    replayed, loaded = loader.catch_up(sid.offset + 5)
    assert loaded and replayed == 0 and loader.next_offset == sid.offset
    assert loader.image.features["metadata.version"] == DEFAULT_FEATURES["metadata.version"]
    assert loader.image.offset == sid.offset - 1


def test_created_snapshot_line_names_each_file_for_the_scale_bench(tmp_path, caplog):
    from bench.controller.scale_rows import ours_snapshot_ms
    log = _file_log(tmp_path)
    s = Single(log=log, idle_ms=50, snapshot_max_bytes=400, retention_bytes=-1, retention_ms=-1)
    with caplog.at_level("INFO", logger="kraft_server.controller.image.snapshot_generator"):
        s.run_for(1000)
    names = [p.name.removesuffix(".checkpoint") for p in log.directory.iterdir() if p.suffix == ".checkpoint"]
    assert len(names) >= 2
    took = [ours_snapshot_ms(caplog.text, n) for n in names]
    assert all(t is not None and t >= 0 for t in took), took
    assert ours_snapshot_ms(caplog.text, "00000000000000999999-0000000007") is None
