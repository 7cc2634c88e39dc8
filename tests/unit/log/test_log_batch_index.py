"""The batch index of a segment (``kraft_server/log/batch_index.py``: ``.batches``,
``.batchcheck``, ``.batchmarks``): start-up takes the flushed batches from it instead of
scanning them again, and recovers exactly as a full scan would whatever the index holds
(missing, stale, torn, zero-filled, garbage, the 40-byte format of earlier versions)."""
from __future__ import annotations

import os
import random
import struct

import pytest

from kraft_server.log import batch_index, boot_mark, index_seal
from kraft_server.log.file_log import FileReplicatedLog
from wire.records import build_batch

PART = "__cluster_metadata-0"
SUFFIXES = batch_index.SUFFIXES


def index_file(tmp_path, suffix=batch_index.SUFFIX, base=0):
    return tmp_path / PART / f"{base:020d}{suffix}"


def batch(offset: int, epoch: int, n: int = 1) -> bytes:
    return build_batch(offset, epoch, 1000 + offset, [(None, os.urandom(20))] * n)


def fill(log, epochs, rng=None):
    rng = rng or random.Random(0)
    for e in epochs:
        log.append(batch(log.end_offset(), e, rng.randint(1, 5)))


def state(log):
    seg = log.segments[-1]
    return (list(seg.positions), list(seg.next_offsets), seg.last_timestamp, log.epochs.entries,
            log.end_offset(), log.read(0, 1 << 30))


def reboot(tmp_path):
    """What a power loss leaves: the boot mark names another boot than the current one."""
    (tmp_path / PART / boot_mark.MARK).write_text("00000000-0000-0000-0000-000000000000")


def reference(tmp_path):
    """The same directory opened with every index removed (a full scan)."""
    part = tmp_path / PART
    for suffix in SUFFIXES:
        for f in part.glob("*" + suffix):
            f.unlink()
    with FileReplicatedLog(part) as log:
        assert log.segments[-1].from_index == 0
        return state(log)


def test_reopen_takes_flushed_batches_from_the_index(tmp_path):
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 50 + [2] * 30 + [5] * 20)
        log.flush()
        expected = state(log)
    index = index_file(tmp_path)
    assert index.stat().st_size == batch_index.HEADER.size + 100 * 8
    assert index_file(tmp_path, batch_index.NEXT_SUFFIX).stat().st_size == batch_index.HEADER.size + 100 * 8
    assert index_file(tmp_path, batch_index.CHECK_SUFFIX).stat().st_size == 100 * batch_index.CHECK.size
    # three epoch runs: three marks
    assert index_file(tmp_path, batch_index.MARKS_SUFFIX).stat().st_size == 3 * batch_index.MARK.size
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 100
        assert state(log) == expected
        assert log.epochs.entries == [(1, 0), (2, expected[1][49]), (5, expected[1][79])]
        fill(log, [6] * 5)  # appends after an indexed open go on indexing
        log.flush()
        expected = state(log)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 105 and state(log) == expected
    assert reference(tmp_path) == expected


def test_unflushed_batches_are_scanned_and_a_torn_tail_cut(tmp_path):
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 40)
        log.flush()
        fill(log, [1] * 10)  # written, never flushed: not in the index
        seg = log.segments[0]
        os.pwrite(seg.fd, b"\x00\x00\x00\x00\x00\x00\x00\x33\x00\x00\x01", seg.size)  # a torn batch
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 40
        assert log.end_offset() == log.segments[0].next_offsets[-1] and len(log.segments[0].positions) == 50
        assert log.recovery_problems  # the torn batch was cut
        expected = state(log)
    assert reference(tmp_path) == expected


def test_truncation_truncates_the_index(tmp_path):
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 30)
        log.flush()
        log.truncate_to(log.segments[0].next_offsets[9])  # keep 10 batches
        fill(log, [2] * 5)
        log.flush()
        data = log.read(0, 1 << 30)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 15 and log.read(0, 1 << 30) == data
        got = state(log)
    assert got == reference(tmp_path)


