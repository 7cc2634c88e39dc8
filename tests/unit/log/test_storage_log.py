"""The on-disk log: segments, rolling, reopening, crash recovery (torn tails,
bad CRCs, garbage), retention after snapshots, and the files Kafka expects."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.common.values import OffsetAndEpoch
from wire.records import data_batch, frame_metadata_record

PART = "__cluster_metadata-0"


def batch(offset: int, epoch: int, n: int = 2, size: int = 40) -> bytes:
    return data_batch(offset, epoch, 1_000 + offset, [frame_metadata_record(0, 0, b"x" * size)] * n)


def fill(log, epochs):
    for e in epochs:
        log.append(batch(log.end_offset(), e))


def names(path: Path) -> list[str]:
    return sorted(os.listdir(path))


def open_log(tmp_path, **kw) -> FileReplicatedLog:
    return FileReplicatedLog.open(tmp_path, **kw)


def test_fresh_directory_layout(tmp_path):
    with open_log(tmp_path) as log:
        assert log.directory == tmp_path / PART
    assert names(tmp_path / PART) == [
        "00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
        "leader-epoch-checkpoint", "partition.metadata",
    ]
    assert (tmp_path / PART / "partition.metadata").read_bytes() == b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    assert (tmp_path / PART / "leader-epoch-checkpoint").read_text() == "0\n0\n"


def test_reopen_keeps_everything(tmp_path):
    with open_log(tmp_path) as log:
        fill(log, [1, 1, 2, 4])
        log.flush()
        before = log.read(0, 1 << 20)
    assert (tmp_path / PART / "leader-epoch-checkpoint").read_text() == "0\n3\n1 0\n2 4\n4 6\n"
    with open_log(tmp_path) as log:
        assert log.end_offset() == 8 and log.flushed_offset() == 8
        assert log.read(0, 1 << 20) == before
        assert log.epochs.entries == [(1, 0), (2, 4), (4, 6)]
        assert log.recovery_problems == []


def test_segments_roll_at_the_size_limit(tmp_path):
    size = len(batch(0, 1))
    with open_log(tmp_path, segment_bytes=2 * size) as log:
        fill(log, [1] * 5)
        log.flush()
        assert [s.base_offset for s in log.segments] == [0, 4, 8]
        assert log.read(4, 1 << 20) == batch(4, 1) + batch(6, 1)  # one segment per read, as Kafka
    logs = [n for n in names(tmp_path / PART) if n.endswith(".log")]
    assert logs == ["00000000000000000000.log", "00000000000000000004.log", "00000000000000000008.log"]
    with open_log(tmp_path, segment_bytes=2 * size) as log:
        assert log.end_offset() == 10
        log.truncate_to(5)  # drops segment 8 and the batch at 4
        assert log.end_offset() == 4
        log.flush()
    assert "00000000000000000008.log" not in names(tmp_path / PART)


def _segment(tmp_path, base=0) -> Path:
    return tmp_path / PART / f"{base:020d}.log"


@pytest.mark.parametrize("cut", [1, 10, 60, 61, 100])
def test_torn_tail_is_truncated(tmp_path, cut):
    """A torn tail is what was not fsync'd yet (here: the last batch, never flushed)."""
    with open_log(tmp_path) as log:
        fill(log, [1, 1])
        log.flush()
        fill(log, [2])
    seg = _segment(tmp_path)
    size = seg.stat().st_size
    os.truncate(seg, size - cut)
    with open_log(tmp_path) as log:
        assert log.end_offset() == 4
        assert log.epochs.entries == [(1, 0)]
        assert log.recovery_problems
        assert seg.stat().st_size == 2 * len(batch(0, 1))
        fill(log, [3])  # the log goes on from the cut
        assert log.end_offset() == 6


@pytest.mark.parametrize("where", ["crc", "records", "magic", "length"])
def test_corrupt_last_batch_is_dropped(tmp_path, where):
    with open_log(tmp_path) as log:
        fill(log, [1, 1])
        log.flush()
        fill(log, [1])  # not flushed: no seal vouches for it
    seg = _segment(tmp_path)
    data = bytearray(seg.read_bytes())
    last = 2 * len(batch(0, 1))
    offset = {"crc": last + 17, "records": len(data) - 3, "magic": last + 16, "length": last + 8}[where]
    data[offset] ^= 0x7F
    seg.write_bytes(bytes(data))
    with open_log(tmp_path) as log:
        assert log.end_offset() == 4
        assert any(p for p in log.recovery_problems)


