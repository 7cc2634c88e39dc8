"""Membership changes in the simulation (KIP-853): random AddRaftVoter and
RemoveRaftVoter from an admin client (the leader removing itself included), and
directory-id replacement (a node loses its disk, comes back with a new directory
id and auto-join, removes its old self and adds itself), on top of every fault of
``cluster.Simulation``.

Extra invariants (``MembershipChecker``):

- ElectionSetsOverlap: any majority of the voter set one candidate campaigns with
  in an epoch intersects any majority of another's in that epoch, so one epoch
  never has two winners. "The sets differ by at most one voter" is stronger than
  what Kafka (or single-server Raft changes) guarantees: two uncommitted changes
  from different leaders ({1,3,5} + 2 and {1,3,5} + 4) give candidates
  {1,2,3,5} and {1,3,4,5} in one epoch; their majorities still intersect, and the
  one with the older change cannot win. Such pairs are counted
  (``wide_election_pairs``), not refused. Nor is the rule applied to a *stale*
  candidate, one whose log lacks a VotersRecord already committed: a voter that was
  partitioned or down (or removed without learning it) while the set changed, and
  campaigns with the set it last knew ({1,2,3} after {1,3} + 4 committed). Raft
  promises nothing about such a set's majorities (membership seeds 18 and 272 found
  them disjoint from the current set's); what keeps it from winning is the log check:
  every majority of the committed set holds the record it lacks, so its log is not
  up to date for them. Such pairs are counted (``stale_election_pairs``); a stale
  candidate that did win would still break SingleLeader or LeaderHasAllCommitted.
  A log can also be long enough and still lack committed data: a leader that
  appended a voter change, then resigned before replicating it, keeps that record
  (and its epoch's other records) past the offsets the next leader commits over,
  until it fetches and truncates. It campaigns with the uncommitted set, and its
  log end may pass the committed end (membership-3 seed 49400798: 2 stood in epoch
  21 with {1,2,5} from its epoch-17 tail, 3 with {1,2,3,4,5}; 2's log ended at 673
  with last epoch 17, the committed end 658 was of epoch 19). Such a candidacy is
  stale too, by Raft's own vote rule: its (last epoch, end) is below that of the
  last committed batch, so every voter holding that batch refuses it; counted in
  ``divergent_election_pairs``.
- SafeVotersCommit: when a VotersRecord is first seen committed, a majority of the
  new set holds it durably, and every majority of the old set intersects every
  majority of the new one (one voter added or removed). Kafka commits a change with
  the new set only (``LeaderState`` follows the latest set), so "a majority of
  both" is not the rule: going from 4 voters to 3 commits with 2 of the 3, which is
  not a majority of the old 4 but meets every majority of them.
- ReachableVoterEndpoints: every voter in a committed VotersRecord has the endpoints
  its node listens on. The admin sometimes adds a voter at a port nobody listens on
  (``UNREACHABLE_ADD``), and a node sometimes restarts advertising one
  (``MISADVERTISED_RESTART``, then UpdateRaftVoter); the leader's ApiVersions probe is
  refused there and the change must be refused with it (``endpoint_probe.py``).
- the existing ones, with "a leader is a voter" relaxed as Kafka does: a leader
  whose removal is not committed yet keeps leading.
"""
from __future__ import annotations

import random
import uuid
from dataclasses import replace

from wire.messages import ApiVersionsRequest, ApiVersionsResponse, add_raft_voter_request as areq
from wire.messages import api_versions_response as avr
from wire.messages import remove_raft_voter_request as rreq

from kraft_server.log.memory import MemoryQuorumStateStore
from tests.simulation.disk import SimDisk
from kraft_server.raft.boundary import InboundRequest, SendFailure
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import has_overlapping_majority, majority

from tests.simulation.cluster import CLUSTER_ID, Faults, Simulation
from tests.simulation.invariants import Checker, InvariantViolation

MEMBERSHIP_EVERY_MS = 1500
# Churn (issue 32): right after the admin's request, the leader is cut off, crashed or
# stopped with this probability, before its VotersRecord can reach a majority; and
# while no leader is known the admin retries soon, so the next leader gets a change
# early in its epoch. These are the states where candidates of one epoch stand with
# different voter sets (an uncommitted change left on a deposed leader's tail).
CHURN_DISRUPT = 0.5
CHURN_RETRY_MS = (20, 300)
# and this share of the nodes speaks Vote v1 (no pre-vote, as before KIP-996), so a
# deposed leader's peers campaign for real instead of being held back by pre-votes.
CHURN_NO_PRE_VOTE = 0.5
MIN_VOTERS_FOR_WIPE = 3  # a wiped voter must leave a majority that can commit its removal
# This share of the admin's AddRaftVoter requests advertise a port nobody listens on
# (KAFKA-20661): the leader's ApiVersions probe is refused and it must not commit the
# endpoint. Drawn from a generator of its own, so the other draws replay as before.
UNREACHABLE_ADD = 0.1
# And this share of restarts comes up advertising a port it does not listen on (the
# KAFKA-20661 misconfiguration): as a voter it sends UpdateRaftVoter with that endpoint,
# which the leader must refuse; a later restart advertises the right port again.
MISADVERTISED_RESTART = 0.1


