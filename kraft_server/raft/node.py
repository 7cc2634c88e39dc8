"""``RaftNode``: the sans-I/O KRaft core (see the package docstring for the loop).

This module is the hub: it owns the log view (``log_view.py``: reads, plus the
writes decided since the last ``ready()``), the quorum state and the voter history,
dispatches inbound messages to ``rpc/`` and timer work to ``roles/*``, keeps the
outbox the shell drains through ``ready()``, and holds the few operations the RPC
modules share (transitions with their side effects, leader appends, the leader's
high watermark).

Requests to peers go out one at a time per destination (an ApiVersions probe of an
address apart from the node's Raft traffic: ``_dest_key``), with
``quorum.retry.backoff.ms`` after a failure, like Kafka's ``RequestManager``; every
transition forgets what was in flight (answers still arrive and are matched by
correlation id, and each handler ignores answers from an older epoch).
"""
from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, replace

from kraft_server.raft import auto_join, diagnostics, endpoint_probe, membership, proposals
from kraft_server.raft.proposals import Backpressure, NotLeader  # noqa: F401 - the node's API
from kraft_server.raft.boundary import (
    Destination, Endpoint, InboundRequest, InboundResponse, OutboundRequest, OutboundResponse, Ready,
)
from kraft_server.common.values import ElectionState
from kraft_server.raft.log_view import LogView
from kraft_server.raft.peers import PeerAddresses
from kraft_server.raft.quorum_state import QuorumState
from kraft_server.raft.start_of_epoch import start_of_epoch_batch
from kraft_server.raft.transition_reason import transition_reason
from kraft_server.raft.roles import LeaderState
from kraft_server.raft.roles import poll as role_poll
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc import (
    add_voter, begin_epoch, end_epoch, fetch, fetch_snapshot, remove_voter, update_features, update_voter,
    vote,
)
from kraft_server.raft.voter_history import load_history
from kraft_server.raft.voters import (
    ZERO_UUID, ElectionResult, VoterKey, VoterSet, election_result, next_high_watermark,
)

_REQUEST_HANDLERS = {
    fetch.API_KEY: fetch.handle_fetch_request,
    vote.API_KEY: vote.handle_vote_request,
    begin_epoch.API_KEY: begin_epoch.handle_begin_epoch_request,
    end_epoch.API_KEY: end_epoch.handle_end_epoch_request,
    fetch_snapshot.API_KEY: fetch_snapshot.handle_fetch_snapshot_request,
    update_voter.API_KEY: update_voter.handle_update_voter_request,
    add_voter.API_KEY: add_voter.handle_add_voter_request,
    remove_voter.API_KEY: remove_voter.handle_remove_voter_request,
    update_features.API_KEY: update_features.handle_update_features_request,
}
_RESPONSE_HANDLERS = {
    fetch.API_KEY: fetch.handle_fetch_response,
    vote.API_KEY: vote.handle_vote_response,
    begin_epoch.API_KEY: begin_epoch.handle_begin_epoch_response,
    end_epoch.API_KEY: end_epoch.handle_end_epoch_response,
    fetch_snapshot.API_KEY: fetch_snapshot.handle_fetch_snapshot_response,
    update_voter.API_KEY: update_voter.handle_update_voter_response,
    add_voter.API_VERSIONS_KEY: add_voter.handle_api_versions_response,  # the new voter's probe
    add_voter.API_KEY: auto_join.handle_response,
    remove_voter.API_KEY: auto_join.handle_response,
}
RAFT_API_KEYS = frozenset(_REQUEST_HANDLERS)
# First version of each response that has NodeEndpoints (KIP-853).
_NODE_ENDPOINTS_SINCE = {fetch.API_KEY: 16, vote.API_KEY: 1, begin_epoch.API_KEY: 1,
                         end_epoch.API_KEY: 1, fetch_snapshot.API_KEY: 1}


@dataclass
class Inflight:
    """A request we sent and have not heard back about."""

    correlation: int
    destination: Destination
    api_key: int
    epoch: int  # our epoch when it was sent
    sent_ms: int
    pre_vote: bool = False
    fetch_offset: int = -1


