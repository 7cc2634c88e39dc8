"""Deterministic simulation of KRaft quorums (tests/simulation): invariants after
every step over many seeds, plus progress in healthy runs.

Each case runs a group of seeds; a failure names the seed and the command that
replays it. ``SIM_SEEDS`` / ``SIM_EVENTS`` override the defaults (200 seeds x 5,000
events for 3 nodes, 100 x 5,000 for 5 nodes).
"""
from __future__ import annotations

import os

import pytest

from kraft_server.raft.roles.base import Role
from tests.simulation.runner import replay_command, run_healthy, run_seed

SEEDS = int(os.environ.get("SIM_SEEDS", "200"))
EVENTS = int(os.environ.get("SIM_EVENTS", "5000"))
GROUP = 20


def _groups(total: int):
    return [range(start, min(start + GROUP, total)) for start in range(0, total, GROUP)]


def _run_group(seeds, nodes: int) -> None:
    failures = []
    for seed in seeds:
        try:
            run_seed(seed, EVENTS, nodes)
        except Exception as exc:  # noqa: BLE001 - collect every failing seed of the group
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}\n"
                            f"    replay: {replay_command(seed, EVENTS, nodes)}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("seeds", _groups(SEEDS), ids=lambda r: f"seeds{r.start}-{r.stop - 1}")
def test_three_nodes(seeds):
    _run_group(seeds, 3)


@pytest.mark.parametrize("seeds", _groups(max(SEEDS // 2, 1)),
                         ids=lambda r: f"seeds{r.start + 1000}-{r.stop + 999}")
def test_five_nodes(seeds):
    _run_group(range(seeds.start + 1000, seeds.stop + 1000), 5)


MEMBERSHIP_SEEDS = int(os.environ.get("SIM_MEMBERSHIP_SEEDS", "20"))


@pytest.mark.parametrize("seeds", _groups(MEMBERSHIP_SEEDS), ids=lambda r: f"seeds{r.start}-{r.stop - 1}")
def test_membership_changes(seeds):
    """Random voter adds/removes (the leader too) and disk replacements with auto-join,
    under the default faults (tests/simulation/membership.py)."""
    from tests.simulation.membership import run_membership_seed
    failures, changes = [], 0
    for seed in seeds:
        try:
            changes += run_membership_seed(seed, EVENTS)["voter_changes_committed"]
        except Exception as exc:  # noqa: BLE001
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}\n    replay: "
                            f"{replay_command(seed, EVENTS, 3)} --membership")
    assert not failures, "\n".join(failures)
    assert changes >= len(seeds)  # the seeds really changed voter sets


# Membership seeds that once failed, beyond the range above (1 and 18 are inside it):
# stale candidates in the ElectionSetsOverlap check (22, 48, 53, 105, 153, 186) and a
# disk lost during an uncommitted voter change (220), and a voter change while a lost
# disk still votes (359 at 15,000 events). Seeds 144, 159 and 170 of the
# first sweep replay other runs since kraft.version-1 nodes negotiate KIP-853 RPC
# versions (cluster.VERSION_CHOICES_KRAFT_V1); tests/test_raft_sim_regressions.py
# keeps their root causes.
MEMBERSHIP_REGRESSION_SEEDS = ((22, EVENTS), (48, EVENTS), (53, EVENTS), (105, EVENTS), (153, EVENTS),
                               (186, EVENTS), (220, EVENTS), (359, 15000))


def test_membership_regression_seeds():
    from tests.simulation.membership import run_membership_seed
    failures = []
    for seed, events in MEMBERSHIP_REGRESSION_SEEDS:
        try:
            run_membership_seed(seed, events)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}\n    replay: "
                            f"{replay_command(seed, events, 3)} --membership")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("nodes", [1, 3, 5])
@pytest.mark.parametrize("kraft_version", [0, 1])
def test_healthy_cluster_elects_once_and_commits(nodes, kraft_version):
    from tests.simulation.cluster import HEALTHY, Simulation
    sim = Simulation(7, nodes, HEALTHY, kraft_version=kraft_version, observers=0)
    sim.run(3000)
    leaders = [n for n in sim.nodes.values() if n.raft.role is Role.LEADER]
    assert len(leaders) == 1
    # No faults: one election, everybody follows it, and proposals commit.
    assert len(sim.checker.leaders) == 1, sim.checker.leaders
    assert all(n.raft.role is Role.FOLLOWER for n in sim.nodes.values() if n is not leaders[0])
    assert sim.checker.committed_end > 100
    assert sim.proposed > 0
    hwms = {n.raft.high_watermark for n in sim.nodes.values()}
    assert min(hwms) > 0


def test_healthy_cluster_with_observer_replicates_to_it():
    from tests.simulation.cluster import HEALTHY, Simulation
    sim = Simulation(3, 3, HEALTHY, kraft_version=1, observers=1)
    sim.run(3000)
    observer = sim.nodes[4]
    assert observer.raft.role is Role.FOLLOWER and not observer.raft.is_voter()
    assert observer.raft.high_watermark > 0
    leader = sim.leader()
    voters, observers = leader.raft.replica_states(sim.now)
    assert [s.key.node_id for s in observers] == [4]
    assert sorted(s.key.node_id for s in voters) == [1, 2, 3]


def test_same_seed_replays_identically():
    a = run_seed(42, 2000, 3)
    b = run_seed(42, 2000, 3)
    assert a == b


def test_run_healthy_helper_makes_progress():
    sim = run_healthy(11, 2000, 3)
    assert sim.checker.committed_end > 0


@pytest.mark.parametrize("nodes", [3, 5])
def test_chaos_profile(nodes):
    """20% loss, 300 ms delays, frequent crashes/partitions/jumps/snapshots/shutdowns."""
    from tests.simulation.__main__ import PROFILES
    failures = []
    for seed in range(2000, 2020):
        try:
            run_seed(seed, EVENTS, nodes, PROFILES["chaos"])
        except Exception as exc:  # noqa: BLE001
            failures.append(f"seed {seed}: {type(exc).__name__}: {exc}\n    replay: "
                            f"{replay_command(seed, EVENTS, nodes)} --profile chaos")
    assert not failures, "\n".join(failures)