class MembershipChecker(Checker):
    def __init__(self):
        super().__init__()
        # epoch -> {(voter-id set a candidate used, VotersRecord offsets its log held,
        # its log start offset, its log end offset, committed end when it stood, its
        # log's last epoch, the epoch of the last committed batch when it stood)}
        self.election_sets: dict[int, set] = {}
        self.voters_checked: set = set()  # offsets of VotersRecords already verified
        self.changes_committed = 0
        self.wide_election_pairs = 0
        self.stale_election_pairs = 0
        self.divergent_election_pairs = 0
        self.split_epochs: set = set()  # epochs whose candidates stood with different voter sets
        self.lost_disks: dict = {}  # (node id, directory id) -> flushed offset when wiped
        self.sim = None

    def check(self, node_id: int, node, log) -> None:
        if node.role is Role.CANDIDATE:
            mine = frozenset(node.quorum.state.voter_ids)
            entry = (mine, tuple(node.history._voter_offsets), log.start_offset(), log.end_offset(),
                     self.committed_end, log.last_fetched_epoch(), self.committed_last_epoch)
            seen = self.election_sets.setdefault(node.epoch, set())
            if entry not in seen:
                if any(other[0] != mine for other in seen):
                    self.split_epochs.add(node.epoch)
                for other in seen:
                    if majority(len(mine)) + majority(len(other[0])) <= len(mine | other[0]):
                        why = self._stale(entry) or self._stale(other)
                        if why:
                            if why == "divergent":
                                self.divergent_election_pairs += 1
                            else:
                                self.stale_election_pairs += 1
                            continue
                        raise InvariantViolation(f"epoch {node.epoch}: candidates used voter sets "
                                                 f"{sorted(other[0])} and {sorted(mine)}")
                    if len(mine ^ other[0]) > 1:
                        self.wide_election_pairs += 1
                seen.add(entry)
        super().check(node_id, node, log)
        if node.high_watermark is not None and node.role is Role.LEADER:
            self._check_voters_records(node)  # the leader is the first to see a commit

    def _stale(self, entry) -> str | None:
        """Why the candidacy's log was not up to date for the voters holding committed
        data, or None. "short": it ended below the committed end when it stood. "voters":
        it lacked a VotersRecord known committed (one above its log start: below it,
        its snapshot carries the committed set). "divergent": it reached the committed
        end but its last epoch was below the last committed batch's, so what it holds
        at those offsets is another epoch's (an uncommitted tail not yet truncated).
        In each case a voter holding the committed data has a higher (last epoch, end)
        and refuses its vote (``ReplicatedLog`` comparison in Kafka's Vote handling)."""
        _, held, start, end, committed_end, last_epoch, committed_epoch = entry
        if end < committed_end:
            return "short"
        held = set(held)
        if any(offset >= start and offset not in held for offset in self.voters_checked):
            return "voters"
        if last_epoch < committed_epoch:
            return "divergent"
        return None

    def leader_may_lead(self, node) -> bool:
        return node.is_voter() or node.committed_voter_set().is_voter(node.local_key) \
            or node.quorum.state.resign_requested

    def _check_voters_records(self, node) -> None:
        hist = node.history
        hwm = node.high_watermark
        for i, offset in enumerate(hist._voter_offsets):
            if offset >= hwm or offset < 0 or offset in self.voters_checked:
                continue
            self.voters_checked.add(offset)
            snap = node.log.latest_snapshot()
            if node.log.start_offset() > offset or (snap is not None and offset < snap.offset):
                continue  # known from a snapshot, not from a record in this log
            old = hist._voter_sets[i - 1] if i > 0 else hist._base
            new = hist._voter_sets[i]
            if not has_overlapping_majority(old, new):
                raise InvariantViolation(f"VotersRecord at {offset} changes {old.ids()} to {new.ids()}: "
                                         f"their majorities need not intersect")
            if old.keys() != new.keys():
                self.changes_committed += 1
            for voter in new.nodes:
                listening = self.sim.listening.get(voter.key.node_id)
                if listening is not None and not set(voter.endpoints) <= set(listening):
                    raise InvariantViolation(f"VotersRecord at {offset} gives voter {voter.key.node_id} "
                                             f"endpoints {voter.endpoints} it does not listen on")
            holders = [k.node_id for k in new.keys() if self._holds(k, offset)]
            if len(holders) < majority(len(new)):
                raise InvariantViolation(
                    f"VotersRecord at {offset} committed with {holders} of the new set {new.ids()}")

    def _holds(self, key, offset: int) -> bool:
        n = self.sim.nodes.get(key.node_id)
        if n is None or n.config.directory_id != key.directory_id:
            # Another disk now. What the lost one had flushed may have been
            # acknowledged before it went (Raft counts on acknowledged data staying).
            return self.lost_disks.get((key.node_id, key.directory_id), -1) > offset
        return n.log.flushed_offset() > offset and n.log.start_offset() <= offset or \
            (n.log.latest_snapshot() is not None and n.log.latest_snapshot().offset > offset)