DAMAGES = {  # damage -> batches still taken from the index (0: a full scan; 20: up to the first seal)
    "stale": 0, "garbage": 0, "short": 20, "empty": 0, "shifted": 0, "zero-page": 0, "bad-magic": 0,
    "check-short": 20, "check-missing": 0, "check-zero-tail": 0, "marks-missing": 0,
    "marks-zeroed": 0, "marks-short": 0, "last-epoch": 0, "last-crc": 0,
    "next-short": 20, "seal-flip": 20, "middle-position": 0, "middle-next": 0, "middle-mark-epoch": 0, "next-zero-page": 0, "next-missing": 0, "swapped-columns": 0,
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_bad_index_falls_back_to_a_full_scan(tmp_path, damage):
    with FileReplicatedLog.open(tmp_path) as log:  # two flushes: two seals (20 and 30 batches)
        fill(log, [1] * 10 + [2] * 10)
        log.flush()
        fill(log, [2] * 10)
        log.flush()
    index = index_file(tmp_path)
    check = index_file(tmp_path, batch_index.CHECK_SUFFIX)
    marks = index_file(tmp_path, batch_index.MARKS_SUFFIX)
    nexts = index_file(tmp_path, batch_index.NEXT_SUFFIX)
    good, good_check, good_marks = index.read_bytes(), check.read_bytes(), marks.read_bytes()
    good_next = nexts.read_bytes()
    head, size = batch_index.HEADER.size, batch_index.WORD.size
    if damage == "stale":
        # the segment was truncated and rewritten but the index kept its old entries
        with FileReplicatedLog.open(tmp_path) as log:
            log.truncate_to(log.segments[0].next_offsets[19])
            fill(log, [3] * 10, random.Random(9))
            log.flush()
        index.write_bytes(good)
        check.write_bytes(good_check)
        marks.write_bytes(good_marks)
    elif damage == "garbage":
        index.write_bytes(good[:head] + os.urandom(len(good) - head))
    elif damage == "short":
        index.write_bytes(good[:-7])  # a torn last entry: the whole entries before it still count
    elif damage == "empty":
        index.write_bytes(b"")
    elif damage == "zero-page":
        # entries 5-14 never reached the disk, the last one did (a power loss)
        index.write_bytes(good[:head + 5 * size] + bytes(10 * size) + good[head + 15 * size:])
        reboot(tmp_path)
    elif damage == "next-short":
        nexts.write_bytes(good_next[:-1])
    elif damage == "next-zero-page":
        nexts.write_bytes(good_next[:head] + bytes(size) + good_next[head + size:])
        reboot(tmp_path)
    elif damage == "next-missing":
        nexts.unlink()
    elif damage == "swapped-columns":
        index.write_bytes(good_next)
        nexts.write_bytes(good)
    elif damage == "bad-magic":
        index.write_bytes(b"X" + good[1:])
    elif damage == "check-short":
        check.write_bytes(good_check[:-3])
    elif damage == "check-missing":
        check.unlink()
    elif damage == "check-zero-tail":
        check.write_bytes(good_check[:-batch_index.CHECK.size] + bytes(batch_index.CHECK.size))
    elif damage == "marks-missing":
        marks.unlink()
    elif damage == "marks-zeroed":
        marks.write_bytes(bytes(len(good_marks)))
    elif damage == "marks-short":
        marks.write_bytes(good_marks[:-batch_index.MARK.size])  # the epoch-2 run's mark is lost
    elif damage == "last-epoch":
        wrong = bytearray(good_marks)
        struct.pack_into("<i", wrong, batch_index.MARK.size + 8, 7)  # epoch 2's run says 7
        marks.write_bytes(bytes(wrong))
    elif damage == "seal-flip":  # the last seal is ignored: the one before it (20 batches) is used
        seal = index_file(tmp_path, index_seal.SEAL_SUFFIX)
        wrong = bytearray(seal.read_bytes())
        wrong[-10] ^= 0x04
        seal.write_bytes(bytes(wrong))
    elif damage in ("middle-position", "middle-next"):  # still ascending: only the seal's CRC sees it
        path, good_column = (index, good) if damage == "middle-position" else (nexts, good_next)
        wrong = bytearray(good_column)
        wrong[head + 12 * size] ^= 0x01
        path.write_bytes(bytes(wrong))
    elif damage == "middle-mark-epoch":  # the epoch-2 run says 3: well formed, wrong
        wrong = bytearray(good_marks)
        wrong[batch_index.MARK.size + 8] ^= 0x01
        marks.write_bytes(bytes(wrong))
    elif damage == "last-crc":
        wrong = bytearray(good_check)
        struct.pack_into("<I", wrong, len(wrong) - 8, 1234)
        check.write_bytes(bytes(wrong))
    else:
        entries = bytearray(good)
        struct.pack_into("<q", entries, len(entries) - size, 5)  # last position wrong
        index.write_bytes(bytes(entries))
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == DAMAGES[damage]
        got = state(log)
    assert got == reference(tmp_path)
    with FileReplicatedLog.open(tmp_path) as log:  # the index was rewritten: used next time
        assert log.segments[0].from_index == len(got[0]) and state(log) == got


def old_format_index(log) -> bytes:
    """The 40-byte entries of the earlier ``.batchindex`` (position, next offset, max
    timestamp so far, epoch, CRC, attributes) for ``log``'s only segment."""
    from wire.records.header import read_header
    out, top = bytearray(), -1
    seg = log.segments[0]
    for pos in seg.positions:
        h = read_header(seg.read(pos, pos + 61))
        top = max(top, h.max_timestamp)
        out += struct.pack("<qqqiIh6x", pos, h.next_offset, top, h.partition_leader_epoch, h.crc, h.attributes)
    return bytes(out)


@pytest.mark.parametrize("where", ["old-suffix", "new-suffix"])
def test_an_index_in_the_old_40_byte_format_is_rebuilt_never_read(tmp_path, where):
    """A node upgraded in place: its ``.batchindex`` files are deleted and the segment
    scanned; the same bytes under the new name fail the header check."""
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 20 + [4] * 12)
        log.flush()
        expected = state(log)
        old = old_format_index(log)
    for suffix in SUFFIXES:
        index_file(tmp_path, suffix).unlink()
    if where == "old-suffix":
        index_file(tmp_path, batch_index.OLD_SUFFIX).write_bytes(old)
    else:
        index_file(tmp_path, batch_index.SUFFIX).write_bytes(old)
        index_file(tmp_path, batch_index.NEXT_SUFFIX).write_bytes(old)
        index_file(tmp_path, batch_index.CHECK_SUFFIX).write_bytes(old)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 0 and state(log) == expected
    assert not index_file(tmp_path, batch_index.OLD_SUFFIX).exists()
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 32 and state(log) == expected