@pytest.mark.parametrize("where", ["crc", "records", "magic", "length", "base-offset", "epoch", "cut"])
def test_damage_to_fsyncd_batches_stops_start_up(tmp_path, where):
    """Bytes a seal vouches for (flushed, so perhaps committed and acknowledged) that
    changed are never truncated away: start-up stops and changes nothing. The seal
    also covers what a batch's CRC does not (base offset, length, leader epoch)."""
    from kraft_server.log.disk import LogCorruption
    with open_log(tmp_path) as log:
        fill(log, [1, 1, 1, 2])
        log.flush()
        fill(log, [2])  # an unflushed tail after them
    seg = _segment(tmp_path)
    data = bytearray(seg.read_bytes())
    second = len(batch(0, 1))
    if where == "cut":
        del data[3 * second + 10:]
    else:
        data[second + {"crc": 17, "records": second - 3, "magic": 16, "length": 8, "base-offset": 7,
                       "epoch": 14}[where]] ^= 0x01
    seg.write_bytes(bytes(data))
    with pytest.raises(LogCorruption, match="refusing to start") as caught:
        with open_log(tmp_path) as log:  # the last batch intact: found by the seal check
            log.wait_verified()
    assert caught.value.path == seg and seg.read_bytes() == bytes(data)
    if where in ("crc", "records"):
        assert f"CRC mismatch in batch at offset 2 (position {second})" in str(caught.value)


def test_corruption_in_an_old_unsealed_segment_drops_later_segments(tmp_path):
    """Segments without seals (written by Kafka or an earlier version) are cut as Kafka does."""
    size = len(batch(0, 1))
    with open_log(tmp_path, segment_bytes=size) as log:
        fill(log, [1, 1, 1, 1])
        log.flush()
    for seal in (tmp_path / PART).glob("*.batchseal"):
        seal.unlink()
    seg = _segment(tmp_path, 2)
    data = bytearray(seg.read_bytes())
    data[-1] ^= 1
    seg.write_bytes(bytes(data))
    with open_log(tmp_path, segment_bytes=size) as log:
        assert log.end_offset() == 2
        assert [s.base_offset for s in log.segments] == [0, 2]
    assert not _segment(tmp_path, 4).exists() and not _segment(tmp_path, 6).exists()


def test_cutting_a_segment_empties_its_index_files(tmp_path):
    with open_log(tmp_path) as log:
        fill(log, [1, 1])
        log.flush()
    part = tmp_path / PART
    (part / "00000000000000000000.index").write_bytes(b"\x00\x00\x00\x01\x00\x00\x00\x10")  # as if Kafka wrote it
    (part / "00000000000000000000.timeindex").write_bytes(b"\x00" * 12)
    with open_log(tmp_path) as log:
        assert (part / "00000000000000000000.index").stat().st_size == 8  # growing keeps entries
        log.truncate_to(2)
    assert (part / "00000000000000000000.index").stat().st_size == 0
    assert (part / "00000000000000000000.timeindex").stat().st_size == 0


def test_trailing_garbage_is_cut(tmp_path):
    with open_log(tmp_path) as log:
        fill(log, [1])
        log.flush()
    with open(_segment(tmp_path), "ab") as f:
        f.write(b"\x00" * 7)
    with open_log(tmp_path) as log:
        assert log.end_offset() == 2
        assert _segment(tmp_path).stat().st_size == len(batch(0, 1))


