"""Issue 27, disk faults: a flipped bit in what a node fsync'd is found when it starts,
and it refuses to start in one line instead of truncating records that may be
committed; the same bit flipped back, it starts and leads on its whole log.

The node runs for real (``python -m kraft_server``), is stopped, its files are
damaged, and the start-up is run again. Torn tails (what was never fsync'd) are
still cut: ``test_process_quorum.test_a_torn_tail_is_repaired_at_start_and_the_node_rejoins``.
"""
from __future__ import annotations

import pytest

from tests.process.test_startup_errors import formatted, start_fails
from tests.support.kraft_nodes import read_batches, segment_files, wait_for
from wire.records import iter_headers

PART = "__cluster_metadata-0"


@pytest.fixture
def ran(tmp_path):
    """A one-voter node that committed a few batches and was stopped cleanly."""
    node = formatted(tmp_path)
    node.start()
    try:
        node.wait_leader()
        wait_for(lambda: len(read_batches(node.data)) >= 4, 30, "a few batches on disk")
    finally:
        assert node.stop() == 0
    return node


def flip(path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_flipped_bit_in_a_fsyncd_batch_stops_start_up(ran):
    seg = segment_files(ran.data)[-1]
    batches = list(iter_headers(seg.read_bytes()))
    pos, header = batches[len(batches) // 2]
    flip(seg, pos + header.size - 2)  # inside its records
    line = start_fails(ran.config)
    assert line.startswith(f"ERROR Segment {seg.name} changed below position "), line
    assert f"CRC mismatch in batch at offset {header.base_offset} (position {pos})" in line
    assert line.endswith(f"refusing to start (restore the file, or remove this voter, empty its "
                         f"metadata.log.dir and add it again) ({seg})"), line
    flip(seg, pos + header.size - 2)  # restored: nothing was cut, the node starts on all of it
    end = batches[-1][1].next_offset
    ran.start()
    try:
        ran.wait_leader()
        wait_for(lambda: max(read_batches(ran.data)) >= end, 30, "the log to go on past its old end")
    finally:
        ran.stop()


def test_a_flipped_leader_epoch_no_batch_crc_covers_stops_start_up(ran):
    seg = segment_files(ran.data)[-1]
    pos, _ = list(iter_headers(seg.read_bytes()))[1]
    flip(seg, pos + 15)  # the partition leader epoch's low byte
    line = start_fails(ran.config)
    assert "a field that batch CRCs do not cover (base offset, length or leader epoch) changed" in line, line


def test_a_flipped_bit_in_quorum_state_stops_start_up(ran):
    path = ran.data / PART / "quorum-state"
    first = path.read_bytes().split(b"\n")[0]
    flip(path, first.index(b'"leaderEpoch":') + len(b'"leaderEpoch":'))
    assert start_fails(ran.config) == (
        f"ERROR {path} is corrupt: its CRC-32C line does not match its content (a vote or epoch changed "
        f"on disk; refusing to start on it) ({path})")