class RaftNode:
    # AddRaftVoter/RemoveRaftVoter are implemented (listeners advertise them, KIP-853).
    SUPPORTS_RECONFIGURATION = True

    def __init__(self, config, log, stored: ElectionState | None, rng, now_ms: int):
        """``log`` is read only (through ``self.log``, a ``LogView``); ``stored`` is what
        the quorum-state store held at start-up."""
        self.config, self.rng = config, rng
        self.log = LogView(log)
        self.local_key = VoterKey(config.node_id, config.directory_id)
        self.history = load_history(config, self.log)
        self.high_watermark: int | None = None
        self.stats: Counter = Counter()
        # The latest transitions (number, role, epoch, leader, reason), for the log.
        self.transitions: deque = deque(maxlen=32)
        # Voters that refused a real vote: id -> [our (log end, last epoch) then, rounds
        # their missing pre-vote counted as a refusal] (rpc/vote.py).
        self.vote_refusals: dict[int, list] = {}
        self.now_ms = now_ms
        self._next_correlation = 1
        self._inflight: dict[int, Inflight] = {}
        self._busy: dict = {}
        self._backoff: dict = {}
        self._requests: list[OutboundRequest] = []
        self._responses: list[OutboundResponse] = []
        self.ready_count = 0  # Readys handed out
        # set by ``propose``: it started a batch's linger or filled a batch, so a caller
        # outside the Ready loop must wake it (the next deadline moved); other proposals
        # ride on the deadline the loop already sleeps toward, as KafkaRaftClient.append
        # wakes its IO thread only on a batch's first append or when a drain is due
        self.propose_needs_cycle = False
        self.addresses = PeerAddresses(config)
        data_version = 1 if self.history.kraft_version() >= 1 else 0
        self.quorum = QuorumState(config, rng, self.local_key, data_version)
        self.quorum.initialize(stored, log.last_fetched_epoch(), self.voter_set(), now_ms,
                               self._endpoints_for)
        if self.voter_set().is_only_voter(self.local_key) and self.role is not Role.LEADER:
            # The only voter needs nobody's vote: campaign at once, as Kafka's
            # KafkaRaftClient.initialize does, instead of waiting out a timeout.
            self.transition_to_candidate(now_ms)

    # -- views for handlers (DescribeQuorum, DescribeCluster, the controller) ----------------
    @property
    def role(self) -> Role:
        return self.quorum.role

    @property
    def epoch(self) -> int:
        return self.quorum.epoch

    @property
    def leader_id(self) -> int:
        return self.quorum.leader_id

    @property
    def voted_key(self) -> VoterKey | None:
        """The candidate voted for in this epoch (Unattached, Prospective, Follower)."""
        return self.quorum.state.voted_key

    def leads(self) -> bool:
        """The leader, not resigning (a shutdown's EndQuorumEpoch on its way)."""
        return self.role is Role.LEADER and not self.quorum.state.resign_requested

    def epoch_start_offset(self) -> int:
        """Where the leader's epoch began (leader only)."""
        return self.quorum.state.epoch_start_offset

    def next_write_offset(self) -> int:
        """The offset the next proposed record gets (Kafka's ``nextWriteOffset``): the log's
        end plus what lingers in the leader's buffer."""
        pending = self.quorum.state.pending_records if self.role is Role.LEADER else ()
        return self.log.end_offset() + len(pending)

    def voter_set(self) -> VoterSet:
        return self.history.latest()

    def committed_voter_set(self) -> VoterSet:
        return self.history.committed(self.high_watermark)

    def kraft_version(self) -> int:
        return self.history.kraft_version()

    def is_voter(self) -> bool:
        return self.voter_set().is_voter(self.local_key)

    def replica_states(self, now_ms: int):
        """(voters, observers) as the leader sees them, or None when not the leader. The
        leader reports itself as caught up "now" (``RaftUtil.singletonDescribeQuorumResponse``)."""
        if self.role is not Role.LEADER:
            return None
        leader: LeaderState = self.quorum.state
        leader.expire_observers(now_ms)
        voters = [replace(s) for s in leader.voters.values()]  # copies: the caller may keep them
        observers = [replace(s) for s in leader.observers.values()]
        for s in voters + observers:  # a leader being removed is an observer
            if s.key.node_id == self.local_key.node_id:
                s.end_offset = self.log.end_offset()
                s.last_fetch_ms = s.last_caught_up_ms = now_ms
        return voters, observers

    def diagnostics(self, now_ms: int) -> dict:
        """What this node is waiting for (``diagnostics.py``)."""
        return diagnostics.describe(self, now_ms)

    def leader_endpoints(self, listener: str) -> tuple[Endpoint, ...]:
        leader_id = self.quorum.leader_id
        if leader_id < 0:
            return ()
        if leader_id == self.local_key.node_id:
            eps = self.config.listeners
        else:
            eps = self._endpoints_for(leader_id)
        return tuple(e for e in eps if e.name == listener)[:1] or tuple(eps[:1])

    def is_addressed_to_us(self, voter_id: int, directory_id) -> bool:
        """The VoterId/VoterDirectoryId check behind INVALID_VOTER_KEY (KIP-853)."""
        if voter_id >= 0 and voter_id != self.local_key.node_id:
            return False
        mine = self.local_key.directory_id
        return directory_id == ZERO_UUID or mine == ZERO_UUID or directory_id == mine

    # -- the contract ------------------------------------------------------------------------
    def step(self, inbound, now_ms: int) -> None:
        self.now_ms = max(self.now_ms, now_ms)
        if isinstance(inbound, InboundRequest):
            handler = _REQUEST_HANDLERS.get(inbound.api_key)
            if handler is None:
                raise ValueError(f"API {inbound.api_key} is not a KRaft RPC")
            body = handler(self, inbound, self.now_ms)
            if body is not None:
                self.respond(inbound, body)
        elif isinstance(inbound, InboundResponse):
            inflight = self._inflight.pop(inbound.correlation, None)
            if inflight is None:
                return  # not ours, or already given up on
            dkey = _dest_key(inflight.destination, inflight.api_key)
            if self._busy.get(dkey) == inflight.correlation:
                del self._busy[dkey]
            ok = _RESPONSE_HANDLERS[inflight.api_key](self, inflight, inbound.body, inbound.failure,
                                                      self.now_ms)
            if not ok:
                self._backoff[dkey] = self.now_ms + self.config.retry_backoff_ms
        else:
            raise TypeError(f"cannot step {type(inbound).__name__}")

    def tick(self, now_ms: int) -> None:
        self.now_ms = max(self.now_ms, now_ms)
        role_poll.poll(self, self.now_ms)

    def propose(self, records: list[bytes], now_ms: int, queued_ms: int | None = None) -> tuple[int, int]:
        """Queue records for the leader's next batch; returns (first, last) offsets.
        They are committed once ``high_watermark > last``. ``queued_ms``: when the
        first record was due, if its producer was late to hand it over (a generator on
        the busy event loop); the linger counts from then, as it would from a producer
        thread's append. Raises ``NotLeader`` or ``Backpressure`` (``proposals.py``)."""
        self.now_ms = max(self.now_ms, now_ms)
        return proposals.propose(self, records, queued_ms)

    def ready(self) -> Ready:
        role_poll.poll(self, self.now_ms)
        if self.role is Role.LEADER:
            fetch.complete_parked(self, self.now_ms)
        ready = Ready(flush=self.log.end_offset() > self.log.flushed_offset(),
                      requests=self._requests, responses=self._responses,
                      next_deadline_ms=role_poll.next_deadline(self, self.now_ms),
                      writes=self.log.take_writes(), election=self.quorum.take_unsaved())
        self._requests, self._responses = [], []
        self.ready_count += 1
        return ready

    def advance(self, ready: Ready, now_ms: int) -> bool:
        """The shell flushed (if asked) and sent everything in ``ready``. Returns True
        when calling ``ready()`` again now would yield more work (e.g. the HWM moved
        and parked fetches can be answered)."""
        self.now_ms = max(self.now_ms, now_ms)
        if self.role is Role.LEADER:
            before = self.high_watermark
            self.maybe_update_leader_high_watermark()
            # A finished voter change left a response, or our removal committed.
            leader = self.quorum.state
            return (self.high_watermark != before and bool(leader.parked)) or leader.answers_deferred \
                or bool(self._responses) or leader.resign_requested or leader.drain_put_off is not None
        return False

    def has_responses(self) -> bool:
        """Answers are waiting for the next Ready."""
        return bool(self._responses)

    def progress_mark(self) -> tuple:
        """What the shell's other pollers (controller, consumer fetches, metrics, role
        log) react to: the high watermark, the log end, the epoch, the role and the
        leader. A turn of the loop that left it unchanged gives them nothing new."""
        return (self.high_watermark, self.log.end_offset(), self.epoch, self.role, self.leader_id)

    def answers_deferred(self) -> bool:
        """Observers' Fetch answers were left for the next Ready (``rpc/fetch.py``)."""
        return self.role is Role.LEADER and self.quorum.state.answers_deferred

    def resign(self, now_ms: int, shutting_down: bool = True) -> None:
        """Graceful resignation (shutdown): EndQuorumEpoch to the voters, naming the most
        caught-up ones as preferred candidates."""
        self.now_ms = max(self.now_ms, now_ms)
        if self.role is Role.LEADER:
            self.transition_to_resigned(self.now_ms, shutting_down)

    def begin_shutdown(self, now_ms: int) -> None:
        """The process is stopping: resign (a leader tells the voters, as
        ``KafkaRaftClient.shutdown`` does); see ``shutdown_complete``."""
        self.resign(now_ms, shutting_down=True)

    def shutdown_complete(self) -> bool:
        """Every EndQuorumEpoch sent has been answered or has failed (a follower or
        observer sends none, so it may stop at once, as in Kafka)."""
        return not any(i.api_key == end_epoch.API_KEY for i in self._inflight.values())


    # -- outbox ----------------------------------------------------------------------------
    def respond(self, inbound: InboundRequest, body) -> None:
        if inbound.api_version < _NODE_ENDPOINTS_SINCE.get(inbound.api_key, 0):
            body.node_endpoints = []  # a tagged field the asker's version cannot carry
        self._responses.append(OutboundResponse(inbound.handle, inbound.api_key, inbound.api_version, body))

    def send(self, destination: Destination, api_key: int, body, now_ms: int, min_version: int = 0,
             **extra) -> bool:
        dkey = _dest_key(destination, api_key)
        if dkey in self._busy or self._backoff.get(dkey, -1) > now_ms:
            return False
        corr = self._next_correlation
        self._next_correlation += 1
        self._inflight[corr] = Inflight(corr, destination, api_key, self.quorum.epoch, now_ms, **extra)
        self._busy[dkey] = corr
        self._requests.append(OutboundRequest(corr, destination, api_key, body, min_version))
        return True

    def last_correlation(self) -> int:
        """Correlation id of the request ``send`` queued last."""
        return self._next_correlation - 1

    def can_send(self, destination: Destination, now_ms: int) -> bool:
        dkey = _dest_key(destination)
        return dkey not in self._busy and self._backoff.get(dkey, -1) <= now_ms

    def backoff_deadlines(self) -> list[int]:
        return list(self._backoff.values())

    def backoff_items(self):
        return self._backoff.items()

    def inflight_requests(self):
        return self._inflight.values()

    def voter_destination(self, node_id: int) -> Destination | None:
        return self.addresses.destination(node_id, self._endpoints_for(node_id))

    def bootstrap_destination(self) -> Destination | None:
        return self.addresses.bootstrap()

    def bootstrap_destination_if_free(self, now_ms: int) -> Destination | None:
        for _ in range(self.addresses.bootstrap_count()):
            dest = self.addresses.bootstrap()
            if dest is not None and self.can_send(dest, now_ms):
                return dest
        return None

    def remember_endpoints(self, node_id: int, endpoints: tuple[Endpoint, ...]) -> None:
        self.addresses.remember(node_id, endpoints)

    def _endpoints_for(self, node_id: int) -> tuple[Endpoint, ...]:
        return self.addresses.endpoints_for(node_id, self.voter_set(), self.quorum.state)

    # -- transitions with their side effects --------------------------------------------------
    def _after_transition(self, old_state) -> None:
        new = self.quorum.state
        self.transitions.append((self.quorum.transitions, new.role, new.epoch, new.leader_id,
                                 transition_reason(old_state, new, not self.is_voter())))
        self._busy.clear()
        self._backoff.clear()
        if isinstance(old_state, LeaderState) and old_state is not self.quorum.state:
            fetch.refuse_parked(self, old_state)
            self.stats["proposals_dropped"] += len(old_state.pending_records)
            membership.on_leadership_lost(self, old_state)

    def transition_to_epoch(self, epoch: int, leader_id: int, now_ms: int) -> None:
        """A newer epoch: follow its leader if known, else wait Unattached."""
        if leader_id >= 0 and leader_id != self.local_key.node_id:
            self.transition_to_follower(epoch, leader_id, now_ms)
        else:
            old = self.quorum.state
            self.quorum.to_unattached(epoch, now_ms)
            self._after_transition(old)

    def transition_to_follower(self, epoch: int, leader_id: int, now_ms: int) -> None:
        old = self.quorum.state
        self.quorum.to_follower(epoch, leader_id, self._endpoints_for(leader_id), now_ms)
        self._after_transition(old)

    def maybe_follow(self, epoch: int, leader_id: int, now_ms: int) -> None:
        """Follow ``leader_id`` in ``epoch`` (>= ours) unless we already do."""
        q = self.quorum
        if epoch > q.epoch:
            self.transition_to_epoch(epoch, leader_id, now_ms)
        elif q.role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE) and leader_id >= 0:
            self.transition_to_follower(epoch, leader_id, now_ms)
        elif q.role is Role.FOLLOWER and q.state.leader_id != leader_id:
            self.stats["conflicting_leader"] += 1  # cannot happen in a correct quorum

    def observer_lost_leader(self, now_ms: int) -> None:
        """An observer whose leader went quiet looks for it again via the bootstrap
        servers, in the same epoch."""
        old = self.quorum.state
        self.quorum.to_unattached(self.quorum.epoch, now_ms, observer=True)
        self._after_transition(old)

    def transition_to_prospective(self, now_ms: int) -> None:
        old = self.quorum.state
        self.quorum.to_prospective(self.voter_set().ids(), now_ms)
        self._after_transition(old)
        self._check_election(now_ms)

    def transition_to_candidate(self, now_ms: int) -> None:
        old = self.quorum.state
        self.quorum.to_candidate(self.voter_set().ids(), now_ms)
        self._after_transition(old)
        self._check_election(now_ms)

    def _check_election(self, now_ms: int) -> None:
        s = self.quorum.state
        if election_result(set(s.voter_ids), s.granted, s.rejected) is ElectionResult.WON:
            if self.role is Role.PROSPECTIVE:
                self.transition_to_candidate(now_ms)
            else:
                self.transition_to_leader(now_ms)

    def transition_to_leader(self, now_ms: int) -> None:
        old = self.quorum.state
        leader = self.quorum.to_leader(self.log.end_offset(), self.voter_set(), now_ms)
        self._after_transition(old)
        self.high_watermark = None  # unknown until this epoch commits (LeaderState)
        membership.on_become_leader(self, leader)
        self.leader_append(start_of_epoch_batch(self.log.end_offset(), leader.epoch, now_ms,
                                                self.local_key.node_id, self.voter_set(),
                                                leader.granting_voters, self.history))
        self.stats["elections_won"] += 1

    def transition_to_resigned(self, now_ms: int, shutting_down: bool = False) -> None:
        leader = self.quorum.state
        self.drain_proposals()
        self.quorum.to_resigned(leader.preferred_candidates(), self.voter_set().ids(), now_ms,
                                shutting_down)
        self._after_transition(leader)

    def election_lost(self, now_ms: int) -> None:
        """Back off: Candidate waits, then goes Prospective; Prospective returns to the
        leader it knew (after only an election backoff when that leader resigned) or to
        Unattached (KIP-996)."""
        q = self.quorum
        deadline = q.election_backoff_deadline(now_ms)
        if q.role is Role.CANDIDATE:
            q.state.backing_off = True
            q.state.election_deadline_ms = deadline
        elif q.role is Role.PROSPECTIVE:
            old = q.state
            if old.leader_id >= 0:
                retries = q.election_retries
                q.to_follower(q.epoch, old.leader_id, old.leader_endpoints or
                              self._endpoints_for(old.leader_id), now_ms)
                if old.leader_resigned:
                    # That leader resigned: it will not answer a Fetch in this epoch
                    # again, so waiting a whole fetch timeout for it only prolongs the
                    # leaderless window. Retry after an election backoff, like a lost
                    # election without a leader.
                    q.state.leader_resigned = True
                    q.state.fetch_deadline_ms = deadline
                    q.election_retries = retries
                elif old.early_return_deadline_ms is not None:
                    # An early pre-vote (the leader's connection was reset) that the
                    # others refused: they still hear from it. Back to the fetch timeout
                    # we had; more resets do not start another early one before it.
                    q.state.fetch_deadline_ms = old.early_return_deadline_ms
                    q.state.leader_unreachable = True
            else:
                q.to_unattached(q.epoch, now_ms)
                q.state.election_deadline_ms = deadline
            self._after_transition(old)

    # -- leader log writes -------------------------------------------------------------------
    def leader_append(self, data: bytes) -> None:
        before = self.history.latest()
        self.log.append(data)
        self.history.observe(data)
        if self.history.latest() is not before:
            self.quorum.state.set_voters(self.history.latest())

    def append_room(self) -> int:
        """Bytes ``propose`` accepts now (at least one record always fits an empty backlog)."""
        return proposals.append_room(self)

    def drain_proposals(self) -> None:
        """Append what lingers as batches (``proposals.drain``)."""
        proposals.drain(self)

    def record_replica_fetch(self, key: VoterKey, fetch_offset: int, now_ms: int) -> None:
        leader: LeaderState = self.quorum.state
        leader.replica(key).record_fetch(fetch_offset, self.log.end_offset(), now_ms)
        if leader.is_voter_key(key):
            leader.record_voter_fetch(key.node_id, now_ms, self.config.check_quorum_timeout_ms)
            leader.unacked_voters.discard(key.node_id)
            # only voters' offsets count (our own flush is taken in ``advance``)
            self.maybe_update_leader_high_watermark()

    def maybe_update_leader_high_watermark(self) -> None:
        leader: LeaderState = self.quorum.state
        me = leader.voters.get(self.local_key.node_id)
        if me is not None:
            me.end_offset = self.log.flushed_offset()  # our own data counts once durable
        new = next_high_watermark(self.high_watermark, leader.voter_end_offsets(),
                                  leader.epoch_start_offset, self.log.end_offset())
        if new is not None:
            self.high_watermark = new
            leader.committed(new)
            membership.on_high_watermark(self, leader)


def _dest_key(destination: Destination, api_key: int | None = None):
    """What one-request-at-a-time and the back-off are kept by: the node, or the address
    of a bootstrap server. An ApiVersions probe (``endpoint_probe.py``) is about an
    address, and has one of its own: Raft traffic to the node does not hold it up."""
    if api_key == endpoint_probe.API_VERSIONS_KEY:
        return ("probe", destination.endpoint.host, destination.endpoint.port)
    if destination.node_id >= 0:
        return destination.node_id
    return (destination.endpoint.host, destination.endpoint.port)