def test_kill_9_keeps_flushed_batches(tmp_path):
    """A child appends and flushes, appends more without flushing, then dies with
    SIGKILL; everything flushed is there, and the log is consistent."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[3])!r})
        from kraft_server.log.file_log import FileReplicatedLog
        from wire.records import data_batch, frame_metadata_record
        log = FileReplicatedLog.open({str(tmp_path)!r})
        for i in range(50):
            log.append(data_batch(log.end_offset(), 1, 0, [frame_metadata_record(0, 0, b"y" * 30)] * 3))
        log.flush()
        print(log.end_offset(), flush=True)
        for i in range(50):
            log.append(data_batch(log.end_offset(), 2, 0, [frame_metadata_record(0, 0, b"z" * 30)] * 3))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    flushed = int(proc.stdout.split()[0])
    # Simulate a torn last write on top of the kill: chop a few bytes off the end.
    seg = _segment(tmp_path)
    os.truncate(seg, seg.stat().st_size - 5)
    with open_log(tmp_path) as log:
        assert log.end_offset() >= flushed
        assert (log.end_offset() - flushed) % 3 == 0
        data = log.read(0, 1 << 30)
        assert len(data) == seg.stat().st_size


# -- snapshots and retention ------------------------------------------------------------

def freeze(log, snapshot_id, payload=None):
    w = log.create_snapshot(snapshot_id)
    w.append(batch(0, 1) if payload is None else payload)  # a whole batch: start-up checks it
    w.freeze()


def test_snapshot_files(tmp_path):
    with open_log(tmp_path) as log:
        fill(log, [1, 1])
        w = log.create_snapshot(OffsetAndEpoch(4, 1))
        w.append(b"abc")
        parts = [n for n in names(tmp_path / PART) if n.endswith(".checkpoint.part")]
        assert len(parts) == 1 and parts[0].startswith("00000000000000000004-0000000001-")
        w.freeze()
    path = tmp_path / PART / "00000000000000000004-0000000001.checkpoint"
    assert path.read_bytes() == b"abc"
    assert stat.S_IMODE(path.stat().st_mode) == 0o400  # read-only, like Kafka's frozen snapshots
    assert not [n for n in names(tmp_path / PART) if n.endswith(".part")]


def test_partial_and_deleted_snapshots_are_cleaned_on_open(tmp_path):
    with open_log(tmp_path) as log:
        fill(log, [1, 1])
        log.create_snapshot(OffsetAndEpoch(2, 1)).append(b"half")  # never frozen
    (tmp_path / PART / "00000000000000000001-0000000001.checkpoint.deleted").write_bytes(b"old")
    with open_log(tmp_path) as log:
        assert log.latest_snapshot() is None
    assert not [n for n in names(tmp_path / PART) if ".part" in n or ".deleted" in n]


def test_retention_deletes_old_segments_and_snapshots(tmp_path):
    size = len(batch(0, 1))
    with open_log(tmp_path, segment_bytes=size) as log:
        fill(log, [1, 1, 2, 2, 3])
        freeze(log, OffsetAndEpoch(2, 1))
        freeze(log, OffsetAndEpoch(6, 2))
        log.delete_before_snapshot(OffsetAndEpoch(6, 2))
        assert log.start_offset() == 6
        assert [s.base_offset for s in log.segments] == [6, 8]
        assert log.epochs.entries == [(2, 6), (3, 8)]
        assert log.end_offset_for_epoch(1) == OffsetAndEpoch(6, 2)  # older than the log: the snapshot
    files = names(tmp_path / PART)
    assert "00000000000000000002-0000000001.checkpoint" not in files
    assert "00000000000000000006-0000000002.checkpoint" in files
    assert "00000000000000000000.log" not in files
    with open_log(tmp_path, segment_bytes=size) as log:
        assert log.start_offset() == 6 and log.end_offset() == 10


def flip_bit(path: Path, position: int) -> None:
    os.chmod(path, 0o600)  # frozen snapshots are read-only
    data = bytearray(path.read_bytes())
    data[position] ^= 0x10
    path.write_bytes(bytes(data))


def test_a_corrupt_newest_snapshot_the_log_covers_is_set_aside(tmp_path):
    """An older snapshot at the log start and the log past the corrupt one: nothing
    is lost by dropping it, so start-up sets it aside and goes on."""
    with open_log(tmp_path) as log:
        fill(log, [1, 1, 2])
        freeze(log, OffsetAndEpoch(2, 1))
        freeze(log, OffsetAndEpoch(4, 1))
    newest = tmp_path / PART / "00000000000000000004-0000000001.checkpoint"
    flip_bit(newest, newest.stat().st_size - 3)
    with open_log(tmp_path) as log:
        assert log.latest_snapshot() == OffsetAndEpoch(2, 1) and log.end_offset() == 6
        assert log.recovery_problems == [f"{newest.name}: CRC mismatch in batch at offset 0 (position 0)"]
    assert (tmp_path / PART / (newest.name + ".corrupt")).exists() and not newest.exists()


def test_a_corrupt_snapshot_the_log_does_not_cover_stops_start_up(tmp_path):
    from kraft_server.log.disk import LogCorruption
    size = len(batch(0, 1))
    with open_log(tmp_path, segment_bytes=size) as log:
        fill(log, [1, 1, 2, 2])
        freeze(log, OffsetAndEpoch(6, 2))
        log.delete_before_snapshot(OffsetAndEpoch(6, 2))
        assert log.start_offset() == 6
    path = tmp_path / PART / "00000000000000000006-0000000002.checkpoint"
    flip_bit(path, 30)
    with pytest.raises(LogCorruption, match="is corrupt .* refusing to start") as caught:
        open_log(tmp_path, segment_bytes=size)
    assert caught.value.path == path and path.exists()


def test_snapshot_beyond_the_log_restarts_the_log_there(tmp_path):
    """A follower that died after installing a snapshot but before truncating."""
    with open_log(tmp_path) as log:
        fill(log, [1])
        freeze(log, OffsetAndEpoch(100, 7))
        log.flush()
    with open_log(tmp_path) as log:
        assert (log.start_offset(), log.end_offset()) == (100, 100)
        assert log.last_fetched_epoch() == 7
    assert "00000000000000000100.log" in names(tmp_path / PART)
    assert "00000000000000000000.log" not in names(tmp_path / PART)


def test_reset_to_snapshot_deletes_older_state(tmp_path):
    with open_log(tmp_path) as log:
        fill(log, [1, 1])
        freeze(log, OffsetAndEpoch(2, 1))
        freeze(log, OffsetAndEpoch(50, 4))
        log.reset_to_snapshot(OffsetAndEpoch(50, 4))
    files = names(tmp_path / PART)
    assert "00000000000000000050.log" in files and "00000000000000000000.log" not in files
    assert "00000000000000000002-0000000001.checkpoint" not in files
    assert (tmp_path / PART / "leader-epoch-checkpoint").read_text() == "0\n0\n"


def test_truncate_below_start_restarts_the_log(tmp_path):
    with open_log(tmp_path) as log:
        fill(log, [1, 1, 1])
        freeze(log, OffsetAndEpoch(4, 1))
        log.delete_before_snapshot(OffsetAndEpoch(4, 1))
        log.truncate_to(2)
        assert (log.start_offset(), log.end_offset()) == (2, 2)


# -- Kafka's end-offset-for-epoch answers where the contract leaves room ----------------

def test_end_offset_for_epoch_follows_kafka(tmp_path):
    """``KafkaMetadataLog.endOffsetForEpoch`` over ``LeaderEpochFileCache.endOffsetFor``:
    an epoch older than the log answers (that epoch, start of the first known epoch);
    an unknown one (-1, or no cache) answers (log end, last fetched epoch)."""
    with open_log(tmp_path) as log:
        fill(log, [2, 2, 4])
        assert log.end_offset_for_epoch(1) == OffsetAndEpoch(0, 1)
        assert log.end_offset_for_epoch(-1) == OffsetAndEpoch(6, 4)
        freeze(log, OffsetAndEpoch(4, 2))
        log.delete_before_snapshot(OffsetAndEpoch(4, 2))
        # the cache now starts with (4, 4): older epochs end at the log start, which
        # is the earliest snapshot, so the answer is that snapshot's id
        assert log.epochs.entries == [(4, 4)]
        assert log.end_offset_for_epoch(3) == OffsetAndEpoch(4, 2)
        assert log.end_offset_for_epoch(1) == OffsetAndEpoch(4, 2)
        assert log.end_offset_for_epoch(4) == OffsetAndEpoch(6, 4)
