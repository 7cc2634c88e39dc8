"""All of the core's writes leave through ``Ready`` (issue 9): the seeded simulation
runs with logs and quorum-state stores that raise on any mutation called from
inside the core (a frame of ``kraft_server/raft/`` on the stack), in the default,
chaos and membership configurations. The shell and the controller may write; the
core may only read. Seeds: a fixed one per configuration plus fresh ones (printed)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import kraft_server.raft as raft_package
from kraft_server.log.memory import MemoryLog, MemoryQuorumStateStore
from kraft_server.raft.rpc.fetch import append_checked
from kraft_server.raft.voter_history import VoterHistory
from kraft_server.raft.voters import VoterSet
from tests.simulation import cluster, membership
from tests.simulation.runner import run_case
from tests.support.fresh_seeds import fresh_rng
from tests.unit.log.test_log_contract import batch

CORE = str(Path(raft_package.__file__).parent) + "/"


class WriteFromCore(AssertionError):
    pass


def _refuse_if_core(what: str) -> None:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith(CORE):
            raise WriteFromCore(f"{what} called from the core ({frame.f_code.co_filename}:{frame.f_lineno})")
        frame = frame.f_back


class GuardedLog(MemoryLog):
    def append(self, data):
        _refuse_if_core("log.append")
        super().append(data)

    def truncate_to(self, offset):
        _refuse_if_core("log.truncate_to")
        super().truncate_to(offset)

    def flush(self):
        _refuse_if_core("log.flush")
        super().flush()

    def create_snapshot(self, snapshot_id):
        _refuse_if_core("log.create_snapshot")
        return super().create_snapshot(snapshot_id)

    def reset_to_snapshot(self, snapshot_id):
        _refuse_if_core("log.reset_to_snapshot")
        super().reset_to_snapshot(snapshot_id)

    def delete_before_snapshot(self, snapshot_id):
        _refuse_if_core("log.delete_before_snapshot")
        super().delete_before_snapshot(snapshot_id)


class GuardedStore(MemoryQuorumStateStore):
    def write(self, state):
        _refuse_if_core("store.write")
        super().write(state)


@pytest.fixture
def guarded(monkeypatch):
    for module in (cluster, membership):
        monkeypatch.setattr(module, "MemoryLog", GuardedLog, raising=False)
        monkeypatch.setattr(module, "MemoryQuorumStateStore", GuardedStore, raising=False)


def test_the_guard_catches_a_write_from_the_core():
    log = GuardedLog()
    with pytest.raises(WriteFromCore, match="log.append"):
        append_checked(log, VoterHistory(VoterSet(()), 0), batch(0, 1))  # a raft/ function
    log.append(batch(0, 1))  # the same call from outside the core is fine
    assert log.end_offset() == 2


FRESH = fresh_rng(__name__).randrange(10**6)
CASES = [(profile, nodes, member, seed)
         for profile, nodes, member in (("default", 3, False), ("chaos", 5, False), ("default", 3, True))
         for seed in (11, FRESH)]


@pytest.mark.parametrize("profile,nodes,member,seed", CASES)
def test_simulation_with_logs_the_core_cannot_write(guarded, profile, nodes, member, seed):
    print(f"seed {seed}")
    summary = run_case(seed, 3000, nodes, profile, member)
    assert summary["events"] >= 3000
    assert summary["committed_end"] > 0
