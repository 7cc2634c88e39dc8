"""Follower: an epoch with a known leader that we fetch from.

``has_fetched`` records a successful fetch from the leader in this epoch: after it,
pre-votes are refused (KIP-996 ``FollowerState.canGrantVote``), so a partitioned
node cannot unseat a leader that the rest of the quorum still hears from.

``leader_resigned`` records an EndQuorumEpoch from that leader: its shortened fetch
timer (``rpc/end_epoch.py``) must not be pushed back by a Fetch answer the leader sent
before it resigned (``rpc/fetch.py``), and a lost pre-vote brings us back here with
an election backoff instead of a whole fetch timeout (``RaftNode.election_lost``).

``leader_unreachable`` records a Fetch to the leader that failed with a refused or
reset connection: evidence that its process is gone (a silent partition or a paused
process only ever times out). We then start a pre-vote after a short random delay
(``QuorumState.early_deadline``) instead of waiting out the fetch timeout, and grant other voters' pre-votes again;
a successful Fetch clears it (``rpc/fetch.py``). Beyond Kafka, which waits the fetch
timeout in both cases; safe because the pre-vote still needs a majority, and voters
still fetching from a live leader refuse it. Such an early pre-vote never becomes a real
election without that majority (a voter that cannot take pre-votes counts as refusing,
``rpc/vote.py``), and losing it restores the fetch timeout it had, so a leader that is
alive after all keeps its epoch.

Observers (nodes not in the voter set) are followers that never vote.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from wire.records.control_scan import ControlBatchScan

from kraft_server.raft.boundary import Endpoint
from kraft_server.common.values import ElectionState, OffsetAndEpoch
from kraft_server.raft.roles.base import Role, election_state
from kraft_server.raft.voters import VoterKey

ROLE = Role.FOLLOWER


@dataclass
class SnapshotDownload:
    """A FetchSnapshot in progress (KIP-630): the snapshot id, how far we got, and its
    control batches (voters, kraft.version) collected as the chunks pass, so the voter
    history is rebuilt at install without reading the snapshot back. The chunks
    themselves leave through ``Ready.writes``."""

    snapshot_id: OffsetAndEpoch
    position: int = 0
    scan: ControlBatchScan = field(default_factory=ControlBatchScan)


@dataclass
class FollowerState:
    epoch: int
    leader_id: int
    leader_endpoints: tuple[Endpoint, ...]
    fetch_deadline_ms: int
    voted_key: VoterKey | None = None
    has_fetched: bool = False
    # The leader sent us EndQuorumEpoch for this epoch: it resigned and will never
    # answer a Fetch successfully in this epoch again.
    leader_resigned: bool = False
    leader_unreachable: bool = False  # its connection was refused or reset (see above)
    timeout_deadline_ms: int | None = None  # the fetch timeout, while an early deadline runs
    snapshot: SnapshotDownload | None = None
    # UpdateRaftVoter: when the endpoints check may run next, and whether the
    # leader already has our current endpoints (KIP-853).
    update_voter_due_ms: int = 0
    update_voter_done: bool = False
    role = ROLE

    def election(self, data_version: int) -> ElectionState:
        return election_state(self.epoch, self.leader_id, self.voted_key, data_version)

    def can_grant_vote(self, key: VoterKey, log_up_to_date: bool, pre_vote: bool) -> bool:
        if not pre_vote:
            return False  # this epoch has a leader already
        return (not self.has_fetched or self.leader_unreachable) and log_up_to_date
