"""End to end in the deterministic simulation: a follower that was down while the
leader snapshotted and moved its log start catches up through FetchSnapshot, and its
controller rebuilds the same metadata image from the snapshot."""
from __future__ import annotations

import pytest

from kraft_server.log.bootstrap import LATEST_METADATA_VERSION
from kraft_server.raft.roles.base import Role
from tests.simulation.cluster import HEALTHY, Simulation


@pytest.mark.parametrize("kraft_version", [0, 1])
def test_lagging_follower_installs_snapshot(kraft_version):
    sim = Simulation(5, 3, HEALTHY, kraft_version=kraft_version, observers=0)
    sim.run(800)
    leader = sim.leader()
    assert leader is not None
    lagger = next(n for n in sim.nodes.values() if n is not leader)
    lagger.raft = None  # a clean stop
    lagger.log.flush()
    stopped_at = lagger.log.end_offset()
    sim.run(6000)
    leader = sim.leader()
    assert leader.log.start_offset() > stopped_at, "retention must have moved the leader's log start"
    sim._start(lagger)
    sim.run(sim.events_run + 3000)
    assert lagger.raft.stats["snapshots_installed"] >= 1
    assert lagger.raft.role is Role.FOLLOWER
    assert lagger.controller.loader.loaded_snapshot is not None
    # Both images hold the same state once both replayed the same offset.
    sim.run(sim.events_run + 200)
    a, b = sim.leader().controller.image, lagger.controller.image
    if a.offset == b.offset:
        assert a.content() == b.content()
    assert b.features["metadata.version"] == LATEST_METADATA_VERSION[1] and set(b.controllers) <= {1, 2, 3}
    assert sim.checker.snapshots_written > 0
