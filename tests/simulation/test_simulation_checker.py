"""The simulation's checker must catch what it is there to catch: a committed batch
that differs between nodes, a snapshot left below a log's start, and a quorum that
stops committing (with a diagnosis of what each node waits for)."""
from __future__ import annotations

import pytest

from kraft_server.log.memory import MemoryLog
from wire.records import build_batch, walk
from tests.simulation import cluster
from tests.simulation.cluster import HEALTHY, Simulation
from tests.simulation.invariants import InvariantViolation
from tests.simulation.runner import NO_CHURN, NoProgress, calm_until_progress, run_case


def _healthy(seed: int = 5) -> Simulation:
    sim = Simulation(seed, 3, HEALTHY, kraft_version=1, observers=0)
    sim.run(2000)
    assert sim.checker.committed_end > 50
    return sim


def test_a_planted_divergence_below_the_hwm_is_caught():
    sim = _healthy()
    leader = sim.leader()
    follower = next(n for n in sim.nodes.values() if n is not leader)
    log = follower.log
    # Rewrite one committed data batch of the follower: same offsets and epoch,
    # other record bytes (as a follower that kept an uncommitted batch would hold).
    base, last, epoch, data = next(b for b in log.batches() if b[0] > 10 and b[0] < follower.raft.high_watermark
                                   and not walk(b[3])[0].is_control)
    rest = [b[3] for b in log.batches() if b[0] > base]
    log.truncate_to(base)
    log.append(build_batch(base, epoch, 0, [(None, b"planted")] * (last - base + 1)))
    for b in rest:
        log.append(b)
    sim.checker.restarted(follower.node_id)  # check its whole committed prefix again
    with pytest.raises(InvariantViolation, match=f"committed batch at {base} differs"):
        sim.checker.check(follower.node_id, follower.raft, log)


def test_a_snapshot_below_the_log_start_is_caught(monkeypatch):
    """The model bug behind seeds 100102/200084/300011, planted again: a log that keeps
    older snapshots when it installs one. The checker names it before it can do harm."""
    monkeypatch.setattr(MemoryLog, "_forget_snapshots_before", lambda self, snapshot_id: None)
    with pytest.raises(InvariantViolation, match="below the log start"):
        run_case(300011, 10000, 3, membership=NO_CHURN)


def test_a_stalled_quorum_is_reported_with_what_each_node_waits_for(monkeypatch):
    sim = _healthy()
    monkeypatch.setattr(cluster.Simulation, "_deliverable", lambda self, src, dst: False)
    # What was already on its way still lands (and may commit); let it settle first.
    start, budget = sim.now, sim.events_run
    while sim.now - start < 5000:
        budget += 100
        sim.run(budget)
    with pytest.raises(NoProgress) as failure:
        calm_until_progress(sim)
    text = str(failure.value)
    assert "no progress 60000 ms into the calm phase" in text
    for node_id in sim.nodes:
        assert f"  node {node_id}: " in text
    assert "timers (ms from now)" in text and "election_deadline_ms" in text
    assert "sent: req VOTE to" in text and " lost (" in text  # what it sent, and that it was lost
    assert "in flight:" in text and "backing off:" in text


@pytest.mark.parametrize("knob, seed", [("UNREACHABLE_ADD", 4), ("MISADVERTISED_RESTART", 1)])
def test_an_unreachable_endpoint_committed_is_caught(monkeypatch, knob, seed):
    """Issue 39 (KAFKA-20661): a leader that took a refused ApiVersions probe for an
    answer would commit a port nobody listens on, from an AddRaftVoter or from a
    misconfigured voter's UpdateRaftVoter; the membership checker names it, and with
    the probe's refusal in place the same seed passes."""
    from kraft_server.raft.rpc import add_voter
    from tests.simulation import membership
    monkeypatch.setattr(membership, knob, 1.0)  # every add (or restart) advertises a dead port
    summary = run_case(seed, 5000, 3, membership=True)
    assert summary["dead_address_probes"] > 0
    real = add_voter.handle_api_versions_response

    def ignoring_failures(node, inflight, body, failure, now_ms):
        if failure is not None:  # the bug: a refused connection read as an answer
            from wire.messages import api_versions_response as avr
            body, failure = avr.ApiVersionsResponse(supported_features=[avr.SupportedFeatureKey(
                name="kraft.version", min_version=0, max_version=1)]), None
        return real(node, inflight, body, failure, now_ms)

    monkeypatch.setattr(add_voter, "handle_api_versions_response", ignoring_failures)
    from kraft_server.raft import node as raft_node
    monkeypatch.setitem(raft_node._RESPONSE_HANDLERS, add_voter.API_VERSIONS_KEY, ignoring_failures)
    with pytest.raises(InvariantViolation, match="endpoints .* it does not listen on"):
        run_case(seed, 5000, 3, membership=True)


def test_a_leader_on_a_misadvertised_port_does_not_commit_its_own_entry(monkeypatch):
    """A leader restarted advertising a port nobody listens on probes its own new
    endpoint before it writes its voter entry (``own_voter.py``): refused, nothing is
    written and the run passes. Written unchecked, as Kafka 4.4.0's leader writes its
    own listeners at the start of its epoch, the checker names the dead port."""
    from types import SimpleNamespace

    from kraft_server.raft import own_voter
    from tests.simulation.membership import run_membership_seed
    summary = run_membership_seed(16, 3000)
    assert summary["own_dead_probes"] > 0, summary
    unchecked = SimpleNamespace(endpoints_to_probe=lambda config, endpoints: [], send=None)
    monkeypatch.setattr(own_voter, "probe", unchecked)
    with pytest.raises(InvariantViolation, match="endpoints .* it does not listen on"):
        run_membership_seed(16, 3000)