class MembershipSimulation(Simulation):
    """``Simulation`` (kraft.version 1, two spare observers) plus membership events."""

    def extra_summary(self) -> dict:
        """What a subclass adds to the run's summary."""
        return {}

    def __init__(self, seed: int, nodes: int = 3, faults: Faults | None = None, churn: bool = True):
        self._admin_seq = 0
        self.wiped: int | None = None  # the node whose disk was replaced, until it is a voter
        self.gone: set[int] = set()  # nodes lost for good (recover.py): never restarted, never added
        # Churn draws from its own generator: with churn off a seed replays as before it.
        self.churn_rng = random.Random(seed * 104729 + 7) if churn else None
        self.disruptions: dict[str, int] = {}
        self.unreachable_rng = random.Random(seed * 15485863 + 11)
        self.unreachable_adds = 0
        self.misadvertise_rng = random.Random(seed * 32452843 + 5)
        self.misadvertised_restarts = 0
        self.dead_address_probes = 0  # ApiVersions probes refused: nothing listens there
        self.own_dead_probes = 0  # ...of them, a leader's probe of its own new endpoint
        self.listening: dict[int, tuple] = {}  # node id -> the endpoints it really listens on
        super().__init__(seed, nodes, faults, kraft_version=1, observers=2)
        self.checker_swap()
        self._push(self.now + MEMBERSHIP_EVERY_MS, "membership")

    def checker_swap(self) -> None:
        checker = MembershipChecker()
        checker.sim = self
        self.checker = checker

    def _make_node(self, node_id: int):
        node = super()._make_node(node_id)
        self.listening[node_id] = node.config.listeners
        node.max_versions.update({80: 1, 81: 0})
        if self.churn_rng is not None and self.churn_rng.random() < CHURN_NO_PRE_VOTE:
            node.max_versions[52] = 1  # no KIP-996 pre-vote: its peers stand for real at once
        return node

    # -- the ApiVersions probe and admin answers ---------------------------------------
    def _send_request(self, node, req) -> None:
        if req.api_key != ApiVersionsRequest.API_KEY:
            return super()._send_request(node, req)
        dst = req.destination.node_id
        node.pending[req.correlation] = (req.api_key, req.destination)
        self._push(self.now + node.config.request_timeout_ms, "timeout", node.node_id,
                   node.incarnation, req.correlation)
        peer = self.nodes.get(dst)
        if peer is None or peer.raft is None or not self._deliverable(node.node_id, dst):
            return
        ep = req.destination.endpoint
        if all((e.host, e.port) != (ep.host, ep.port) for e in self.listening[dst]):
            # nothing listens there: the connection is refused
            self.dead_address_probes += 1
            self.own_dead_probes += dst == node.node_id  # a leader on a misadvertised port (own_voter.py)
            self._push(self.now + self.net_rng.randint(1, 5), "fail", node.node_id, node.incarnation,
                       req.correlation, SendFailure.DISCONNECTED)
            return
        cfg = peer.config
        body = ApiVersionsResponse(supported_features=[avr.SupportedFeatureKey(
            name="kraft.version", min_version=cfg.kraft_version_min, max_version=cfg.kraft_version_max)])
        self._push(self.now + 2 * self._delay(), "deliver", "resp", node.node_id, node.incarnation, dst,
                   req.correlation, ApiVersionsRequest.API_KEY, 4, body.encode(4))

    def _send_response(self, node, resp) -> None:
        if resp.handle[0] == "admin":
            node.raft.stats[f"admin_{resp.api_key}_{int(resp.body.error_code)}"] += 1
            return
        super()._send_response(node, resp)

    # -- membership events -----------------------------------------------------------------
    def _on_membership(self) -> None:
        leader = self.leader()
        if leader is None and self.churn_rng is not None:
            self._push(self.now + self.churn_rng.randint(*CHURN_RETRY_MS), "membership")
            return
        self._push(self.now + int(self.rng.expovariate(1 / MEMBERSHIP_EVERY_MS)) + 1, "membership")
        if leader is None:
            return
        voters = leader.raft.voter_set()
        roll = self.rng.random()
        if roll < 0.85 and not self._keeps_live_majority(voters, all_live=True):
            # A voter's disk is lost and its old key still votes: the admin leaves the
            # set alone until auto-join has replaced it (seed 359 at 15,000 events:
            # {1-old,3,4,5}, leader 4 removes itself; the uncommitted {1-old,3,5}
            # lives only on 4 and an observer, the longest logs but outside their
            # latest set, so nobody can win an election, in Kafka as here).
            pass
        elif roll < 0.45:
            candidates = [n for n in self.nodes.values()
                          if voters.node(n.node_id) is None and n.node_id not in self.gone]
            if candidates:
                self._add(leader, self.rng.choice(candidates))
        elif roll < 0.85:
            if len(voters) > 2:
                key = self.rng.choice(voters.keys())
                if self._keeps_live_majority(voters.remove(key)):
                    self._remove(leader, key)
        elif self._may_wipe(leader, voters):
            # Only with no voter change in flight. Losing a disk while one is (seed
            # 220: {1,2,3,4} committed, {2,3,4} appended by leader 2, then 2's disk
            # gone) can leave the uncommitted record only on nodes outside the new set
            # (1 and an observer): they hold the longest log but are not voters of
            # their latest set, so they never campaign and refuse the shorter logs of
            # 3 and 4. Kafka stalls there just the same (a replica campaigns only in
            # its latest voter set; votes need an up-to-date log): a disk lost in the
            # middle of a reconfiguration is beyond what Raft's changes tolerate.
            # "No change in flight" needs a leader that has committed in its own epoch
            # (Kafka's condition for a voter change, "establish HWM and fence previous
            # voter changes"): before that, a deposed leader's uncommitted change may
            # still be alive (membership-3 seed 47232952: leader 1 of epoch 3 appended
            # {1,2} and resigned; leader 2 of epoch 4, no HWM yet, saw {1,2,3} as
            # committed and lost its disk; 1, with the newest log, then stood only in
            # {1,2-old} and refused 3 forever, in Kafka as here).
            self._wipe(self.rng.choice([n for n in self.nodes.values() if n.node_id not in self.gone]))
        if leader.raft is not None:
            self._drive(leader)

    def _may_wipe(self, leader, voters) -> bool:
        """A disk may be lost now: no other is being replaced, the set is large enough,
        and no voter change is in flight (see ``_on_membership``)."""
        return self.wiped is None and len(voters) >= MIN_VOTERS_FOR_WIPE \
            and leader.raft.high_watermark is not None \
            and voters.keys() == leader.raft.committed_voter_set().keys()

    def _keeps_live_majority(self, voters, all_live: bool = False) -> bool:
        """Whether a majority of ``voters`` still has its disk. The admin never removes a
        voter when the remaining set would not: with {2, 3, 4} and 3's disk gone,
        removing 2 leaves {3-old, 4}, which needs the lost 3-old to commit anything,
        in Kafka as here; an operator who does that loses the quorum as surely as one
        who loses a majority of disks, which no consensus protocol survives (found by
        membership seed 144). Removing the lost key itself is always allowed: that is
        what auto-join does. ``all_live``: whether every voter still has its disk."""
        live = [k for k in voters.keys() if (n := self.nodes.get(k.node_id)) is not None
                and n.config.directory_id == k.directory_id]
        return len(live) >= (len(voters) if all_live else majority(len(voters)))

    def _admin(self, leader, api_key: int, version: int, body) -> None:
        self._admin_seq += 1
        leader.raft.step(InboundRequest(("admin", self._admin_seq), api_key, version, body), self.now)
        if self.churn_rng is not None and self.churn_rng.random() < CHURN_DISRUPT:
            kind = self.churn_rng.choice(("isolate", "isolate", "stop", "crash"))
            self._push(self.now + self.churn_rng.randint(0, 15), "disrupt", kind, leader.node_id, leader.incarnation)

    def _on_disrupt(self, kind: str, node_id: int, incarnation: int) -> None:
        """Depose the leader that just took a voter change, before the change commits:
        cut it off from everyone else for a while, crash it, or stop it cleanly."""
        node = self.nodes[node_id]
        if node.raft is None or node.incarnation != incarnation or node.raft.role is not Role.LEADER:
            return
        self.disruptions[kind] = self.disruptions.get(kind, 0) + 1
        if kind == "isolate":
            self.partition = {i: (1 if i == node_id else 0) for i in self.nodes}
            self._push(self.now + self.churn_rng.randint(300, 4000), "heal")
        elif kind == "crash":
            node.raft = None
            node.log.crash()
            if self.net_rng.random() < self.faults.crash_reset:
                self._reset_connections(node)
            self._push(self.now + self.churn_rng.randint(10, 3000), "restart", node.node_id)
        else:
            node.raft.resign(self.now)
            self._drive(node)
            self._push(self.now + self.churn_rng.randint(0, 500), "stop", node.node_id, node.incarnation)

    def _add(self, leader, node) -> None:
        cfg = node.config
        shift = 0
        if self.unreachable_rng.random() < UNREACHABLE_ADD:
            shift = 1000  # a port nobody listens on
            self.unreachable_adds += 1
        body = areq.AddRaftVoterRequest(
            cluster_id=CLUSTER_ID, timeout_ms=30000, voter_id=node.node_id,
            voter_directory_id=cfg.directory_id, ack_when_committed=self.rng.random() < 0.7,
            listeners=[areq.Listener(name=e.name, host=e.host, port=e.port + shift) for e in cfg.listeners])
        self._admin(leader, 80, 1, body)

    def _remove(self, leader, key) -> None:
        body = rreq.RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_id=key.node_id,
                                           voter_directory_id=key.directory_id)
        self._admin(leader, 81, 0, body)

    def _wipe(self, node) -> None:
        """The node loses its disk: a new directory id, an empty log, auto-join on."""
        leader = self.leader()
        if leader is not None and leader.raft.high_watermark is not None:
            # Verify what committed before its disk goes (the leader's own check may
            # be waiting behind a slow fsync).
            self.checker._check_voters_records(leader.raft)
        self.checker.lost_disks[(node.node_id, node.config.directory_id)] = node.log.flushed_offset()
        self.wiped = node.node_id
        bootstrap = node.log.bootstrap_checkpoint()
        node.raft = None
        node.config = replace(node.config, directory_id=uuid.UUID(int=self.rng.getrandbits(128)),
                              auto_join=True)
        node.log = SimDisk(bootstrap)
        node.store = MemoryQuorumStateStore()
        self.checker.restarted(node.node_id)
        self.checker.epochs.pop(node.node_id, None)  # its stored epoch is gone with the disk
        self._push(self.now + self.rng.randint(10, 1000), "restart", node.node_id)

    def _on_restart(self, node_id) -> None:
        node = self.nodes[node_id]
        if node.raft is None:
            real = self.listening[node_id]
            wrong = self.misadvertise_rng.random() < MISADVERTISED_RESTART
            listeners = tuple(replace(e, port=e.port + 2000) for e in real) if wrong else real
            self.misadvertised_restarts += wrong
            node.config = replace(node.config, listeners=listeners)
        super()._on_restart(node_id)

    def _complete(self, node, ready) -> bool:
        again = super()._complete(node, ready)
        if self.wiped == node.node_id and node.raft is not None and node.raft.is_voter():
            self.wiped = None  # it joined back: another wipe may happen
        return again