def test_epoch_runs_and_control_batches_across_segment_boundaries(tmp_path):
    """Each segment's marks start with its own first batch (an epoch run that began in
    the previous segment, a control batch opening a segment), so every segment's index
    stands alone; truncation inside and at a boundary keeps them exact."""
    from wire.messages import LeaderChangeMessage
    from wire.records import ControlRecordType, build_control_batch

    def control(offset, epoch):
        return build_control_batch(offset, epoch, 5, [(ControlRecordType.LEADER_CHANGE, LeaderChangeMessage(
            version=0, leader_id=1, voters=[], granting_voters=[]))])

    def everything(log):
        return ([(s.base_offset, list(s.positions), list(s.next_offsets), list(s.controls), s.last_timestamp)
                 for s in log.segments], log.epochs.entries, log.control_offsets(0))

    rng = random.Random(3)
    with FileReplicatedLog.open(tmp_path, segment_bytes=1500) as log:
        for epoch in (1, 2, 3, 4, 5, 6):
            fill(log, [epoch] * rng.randint(3, 15), rng)
            # a control batch rolls its own segment when the active one is full
            while log.segments[-1].size + 200 < 1500:
                fill(log, [epoch], rng)
            log.append(control(log.end_offset(), epoch))
        log.flush()
        assert len(log.segments) >= 5
        assert any(s.controls and s.controls[0] == 0 for s in log.segments[1:])  # a control opens a segment
        expected = everything(log)
    with FileReplicatedLog.open(tmp_path, segment_bytes=1500) as log:
        assert all(s.from_index == len(s.positions) for s in log.segments)
        assert everything(log) == expected
        # truncate inside the third segment, then a new epoch
        third = log.segments[2]
        log.truncate_to(third.next_offsets[len(third.positions) // 2])
        fill(log, [9] * 4)
        log.append(control(log.end_offset(), 9))
        log.flush()
        expected = everything(log)
    with FileReplicatedLog.open(tmp_path, segment_bytes=1500) as log:
        assert all(s.from_index == len(s.positions) for s in log.segments)
        assert everything(log) == expected
        log.truncate_to(log.segments[-1].base_offset)  # the active segment emptied at its base
        fill(log, [10] * 3)
        log.flush()
        expected = everything(log)
    with FileReplicatedLog.open(tmp_path, segment_bytes=1500) as log:
        assert everything(log) == expected
    part = tmp_path / PART
    for suffix in SUFFIXES:
        for f in part.glob("*" + suffix):
            f.unlink()
    with FileReplicatedLog.open(tmp_path, segment_bytes=1500) as log:  # a full scan agrees
        assert sum(s.from_index for s in log.segments) == 0
        assert everything(log) == expected


def test_rolled_and_deleted_segments_keep_their_own_index(tmp_path):
    with FileReplicatedLog.open(tmp_path, segment_bytes=2000) as log:
        fill(log, [1] * 60)
        log.flush()
        assert len(log.segments) > 2
        bases = [s.base_offset for s in log.segments]
        counts = [len(s.positions) for s in log.segments]
        data = b"".join(log.read(s.base_offset, 1 << 30) for s in log.segments)
    with FileReplicatedLog.open(tmp_path, segment_bytes=2000) as log:
        assert [s.from_index for s in log.segments] == counts
        assert [s.base_offset for s in log.segments] == bases
        whole = b"".join(log.read(s.base_offset, 1 << 30) for s in log.segments)
        assert whole == data
        log.truncate_to(bases[1])  # deletes the later segments with their index files
    part = tmp_path / PART
    for suffix in SUFFIXES:
        left = sorted(p.name for p in part.glob("*" + suffix))
        assert left == [f"{b:020d}{suffix}" for b in bases[:2]]
    assert (part / left[1]).stat().st_size == 0  # the emptied segment's index is empty too


def test_control_batches_are_indexed_for_the_voter_history(tmp_path):
    from wire.messages import LeaderChangeMessage
    from wire.records import ControlRecordType, build_control_batch, walk

    def control(offset, epoch):
        return build_control_batch(offset, epoch, 5, [(ControlRecordType.LEADER_CHANGE, LeaderChangeMessage(
            version=0, leader_id=1, voters=[], granting_voters=[]))])

    with FileReplicatedLog.open(tmp_path, segment_bytes=3000) as log:
        for epoch in (1, 2, 3, 4):
            log.append(control(log.end_offset(), epoch))
            fill(log, [epoch] * 12)
        log.flush()
        log.append(control(log.end_offset(), 5))  # not flushed: scanned at the next open
        walked = [i.base_offset for s in log.segments for i in walk(log.read(s.base_offset, 1 << 30))
                  if i.is_control]
        assert log.control_offsets(0) == walked and len(walked) == 5
    with FileReplicatedLog.open(tmp_path, segment_bytes=3000) as log:
        assert sum(s.from_index for s in log.segments) > 0
        assert log.control_offsets(0) == walked
        assert log.control_offsets(walked[2]) == walked[2:]
        log.truncate_to(walked[3] + 1)
        assert log.control_offsets(0) == walked[:4]


def test_a_clean_reopen_rewrites_nothing(tmp_path):
    """Start-up on a whole index writes no file: the index is not rewritten and the
    leader-epoch-checkpoint only when the batches say otherwise (no fsync paid)."""
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 10 + [3] * 10)
        log.flush()
    part = tmp_path / PART
    checkpoint = part / "leader-epoch-checkpoint"
    files = [checkpoint] + [index_file(tmp_path, s) for s in SUFFIXES]
    before = [(f.stat().st_ino, f.stat().st_mtime_ns, f.stat().st_size) for f in files]
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 20
    assert [(f.stat().st_ino, f.stat().st_mtime_ns, f.stat().st_size) for f in files] == before
    checkpoint.write_text("0\n1\n1 0\n")  # stale: epoch 3 missing
    with FileReplicatedLog.open(tmp_path) as log:
        third = log.segments[0].next_offsets[9]
        assert log.epochs.entries == [(1, 0), (3, third)]
    assert checkpoint.read_text() == f"0\n2\n1 0\n3 {third}\n"


def test_only_the_active_segment_keeps_its_index_files_open(tmp_path):
    """The index files are appended on kept-open fds (no open/close per flush), and a
    rolled segment closes them: many segments do not pile up open files."""
    def open_index_files():
        fd_dir = "/proc/self/fd"
        if not os.path.isdir(fd_dir):
            pytest.skip("no /proc/self/fd on this platform")
        names = []
        for fd in os.listdir(fd_dir):
            try:
                names.append(os.readlink(f"{fd_dir}/{fd}"))
            except OSError:
                pass
        return sorted(n for n in names if n.endswith(batch_index.SUFFIXES) and n.startswith(str(tmp_path)))

    with FileReplicatedLog.open(tmp_path, segment_bytes=1000) as log:
        for _ in range(12):
            fill(log, [1] * 8)
            log.flush()
        assert len(log.segments) > 5
        stem = f"{log.segments[-1].base_offset:020d}"
        assert open_index_files()  # the active segment's, kept open
        assert all(os.path.basename(n).startswith(stem) for n in open_index_files())
        assert len(open_index_files()) <= len(batch_index.SUFFIXES)
        expected = state(log)
    assert open_index_files() == []
    with FileReplicatedLog.open(tmp_path, segment_bytes=1000) as log:
        assert all(s.from_index == len(s.positions) for s in log.segments) and state(log) == expected


def zero_page(tmp_path):
    """Entries 5-14 of the positions zero-filled, as a power loss can leave them."""
    index = index_file(tmp_path)
    good = index.read_bytes()
    head, size = batch_index.HEADER.size, batch_index.WORD.size
    index.write_bytes(good[:head + 5 * size] + bytes(10 * size) + good[head + 15 * size:])


def test_zero_words_are_searched_for_after_a_reboot_only(tmp_path):
    """The boot mark (``boot_mark.py``): an open marks the directory with the current
    boot; a mark of this boot means the index files were written or checked since the
    machine booted, so no power loss can have zero-filled them; another boot's mark
    (or none) makes the next open search every entry once."""
    if boot_mark.boot_id() is None:
        pytest.skip("no boot id on this platform: every open searches (see the next test)")
    mark = tmp_path / PART / boot_mark.MARK
    with FileReplicatedLog.open(tmp_path) as log:
        assert not mark.exists()  # an empty log has no index files to vouch for
        fill(log, [1] * 30)
        log.flush()
        expected = state(log)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 30 and state(log) == expected
    assert mark.read_text() == boot_mark.boot_id()
    zero_page(tmp_path)
    reboot(tmp_path)
    with FileReplicatedLog.open(tmp_path) as log:  # searched: rebuilt by a scan
        assert log.segments[0].from_index == 0 and state(log) == expected
    assert mark.read_text() == boot_mark.boot_id()
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 30 and state(log) == expected
    mark.unlink()  # no mark: searched as after a reboot
    zero_page(tmp_path)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 0 and state(log) == expected


def test_without_a_boot_id_every_open_searches(tmp_path, monkeypatch):
    monkeypatch.setattr(boot_mark, "BOOT_ID", str(tmp_path / "no-boot-id"))
    with FileReplicatedLog.open(tmp_path) as log:
        fill(log, [1] * 30)
        log.flush()
        expected = state(log)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 30
    assert not (tmp_path / PART / boot_mark.MARK).exists()
    zero_page(tmp_path)
    with FileReplicatedLog.open(tmp_path) as log:
        assert log.segments[0].from_index == 0 and state(log) == expected
