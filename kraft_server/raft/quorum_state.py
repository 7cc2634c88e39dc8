"""The quorum state machine: which role this node plays in which epoch.

All transitions live here. Each one builds the new state and swaps it in, and its
election state waits in ``unsaved`` until the next ``Ready`` carries it to the shell,
which persists it before anything of that Ready leaves the node: no vote or epoch is
acted on outside before it is durable (``QuorumState.durableTransitionTo``).

Transition table (KIP-595 + KIP-996 pre-vote; "epoch+" = a higher epoch)::

    from \\ to    Unattached       Prospective      Candidate     Leader        Follower        Resigned
    Unattached   epoch+; vote     election timeout   -              -            leader seen       -
    Prospective  epoch+; lost*    -                 pre-votes won   -            leader seen;      -
                                                                                 lost**
    Candidate    epoch+           lost/timeout***    -             votes won    leader seen       -
    Leader       epoch+           -                  -              -             -               resign
    Follower     epoch+           fetch timeout      -              -            epoch+ leader     -
    Resigned     epoch+; timeout  -                  -              -            epoch+ leader     -

    *  back to Unattached in the same epoch when no leader was known
    ** back to Follower of the leader it knew in that epoch (retrying after an election
       backoff, not a whole fetch timeout, when that leader sent EndQuorumEpoch)
    *** after a randomised binary-exponential backoff (``election.backoff.max.ms``)

Observers (not in the latest voter set) only move between Unattached and Follower.
Prospective keeps the epoch (pre-votes do not bump it); only Candidate bumps it,
after persisting the vote for itself. A Resigned leader whose election timeout
passes moves to Unattached at epoch+1 so its old epoch stays fenced. The only
voter of a quorum campaigns at start-up straight from whatever state it resumed in
(Prospective and Candidate both win at once with its own vote).
"""
from __future__ import annotations

from kraft_server.raft.boundary import Endpoint
from kraft_server.common.values import ElectionState
from kraft_server.raft.roles import (
    CandidateState, FollowerState, LeaderState, ProspectiveState, ResignedState, UnattachedState,
)
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey, VoterSet
from wire.uuids import ZERO_UUID


class IllegalTransition(RuntimeError):
    """A transition the table above does not allow: a bug in the core."""