def run_membership_seed(seed: int, events: int, nodes: int = 3, churn: bool = True,
                        simulation: type[MembershipSimulation] | None = None) -> dict:
    """Run one seed of the membership profile (or of a subclass's, ``simulation``) and
    summarize it."""
    from tests.simulation.runner import calm_until_progress
    sim = (simulation or MembershipSimulation)(seed, nodes, churn=churn)
    sim.run(events)
    calm_until_progress(sim)
    summary = sim.summary()
    leader = sim.leader()
    summary["voters"] = leader.raft.voter_set().ids() if leader else None
    summary["voter_changes_committed"] = sim.checker.changes_committed
    summary["wide_election_pairs"] = sim.checker.wide_election_pairs
    summary["stale_election_pairs"] = sim.checker.stale_election_pairs
    summary["divergent_election_pairs"] = sim.checker.divergent_election_pairs
    summary["split_epochs"] = len(sim.checker.split_epochs)
    summary["disruptions"] = dict(sim.disruptions)
    summary["unreachable_adds"] = sim.unreachable_adds
    summary["misadvertised_restarts"] = sim.misadvertised_restarts
    summary["dead_address_probes"] = sim.dead_address_probes
    summary["own_dead_probes"] = sim.own_dead_probes
    summary.update(sim.extra_summary())
    return summary
