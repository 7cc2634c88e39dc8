"""Vote (API 52): elections and KIP-996 pre-votes.

Receiver, in Kafka's order (``KafkaRaftClient.handleVoteRequest``):
1. cluster id (INCONSISTENT_CLUSTER_ID, top level), one ``__cluster_metadata``/0
   partition (INVALID_REQUEST);
2. a sane position: last offset and epoch >= 0, and the last epoch below the
   candidate's epoch (a pre-vote may equal it) — else INVALID_REQUEST;
3. the request must be addressed to us (VoterId / VoterDirectoryId, v1+), else
   INVALID_VOTER_KEY;
4. an older epoch is FENCED_LEADER_EPOCH; a newer one moves us to Unattached in it;
5. the role decides (``roles/*.can_grant_vote``) given whether the candidate's log
   is at least as up to date as ours; a granted real vote is persisted before the
   response leaves (``quorum_state.to_unattached_voted``). Pre-votes persist nothing.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import vote_request as vreq
from wire.messages import vote_response as vresp

from kraft_server.raft.quorum_config import METADATA_TOPIC
from kraft_server.raft.boundary import SendFailure
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc.common import (
    handle_common_response, leader_response, request_partition, response_partition,
)
from kraft_server.raft.voters import ElectionResult, VoterKey, election_result
from wire.uuids import ZERO_UUID

API_KEY = vreq.VoteRequest.API_KEY


def build_vote_request(node, voter: VoterKey, pre_vote: bool):
    log = node.log
    part = vreq.PartitionData(
        partition_index=0, replica_epoch=node.quorum.epoch, replica_id=node.local_key.node_id,
        replica_directory_id=node.local_key.directory_id, voter_directory_id=voter.directory_id,
        last_offset_epoch=log.last_fetched_epoch(), last_offset=log.end_offset(), pre_vote=pre_vote)
    return vreq.VoteRequest(cluster_id=node.config.cluster_id, voter_id=voter.node_id,
                            topics=[vreq.TopicData(topic_name=METADATA_TOPIC, partitions=[part])])


def _response(node, error=ErrorCode.NONE, granted=False, top_error=ErrorCode.NONE):
    return leader_response(node, vresp, vresp.VoteResponse, error, top_error, vote_granted=granted)


def handle_vote_request(node, inbound, now_ms: int):
    req = inbound.body
    part, top_error = request_partition(node, req)
    if part is None:
        return _response(node, top_error=top_error)
    pre_vote = inbound.api_version >= 2 and part.pre_vote
    epoch, last_epoch, last_offset = part.replica_epoch, part.last_offset_epoch, part.last_offset
    if last_offset < 0 or last_epoch < 0 or (last_epoch > epoch if pre_vote else last_epoch >= epoch):
        return _response(node, ErrorCode.INVALID_REQUEST)
    if inbound.api_version >= 1 and not node.is_addressed_to_us(req.voter_id, part.voter_directory_id):
        return _response(node, ErrorCode.INVALID_VOTER_KEY)
    if part.replica_id < 0:
        return _response(node, ErrorCode.INVALID_REQUEST)
    if epoch < node.quorum.epoch:
        return _response(node, ErrorCode.FENCED_LEADER_EPOCH)
    if epoch > node.quorum.epoch:
        node.transition_to_epoch(epoch, -1, now_ms)
    candidate = VoterKey(part.replica_id,
                         part.replica_directory_id if inbound.api_version >= 1 else ZERO_UUID)
    log = node.log
    up_to_date = (last_epoch, last_offset) >= (log.last_fetched_epoch(), log.end_offset())
    granted = node.quorum.state.can_grant_vote(candidate, up_to_date, pre_vote)
    if granted and not pre_vote and node.quorum.role in (Role.UNATTACHED, Role.PROSPECTIVE) \
            and node.quorum.state.voted_key is None:
        node.quorum.to_unattached_voted(epoch, candidate, now_ms)
    node.stats["votes_granted" if granted else "votes_rejected"] += 1
    return _response(node, granted=granted)


def handle_vote_response(node, inflight, body, failure, now_ms: int) -> bool:
    """Returns False when the destination should be backed off."""
    q = node.quorum
    voter_id = inflight.destination.node_id
    if failure is not None:
        if failure is SendFailure.UNSUPPORTED_VERSION and inflight.pre_vote \
                and q.role is Role.PROSPECTIVE and q.epoch == inflight.epoch:
            if q.state.early_return_deadline_ms is not None or _refused_this_log(node, voter_id):
                # Count its silence as a refusal: an early pre-vote (our leader's
                # connection was reset) must not turn into a real election, and a voter
                # that refused a real vote for this very log would refuse again.
                _count(node, q.state, voter_id, False, now_ms, pre_vote=True)
            else:
                # The peer predates KIP-996: skip pre-voting (Kafka does the same).
                node.transition_to_candidate(now_ms)
            return True
        if failure is SendFailure.DISCONNECTED and q.epoch == inflight.epoch and (
                q.role is (Role.PROSPECTIVE if inflight.pre_vote else Role.CANDIDATE)):
            # Beyond Kafka (which retries until the election timeout): a refused or reset
            # connection is that voter's answer for this round. If the others cannot
            # make a majority without it, the round is lost now and retried after a
            # backoff (voters not listening yet at start-up; a voter that crashed).
            _count(node, q.state, voter_id, False, now_ms, pre_vote=inflight.pre_vote)
        return False
    part, endpoints = response_partition(node, body)
    if part is None:
        return False
    was_leaderless_prospective = q.role is Role.PROSPECTIVE and q.state.leader_id < 0
    if handle_common_response(node, part.error_code, part.leader_id, part.leader_epoch,
                              endpoints, now_ms):
        if inflight.pre_vote and was_leaderless_prospective and q.role is Role.UNATTACHED \
                and q.leader_id < 0 and q.epoch > inflight.epoch:
            _retry_soon(node, now_ms)
        return part.error_code == ErrorCode.NONE
    if part.error_code or inflight.epoch != q.epoch:
        return part.error_code == ErrorCode.NONE
    if inflight.pre_vote and q.role is Role.PROSPECTIVE:
        _count(node, q.state, voter_id, part.vote_granted, now_ms, pre_vote=True)
    elif not inflight.pre_vote and q.role is Role.CANDIDATE:
        if not part.vote_granted:
            node.vote_refusals[voter_id] = [_log_position(node), 0]
        _count(node, q.state, voter_id, part.vote_granted, now_ms, pre_vote=False)
    return True


# Beyond Kafka: a voter that cannot take pre-votes (Vote < v2) is, as in Kafka, asked
# for a real vote straight away, which bumps the epoch. A candidate whose log such a
# voter already refused would otherwise bump the epoch on every round and keep
# fencing the voters that could win (found by the simulation, seed 107639315 of the
# membership sweep). So while our log is unchanged, that voter's missing pre-vote
# counts as a refusal, for a few rounds, after which we ask it for real again.
_SUPPRESSED_ROUNDS = 3


def _log_position(node):
    return node.log.end_offset(), node.log.last_fetched_epoch()


def _refused_this_log(node, voter_id: int) -> bool:
    entry = node.vote_refusals.get(voter_id)
    if entry is None or entry[0] != _log_position(node) or entry[1] >= _SUPPRESSED_ROUNDS:
        node.vote_refusals.pop(voter_id, None)
        return False
    entry[1] += 1
    return True


def _retry_soon(node, now_ms: int) -> None:
    """Beyond Kafka: our pre-vote was fenced only because a newer leaderless epoch began
    while we waited. We now know that epoch; retry after an election backoff instead of
    the rest of our election timer. A voter that cannot win but keeps bumping the epoch
    (a stale log asking voters that do not reach us) would otherwise fence every one of
    our pre-votes, each sent a whole timeout after we last heard the epoch (found by the
    simulation, seed 89831161 of the membership sweep)."""
    state = node.quorum.state
    state.election_deadline_ms = min(state.election_deadline_ms,
                                     node.quorum.election_backoff_deadline(now_ms))


def _count(node, state, voter_id: int, granted: bool, now_ms: int, pre_vote: bool) -> None:
    (state.granted if granted else state.rejected).add(voter_id)
    result = election_result(set(state.voter_ids), state.granted, state.rejected)
    if result is ElectionResult.WON:
        if pre_vote:
            node.transition_to_candidate(now_ms)
        else:
            node.transition_to_leader(now_ms)
    elif result is ElectionResult.LOST:
        node.election_lost(now_ms)
