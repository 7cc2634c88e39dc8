"""Voter-set history (raft/voter_history.py): static base, bootstrap, log, HWM, truncation."""
from __future__ import annotations

from wire.messages import KRaftVersionRecord
from wire.records import ControlRecordType, build_batch, build_control_batch

from kraft_server.raft.boundary import Endpoint
from kraft_server.raft.voter_history import VoterHistory
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet


def vs(*ids):
    return VoterSet(tuple(VoterNode(VoterKey(i), (Endpoint("CONTROLLER", f"h{i}", 9000 + i),)) for i in ids))


def voters_batch(offset, *ids, epoch=1):
    return build_control_batch(offset, epoch, 0, [
        (ControlRecordType.KRAFT_VOTERS, vs(*ids).to_voters_record())])


def test_static_base_applies_everywhere():
    h = VoterHistory(vs(1, 2, 3), 0)
    assert h.latest() == vs(1, 2, 3) and h.committed(None) == vs(1, 2, 3)
    assert h.kraft_version() == 0 and not h.only_from_bootstrap()


def test_bootstrap_only_until_a_voters_record_reaches_the_log():
    h = VoterHistory(vs(1), 1)
    assert h.only_from_bootstrap() and h.latest_offset() == -1
    h.observe(voters_batch(0, 1))
    assert not h.only_from_bootstrap() and h.latest_offset() == 0


def test_latest_includes_uncommitted_committed_follows_hwm():
    h = VoterHistory(vs(1, 2, 3), 1)
    h.observe(build_batch(0, 1, 0, [(None, b"x")] * 5))
    h.observe(voters_batch(5, 1, 2, 3, 4))
    h.observe(voters_batch(6, 1, 2, 4))
    assert h.latest() == vs(1, 2, 4)
    assert h.committed(5) == vs(1, 2, 3)      # the record at 5 is not below the HWM yet
    assert h.committed(6) == vs(1, 2, 3, 4)
    assert h.committed(7) == vs(1, 2, 4)


def test_truncation_forgets_dropped_records():
    h = VoterHistory(vs(1, 2, 3), 1)
    h.observe(voters_batch(0, 1, 2, 3, 4))
    h.observe(build_control_batch(1, 1, 0, [
        (ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1))]))
    h.truncate_to(1)
    assert h.latest() == vs(1, 2, 3, 4) and h.next_offset == 1
    h.truncate_to(0)
    assert h.latest() == vs(1, 2, 3) and h.next_offset == 0


def test_snapshot_records_take_effect_at_its_end():
    h = VoterHistory(vs(1), 1)
    h.observe_snapshot(voters_batch(0, 1, 2), 100)
    assert h.latest_offset() == 99 and h.next_offset == 100
    assert h.committed(100) == vs(1, 2) and h.committed(99) == vs(1)