class QuorumState:
    def __init__(self, config, rng, local_key: VoterKey, data_version: int):
        self.config = config
        self.rng = rng
        self.unsaved: ElectionState | None = None  # to persist before the next Ready leaves
        self.local_key = local_key
        self.data_version = data_version
        self.state = None
        self.election_retries = 0
        self.transitions = 0  # for tests and stats

    # -- timers --------------------------------------------------------------------------
    def election_deadline(self, now_ms: int) -> int:
        timeout = self.config.election_timeout_ms
        return now_ms + timeout + self.rng.randrange(max(timeout, 1))

    def early_deadline(self, now_ms: int) -> int:
        """A short random delay (a quarter of the election timeout at most) before a
        pre-vote that needs no whole timeout, beyond Kafka (issue 12 items 1-2): at
        start-up with no leader known, and when the leader's connection was reset
        (``rpc/fetch.py``). A pre-vote changes no epoch; a voter not listening yet
        refuses it at once (``rpc/vote.py``); a voter that follows a live leader refuses
        it and names that leader. The spread keeps voters that saw the same event from
        splitting the vote."""
        return now_ms + 1 + self.rng.randrange(max(self.config.election_timeout_ms // 4, 1))

    def election_backoff_deadline(self, now_ms: int) -> int:
        """Randomised binary-exponential backoff after a lost election
        (``RaftUtil.binaryExponentialElectionBackoffMs``)."""
        self.election_retries += 1
        cap = min(self.config.election_backoff_max_ms,
                  self.config.retry_backoff_ms * (2 ** min(self.election_retries, 16)))
        return now_ms + self.rng.randint(1, max(cap, 1))

    # -- views ---------------------------------------------------------------------------
    @property
    def role(self) -> Role:
        return self.state.role

    @property
    def epoch(self) -> int:
        return self.state.epoch

    @property
    def leader_id(self) -> int:
        return self.state.leader_id

    def _swap(self, new_state) -> None:
        self.unsaved = new_state.election(self.data_version)
        self.state = new_state
        self.transitions += 1

    def take_unsaved(self) -> ElectionState | None:
        """The election state the shell must persist now (None: unchanged)."""
        unsaved, self.unsaved = self.unsaved, None
        return unsaved

    # -- start-up ------------------------------------------------------------------------
    def initialize(self, stored: ElectionState | None, log_last_epoch: int, voters: VoterSet,
                   now_ms: int, endpoints_of) -> None:
        """Resume from ``quorum-state``: a leader or resigned leader comes back Resigned,
        a self-vote comes back Candidate, a known leader comes back Follower."""
        is_voter = voters.is_voter(self.local_key)
        if stored is None or stored.epoch < log_last_epoch:
            epoch = max(log_last_epoch, stored.epoch if stored else 0)
            self._swap(UnattachedState(epoch, self.early_deadline(now_ms)))
            return
        voted = None
        if stored.voted_id >= 0:
            voted = VoterKey(stored.voted_id, stored.voted_directory_id or ZERO_UUID)
        if stored.leader_id == self.local_key.node_id:
            self._swap(ResignedState(stored.epoch, self.local_key, self.election_deadline(now_ms),
                                     set(voters.ids()) - {self.local_key.node_id}))
        elif stored.voted_id == self.local_key.node_id and stored.leader_id < 0 and is_voter:
            self._swap(CandidateState(stored.epoch, self.local_key, self.election_deadline(now_ms),
                                      frozenset(voters.ids()), {self.local_key.node_id}))
        elif stored.leader_id >= 0:
            self._swap(FollowerState(stored.epoch, stored.leader_id, endpoints_of(stored.leader_id),
                                     now_ms + self.config.fetch_timeout_ms, voted))
        else:
            self._swap(UnattachedState(stored.epoch, self.early_deadline(now_ms), voted))

    # -- transitions ---------------------------------------------------------------------
    def to_unattached(self, epoch: int, now_ms: int, observer: bool = False) -> None:
        """A higher epoch with no known leader (or the same epoch after a lost election,
        or an observer that lost its leader)."""
        if epoch < self.epoch or (epoch == self.epoch and (
                self.role is Role.LEADER or self.role is Role.FOLLOWER and not observer)):
            raise IllegalTransition(f"{self.role.value}@{self.epoch} -> Unattached@{epoch}")
        voted = self.state.voted_key if epoch == self.epoch else None
        if self.role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE):
            # Keep the running election timer (QuorumState.transitionToUnattached): a
            # stream of higher-epoch requests from a node that cannot win must not keep
            # postponing everyone else's election.
            deadline = self.state.election_deadline_ms
        else:
            deadline = self.election_deadline(now_ms)
        self._swap(UnattachedState(epoch, deadline, voted))

    def to_unattached_voted(self, epoch: int, candidate: VoterKey, now_ms: int) -> None:
        """Grant our vote in ``epoch``; persisted before the response leaves."""
        if epoch < self.epoch or self.role in (Role.LEADER, Role.CANDIDATE, Role.RESIGNED) \
                and epoch == self.epoch:
            raise IllegalTransition(f"{self.role.value}@{self.epoch} -> Voted@{epoch}")
        if epoch == self.epoch and self.role is Role.UNATTACHED:
            if self.state.voted_key is not None and not self.state.voted_key.matches(candidate):
                raise IllegalTransition(f"second vote in epoch {epoch}")
        self._swap(UnattachedState(epoch, self.election_deadline(now_ms), candidate))

    def to_prospective(self, voter_ids, now_ms: int) -> None:
        if self.role is Role.LEADER:
            raise IllegalTransition("Leader -> Prospective")
        s = self.state
        leader_id = s.leader_id if self.role is Role.FOLLOWER else -1
        endpoints = s.leader_endpoints if self.role is Role.FOLLOWER else ()
        voted = s.voted_key
        if self.role is Role.CANDIDATE:
            voted = self.local_key
        resigned = self.role is Role.FOLLOWER and s.leader_resigned
        early = s.timeout_deadline_ms if self.role is Role.FOLLOWER and not resigned else None
        self._swap(ProspectiveState(self.epoch, self.election_deadline(now_ms), frozenset(voter_ids),
                                    leader_id, endpoints, voted, resigned, {self.local_key.node_id},
                                    early_return_deadline_ms=early))

    def to_candidate(self, voter_ids, now_ms: int) -> None:
        if self.role not in (Role.PROSPECTIVE, Role.UNATTACHED, Role.RESIGNED, Role.CANDIDATE):
            raise IllegalTransition(f"{self.role.value} -> Candidate")
        self._swap(CandidateState(self.epoch + 1, self.local_key, self.election_deadline(now_ms),
                                  frozenset(voter_ids), {self.local_key.node_id}))

    def to_leader(self, epoch_start_offset: int, voters: VoterSet, now_ms: int) -> LeaderState:
        if self.role is not Role.CANDIDATE:
            raise IllegalTransition(f"{self.role.value} -> Leader")
        granted = tuple(sorted(self.state.granted))
        leader = LeaderState(self.epoch, self.local_key, epoch_start_offset,
                             now_ms + self.config.check_quorum_timeout_ms, granting_voters=granted)
        leader.set_voters(voters)
        leader.unacked_voters = set(voters.ids()) - {self.local_key.node_id}
        self._swap(leader)
        self.election_retries = 0
        return leader

    def to_follower(self, epoch: int, leader_id: int, endpoints: tuple[Endpoint, ...],
                    now_ms: int) -> None:
        if epoch < self.epoch or leader_id == self.local_key.node_id:
            raise IllegalTransition(f"{self.role.value}@{self.epoch} -> Follower({leader_id})@{epoch}")
        if epoch == self.epoch and self.role in (Role.LEADER, Role.RESIGNED):
            raise IllegalTransition(f"two leaders in epoch {epoch}: us and {leader_id}")
        if epoch == self.epoch and self.role is Role.FOLLOWER and self.state.leader_id != leader_id:
            raise IllegalTransition(f"two leaders in epoch {epoch}: {self.state.leader_id} and {leader_id}")
        voted = self.state.voted_key if epoch == self.epoch else None
        if self.role is Role.CANDIDATE and epoch == self.epoch:
            voted = self.local_key
        self._swap(FollowerState(epoch, leader_id, endpoints, now_ms + self.config.fetch_timeout_ms,
                                 voted))
        self.election_retries = 0

    def to_resigned(self, preferred: list[VoterKey], voter_ids, now_ms: int,
                    shutting_down: bool = False) -> None:
        if self.role is not Role.LEADER:
            raise IllegalTransition(f"{self.role.value} -> Resigned")
        self._swap(ResignedState(self.epoch, self.local_key, self.election_deadline(now_ms),
                                 set(voter_ids) - {self.local_key.node_id}, list(preferred),
                                 shutting_down))
