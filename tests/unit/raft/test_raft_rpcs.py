"""The core's RPC rules, one node driven by hand; every message crosses the codec."""
from __future__ import annotations

import pytest
from wire.errors import ErrorCode
from wire.messages import fetch_response as fresp

from kraft_server.raft.quorum_config import MAX_BATCH_BYTES, METADATA_TOPIC
from kraft_server.raft.boundary import SendFailure
from kraft_server.common.values import OffsetAndEpoch
from kraft_server.raft.node import NotLeader
from kraft_server.raft.roles.base import Role
from tests.support.raft_harness import (
    answer, ask, begin_epoch_request, data_batches, drain, elect, end_epoch_request, fetch_request,
    make_node, partition, roundtrip, vote_request,
)


# -- Vote ------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,error", [
    (dict(last_offset=-1), ErrorCode.INVALID_REQUEST),
    (dict(last_epoch=-1), ErrorCode.INVALID_REQUEST),
    (dict(epoch=1, last_epoch=1), ErrorCode.INVALID_REQUEST),        # a real vote needs last < epoch
    (dict(epoch=1, last_epoch=2, pre_vote=True), ErrorCode.INVALID_REQUEST),
    (dict(voter_id=3), ErrorCode.INVALID_VOTER_KEY),                  # addressed to someone else
])
def test_vote_request_validation(kwargs, error):
    node = make_node()
    [resp] = ask(node, vote_request(**kwargs), 0)
    assert partition(resp).error_code == error and not partition(resp).vote_granted


def test_vote_with_other_cluster_id_is_rejected_at_top_level():
    node = make_node()
    [resp] = ask(node, vote_request(cluster="other"), 0)
    assert resp.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID


def test_vote_is_persisted_before_it_is_granted_and_given_once_per_epoch():
    node = make_node()
    [resp] = ask(node, vote_request(candidate=2, epoch=1), 0)
    assert partition(resp).vote_granted
    assert node.store.read().voted_id == 2 and node.store.read().epoch == 1
    [again] = ask(node, vote_request(candidate=2, epoch=1), 1)      # a retry: same answer
    assert partition(again).vote_granted
    [other] = ask(node, vote_request(candidate=3, epoch=1), 2)
    assert not partition(other).vote_granted


def test_vote_needs_an_up_to_date_log():
    node = make_node()
    node.shell.log.append(data_batches(0, 1, 3))
    [resp] = ask(node, vote_request(candidate=2, epoch=2, last_epoch=1, last_offset=2), 0)
    assert not partition(resp).vote_granted
    [resp] = ask(node, vote_request(candidate=3, epoch=2, last_epoch=1, last_offset=3), 0)
    assert partition(resp).vote_granted


def test_older_epoch_is_fenced_and_newer_epoch_is_adopted():
    node = make_node()
    ask(node, vote_request(candidate=2, epoch=5), 0)
    assert node.epoch == 5
    [resp] = ask(node, vote_request(candidate=3, epoch=4, last_epoch=0), 0)
    assert partition(resp).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert partition(resp).leader_epoch == 5


def test_pre_vote_persists_nothing_and_does_not_bump_epoch():
    node = make_node()
    drain(node, 0)  # the shell persists the start-up state
    writes = node.store.writes
    [resp] = ask(node, vote_request(candidate=2, epoch=0, pre_vote=True), 0)
    assert partition(resp).vote_granted
    assert node.store.writes == writes and node.epoch == 0


def test_follower_that_fetched_refuses_pre_votes():
    node = make_node()
    ask(node, begin_epoch_request(leader=2, epoch=1), 0)
    assert node.role is Role.FOLLOWER
    [resp] = ask(node, vote_request(candidate=3, epoch=1, pre_vote=True), 0)
    assert partition(resp).vote_granted          # has not heard from the leader yet
    drain(node, 0)
    fetch = next(r for r in node.sent if r.api_key == 1)
    from tests.support.raft_harness import answer
    part = fresp.PartitionData(partition_index=0, high_watermark=-1,
                               current_leader=fresp.LeaderIdAndEpoch(leader_id=2, leader_epoch=1))
    answer(node, fetch, fresp.FetchResponse(responses=[fresp.FetchableTopicResponse(
        topic=METADATA_TOPIC, partitions=[part])]), 1)
    [resp] = ask(node, vote_request(candidate=3, epoch=1, pre_vote=True), 2)
    assert not partition(resp).vote_granted


def _fetching_follower():
    """A voter following leader 2 in epoch 1 that fetched once; returns (node, fetch)."""
    node = make_node()
    ask(node, begin_epoch_request(leader=2, epoch=1), 0)
    drain(node, 0)
    fetch = next(r for r in node.sent if r.api_key == 1)
    part = fresp.PartitionData(partition_index=0, high_watermark=-1,
                               current_leader=fresp.LeaderIdAndEpoch(leader_id=2, leader_epoch=1))
    answer(node, fetch, fresp.FetchResponse(responses=[fresp.FetchableTopicResponse(
        topic=METADATA_TOPIC, partitions=[part])]), 1)
    requests, _ = drain(node, 1)
    return node, next(r for r in requests if r.api_key == 1)


def _fail(node, request, failure, now):
    from kraft_server.raft.boundary import InboundResponse
    node.step(InboundResponse(request.correlation, request.destination, request.api_key,
                              failure=failure), now)


def test_reset_connection_to_the_leader_starts_a_pre_vote_early_and_grants_pre_votes():
    node, fetch = _fetching_follower()
    assert node.quorum.state.fetch_deadline_ms == 1 + node.config.fetch_timeout_ms
    _fail(node, fetch, SendFailure.DISCONNECTED, 10)
    deadline = node.quorum.state.fetch_deadline_ms
    assert 10 < deadline <= 10 + node.config.election_timeout_ms // 4
    [resp] = ask(node, vote_request(candidate=3, epoch=1, pre_vote=True), 11)
    assert partition(resp).vote_granted      # we no longer hear from the leader either
    node.tick(deadline)
    assert node.role is Role.PROSPECTIVE and node.epoch == 1


def test_timeout_to_the_leader_is_no_evidence():
    node, fetch = _fetching_follower()
    _fail(node, fetch, SendFailure.TIMEOUT, 10)
    assert node.quorum.state.fetch_deadline_ms == 1 + node.config.fetch_timeout_ms
    [resp] = ask(node, vote_request(candidate=3, epoch=1, pre_vote=True), 11)
    assert not partition(resp).vote_granted


def test_early_pre_vote_never_becomes_an_election_without_a_majority():
    # A voter that cannot take pre-votes counts as refusing an early pre-vote; losing
    # it returns to the leader with the fetch timeout we had, in the same epoch.
    node, fetch = _fetching_follower()
    _fail(node, fetch, SendFailure.DISCONNECTED, 10)
    node.tick(node.quorum.state.fetch_deadline_ms)
    assert node.role is Role.PROSPECTIVE
    requests, _ = drain(node, node.now_ms)
    for r in [r for r in requests if r.api_key == 52]:
        _fail(node, r, SendFailure.UNSUPPORTED_VERSION, node.now_ms + 1)
    assert node.role is Role.FOLLOWER and node.epoch == 1
    assert node.quorum.state.fetch_deadline_ms == 1 + node.config.fetch_timeout_ms


# -- elections ---------------------------------------------------------------------------
def test_election_goes_prospective_then_candidate_then_leader():
    node = make_node()
    start = node.quorum.state.election_deadline_ms
    # Starting with no leader known: a short random delay (a quarter of the election
    # timeout at most), not the whole timeout (issue 12 item 2).
    assert 0 < start <= node.config.election_timeout_ms // 4
    node.tick(start - 1)
    assert node.role is Role.UNATTACHED
    epoch = elect(node, now=start - 10_000)  # ticks at ``start``
    assert node.role is Role.LEADER and epoch == 1
    pre_votes = [r for r in node.sent if r.api_key == 52 and r.body.topics[0].partitions[0].pre_vote]
    assert {r.destination.node_id for r in pre_votes} == {2, 3}
    assert all(r.min_version == 2 and r.body.topics[0].partitions[0].replica_epoch == 0 for r in pre_votes)
    votes = [r for r in node.sent if r.api_key == 52 and not r.body.topics[0].partitions[0].pre_vote]
    assert {r.body.topics[0].partitions[0].replica_epoch for r in votes} == {1}
    drain(node, 10_000)  # the shell persists the new state before anything leaves
    assert node.store.read().leader_id == 1
    # start of epoch: a LeaderChangeMessage control batch at offset 0
    assert node.log.end_offset() == 1


def test_refused_connections_lose_the_pre_vote_at_once_and_it_is_retried_after_a_backoff():
    # Voters not listening yet (all three started together): their refused connections
    # answer this round, instead of a wait for the election timeout.
    node = make_node()
    start = node.quorum.state.election_deadline_ms
    node.tick(start)
    assert node.role is Role.PROSPECTIVE
    requests, _ = drain(node, start)
    pre_votes = [r for r in requests if r.api_key == 52]
    assert len(pre_votes) == 2
    _fail(node, pre_votes[0], SendFailure.DISCONNECTED, start + 1)
    assert node.role is Role.PROSPECTIVE     # node 3 could still make a majority with us
    _fail(node, pre_votes[1], SendFailure.DISCONNECTED, start + 2)
    assert node.role is Role.UNATTACHED and node.epoch == 0
    retry = node.quorum.state.election_deadline_ms
    assert start + 2 < retry <= start + 2 + 2 * node.config.retry_backoff_ms
    node.tick(retry)
    assert node.role is Role.PROSPECTIVE and node.epoch == 0


def test_prospective_skips_pre_vote_when_peer_lacks_vote_v2():
    node = make_node()
    node.tick(10_000)
    requests, _ = drain(node, 10_000)
    vote = next(r for r in requests if r.api_key == 52)
    from kraft_server.raft.boundary import InboundResponse
    node.step(InboundResponse(vote.correlation, vote.destination, 52,
                              failure=SendFailure.UNSUPPORTED_VERSION), 10_001)
    assert node.role is Role.CANDIDATE and node.epoch == 1
    drain(node, 10_001)  # the shell persists the vote for ourselves before the Votes leave
    assert node.store.read().voted_id == 1


def test_pre_vote_fenced_by_a_newer_leaderless_epoch_is_retried_after_a_backoff():
    # Not the rest of the election timer: a voter that cannot win but keeps bumping
    # the epoch would otherwise fence every pre-vote we send (simulation seed 89831161).
    from wire.messages import vote_response as vresp
    node = make_node()
    node.tick(10_000)
    assert node.role is Role.PROSPECTIVE
    requests, _ = drain(node, 10_000)
    pre_vote = next(r for r in requests if r.api_key == 52 and r.destination.node_id == 2)
    part = vresp.PartitionData(partition_index=0, error_code=ErrorCode.FENCED_LEADER_EPOCH,
                               leader_id=-1, leader_epoch=5, vote_granted=False)
    answer(node, pre_vote, vresp.VoteResponse(
        topics=[vresp.TopicData(topic_name=METADATA_TOPIC, partitions=[part])]), 10_001)
    assert node.role is Role.UNATTACHED and node.epoch == 5
    deadline = node.quorum.state.election_deadline_ms
    assert 10_001 < deadline <= 10_001 + 2 * node.config.retry_backoff_ms
    node.tick(deadline)
    assert node.role is Role.PROSPECTIVE and node.epoch == 5


def test_single_voter_elects_itself_and_commits_alone():
    node = make_node(voters=(1,))
    node.tick(10_000)
    assert node.role is Role.LEADER
    drain(node, 10_000)
    assert node.high_watermark == 1
    first, last = node.propose([b"a", b"b"], 10_000)
    assert (first, last) == (1, 2)
    node.tick(10_030)          # after append.linger.ms
    drain(node, 10_030)
    assert node.high_watermark == 3


# -- leader: Fetch, HWM, long poll, check-quorum ----------------------------------------
def step(node, body, now):
    """A request stepped into the core without running a Ready."""
    from kraft_server.raft.boundary import InboundRequest
    version = 18  # with the fetcher's HighWatermark (KIP-1166)
    node.step(InboundRequest(("test", body.API_KEY), body.API_KEY, version, roundtrip(body, version)), now)


def leader_node():
    node = make_node()
    elect(node)
    drain(node, 10_000)
    return node


def test_high_watermark_waits_for_the_epoch_start_batch_to_commit():
    node = leader_node()
    assert node.high_watermark is None
    [resp] = ask(node, fetch_request(replica=2, epoch=1, offset=0, last_epoch=0), 10_001)
    assert partition(resp).records  # the LeaderChangeMessage batch
    assert node.high_watermark is None
    [resp] = ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_002)
    assert node.high_watermark == 1 and partition(resp).high_watermark == 1


def test_fetch_long_poll_parks_until_data_arrives():
    node = leader_node()
    ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    assert ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, hwm=1), 10_002) == []
    node.propose([b"x"], 10_003)
    node.tick(10_030)
    _, responses = drain(node, 10_030)
    assert len(responses) == 1 and partition(responses[0]).records


def test_fetch_long_poll_answers_empty_after_max_wait():
    node = leader_node()
    ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    assert ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, hwm=1), 10_002) == []
    node.tick(10_502)
    _, responses = drain(node, 10_502)
    assert len(responses) == 1 and partition(responses[0]).records in (b"", None)


def test_quiet_readys_skip_the_parked_scan_but_not_a_later_deadline_or_new_data():
    node = leader_node()
    ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    assert ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, hwm=1), 10_002) == []
    assert ask(node, fetch_request(replica=7, epoch=1, offset=1, last_epoch=1, hwm=1, max_wait=300),
               10_100) == []
    assert node.quorum.state.parked_deadline == 10_400  # the observer's, the earliest
    node.tick(10_399)
    assert drain(node, 10_399)[1] == []
    node.tick(10_400)
    _, responses = drain(node, 10_400)        # the observer's wait is over, not the voter's
    assert len(responses) == 1 and node.quorum.state.parked_deadline == 10_502
    node.tick(10_401)
    assert drain(node, 10_401)[1] == []
    node.propose([b"x"], 10_401)
    node.tick(10_430)
    _, responses = drain(node, 10_430)        # new data answers the voter at once
    assert len(responses) == 1 and partition(responses[0]).records
    assert node.quorum.state.parked == [] and node.quorum.state.parked_deadline is None


@pytest.mark.parametrize("epoch,error", [(0, ErrorCode.FENCED_LEADER_EPOCH),
                                         (2, ErrorCode.UNKNOWN_LEADER_EPOCH)])
def test_fetch_epoch_checks(epoch, error):
    node = leader_node()
    [resp] = ask(node, fetch_request(replica=2, epoch=epoch, offset=0, last_epoch=0), 10_001)
    assert partition(resp).error_code == error
    assert partition(resp).current_leader.leader_id == 1


def test_fetch_from_a_follower_names_the_leader():
    node = make_node()
    ask(node, begin_epoch_request(leader=2, epoch=1), 0)
    [resp] = ask(node, fetch_request(replica=4, epoch=1, offset=0, last_epoch=0), 1)
    part = partition(resp)
    assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (2, 1)
    assert [(e.node_id, e.port) for e in resp.node_endpoints] == [(2, 9002)]


def test_diverging_fetch_gets_the_epoch_end():
    node = make_node()
    node.shell.log.append(data_batches(0, 1, 2))
    node.shell.log.flush()
    node = make_node(log=node.shell.log)
    elect(node)             # epoch 2 starts at offset 2
    drain(node, 10_000)
    [resp] = ask(node, fetch_request(replica=2, epoch=2, offset=5, last_epoch=1), 10_001)
    d = partition(resp).diverging_epoch
    assert (d.epoch, d.end_offset) == (1, 2)


def test_fetch_below_log_start_is_told_the_snapshot():
    node = leader_node()
    for t in (10_001, 10_002):
        ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, max_wait=0), t)
    writer = node.shell.log.create_snapshot(OffsetAndEpoch(1, 1))
    writer.append(node.log.read(0, 1 << 20))
    writer.freeze()
    node.shell.log.delete_before_snapshot(OffsetAndEpoch(1, 1))
    [resp] = ask(node, fetch_request(replica=3, epoch=1, offset=0, last_epoch=0), 10_003)
    s = partition(resp).snapshot_id
    assert (s.end_offset, s.epoch) == (1, 1)


def test_check_quorum_resigns_without_fetches():
    node = leader_node()
    node.tick(10_000 + 3_001)
    assert node.role is Role.RESIGNED
    requests, _ = drain(node, 13_001)
    assert {r.destination.node_id for r in requests if r.api_key == 54} == {2, 3}


def test_propose_on_follower_raises():
    node = make_node()
    with pytest.raises(NotLeader):
        node.propose([b"x"], 0)


def test_linger_batches_proposals_together():
    node = leader_node()
    node.propose([b"a"], 10_001)
    node.propose([b"b", b"c"], 10_002)
    end = node.log.end_offset()
    node.tick(10_020)
    assert node.log.end_offset() == end     # still lingering
    node.tick(10_027)
    assert node.log.end_offset() == end + 3
    drain(node, 10_027)  # the shell performs the append
    assert len(node.shell.log.batches()) == 2     # start-of-epoch batch + one data batch


def test_linger_counts_from_when_a_late_producer_queued_the_first_record():
    node = leader_node()
    node.propose([b"a"], 10_010, queued_ms=10_001)   # due at 10_001, handed over late
    node.propose([b"b"], 10_012, queued_ms=10_002)   # the batch's linger already runs
    end = node.log.end_offset()
    node.tick(10_025)
    assert node.log.end_offset() == end     # 10_001 + 25 not reached
    node.tick(10_026)
    assert node.log.end_offset() == end + 2
    node.propose([b"c"], 10_030, queued_ms=10_040)   # never later than now
    node.tick(10_055)
    assert node.log.end_offset() == end + 3


def test_only_a_proposal_that_moves_the_next_deadline_asks_for_a_cycle():
    node = leader_node()
    node.propose([b"a"], 10_001)
    assert node.propose_needs_cycle        # the batch's linger started
    node.propose([b"b"], 10_002)
    assert not node.propose_needs_cycle    # the loop already sleeps toward that linger
    node.propose([b"x" * MAX_BATCH_BYTES], 10_003)
    assert node.propose_needs_cycle        # a full batch: drained at once


# -- BeginQuorumEpoch / EndQuorumEpoch -----------------------------------------------------
def test_begin_epoch_makes_a_follower_and_learns_endpoints():
    node = make_node(voters=(1, 2))
    [resp] = ask(node, begin_epoch_request(leader=2, epoch=3), 0)
    assert partition(resp).error_code == 0
    assert (node.role, node.epoch, node.leader_id) == (Role.FOLLOWER, 3, 2)
    drain(node, 0)
    assert [r.destination.endpoint.port for r in node.sent if r.api_key == 1] == [9002]


def test_end_epoch_lets_the_first_preferred_candidate_campaign_at_once():
    node = make_node()
    ask(node, begin_epoch_request(leader=2, epoch=1), 0)
    ask(node, end_epoch_request(leader=2, epoch=1, preferred=(1, 3)), 5)
    node.tick(5)
    assert node.role is Role.PROSPECTIVE


def test_leader_resign_sends_end_quorum_epoch_with_preferred_candidates():
    node = leader_node()
    ask(node, fetch_request(replica=3, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    node.resign(10_002)
    requests, _ = drain(node, 10_002)
    ends = [r for r in requests if r.api_key == 54]
    assert ends and [c.candidate_id for c in ends[0].body.topics[0].partitions[0].preferred_candidates] == [3, 2]



def test_only_voter_restarting_becomes_leader_at_once_in_a_new_epoch():
    node = make_node(voters=(1,))
    assert node.role is Role.LEADER and node.epoch == 1
    drain(node, 0)
    again = make_node(voters=(1,), log=node.shell.log, store=node.store)
    assert again.role is Role.LEADER and again.epoch == 2


def test_a_voter_without_pre_vote_that_refused_our_log_is_not_asked_again_every_round():
    """Beyond Kafka (membership seed 107639315): a voter that cannot take pre-votes
    (Vote < v2) is asked for a real vote straight away; once it refused our log, its
    missing pre-vote counts as a refusal while our log is unchanged (for 3 rounds), so
    we stop bumping the epoch for votes it will refuse."""
    from wire.messages import vote_response as vresp
    from kraft_server.raft.boundary import InboundResponse
    from tests.support.raft_harness import answer

    def answer_vote(node, now, granted=None):
        requests, _ = drain(node, now)
        [req] = [r for r in requests if r.api_key == 52]
        pre = req.body.topics[0].partitions[0].pre_vote
        if granted is None:
            node.step(InboundResponse(req.correlation, req.destination, 52,
                                      failure=SendFailure.UNSUPPORTED_VERSION), now)
        else:
            part = vresp.PartitionData(partition_index=0, leader_id=-1, leader_epoch=node.epoch,
                                       vote_granted=granted)
            answer(node, req, vresp.VoteResponse(topics=[vresp.TopicData(topic_name=METADATA_TOPIC,
                                                                        partitions=[part])]), now)
        return pre

    node = make_node(voters=(1, 2))
    now = 10_000
    node.tick(now)
    assert node.role is Role.PROSPECTIVE
    assert answer_vote(node, now) is True                # pre-vote: voter 2 predates KIP-996
    assert node.role is Role.CANDIDATE and node.epoch == 1
    assert answer_vote(node, now, granted=False) is False  # it refuses our log
    epochs = []
    for _ in range(4):
        now += 5_000
        node.tick(now)
        if node.role is Role.PROSPECTIVE:
            answer_vote(node, now)
        epochs.append((node.role, node.epoch))
    # Three rounds the refusal stands (no new epoch), then we ask for real again.
    assert [e for _, e in epochs[:3]] == [1, 1, 1]
    assert all(role is not Role.CANDIDATE for role, _ in epochs[:3])
    assert epochs[3] == (Role.CANDIDATE, 2)


def test_many_parked_observers_are_answered_a_slice_per_ready_after_the_voters():
    from kraft_server.raft.rpc.fetch import OBSERVER_ANSWERS_PER_READY as SLICE
    node = leader_node()
    for voter in (2, 3):
        ask(node, fetch_request(replica=voter, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    assert node.high_watermark == 1
    observers = list(range(100, 100 + 2 * SLICE + 5))
    for replica in [2, 3] + observers:  # every one parks at the log end
        assert ask(node, fetch_request(replica=replica, epoch=1, offset=1, last_epoch=1, hwm=1), 10_002) == []
    node.propose([b"x"], 10_003)
    node.tick(10_030)
    answered, turns = [], []
    for now in range(10_030, 10_040):  # new data wakes every one (Kafka: maybeComplete(endOffset))
        ready, more = node.shell.turn(now, lambda request: None, lambda response: None)
        turns.append(len(ready.responses))
        answered += ready.responses
        if not more:
            break
    assert turns == [2 + SLICE, SLICE, 5], turns  # voters first with one slice, then the rest
    observed = [partition(roundtrip(r.body, r.api_version, requests=False)) for r in answered[2:]]
    assert all(p.records and p.high_watermark == 1 for p in observed)  # the records, before the HWM


def test_observers_at_one_offset_share_one_answer_built_from_one_log_read():
    node = leader_node()
    for voter in (2, 3):
        ask(node, fetch_request(replica=voter, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    observers = list(range(100, 110))
    for replica in [2, 3] + observers:  # every one parks at the log end
        assert ask(node, fetch_request(replica=replica, epoch=1, offset=1, last_epoch=1, hwm=1), 10_002) == []
    reads = []
    real_read = node.log.read
    node.log.read = lambda offset, max_bytes: reads.append(offset) or real_read(offset, max_bytes)
    node.propose([b"x"], 10_003)
    node.tick(10_030)
    ready, _ = node.shell.turn(10_030, lambda request: None, lambda response: None)
    assert len(ready.responses) == 12 and reads == [1]  # new data: one answer, one read for all
    assert len({id(r.body) for r in ready.responses}) == 1
    got = partition(roundtrip(ready.responses[-1].body, 17, requests=False))
    assert got.records and got.high_watermark == 1
    for replica in observers:  # they park at the new end
        assert ask(node, fetch_request(replica=replica, epoch=1, offset=2, last_epoch=1, hwm=1), 10_031) == []
    for voter in (2, 3):  # the voters' acks move the HWM
        step(node, fetch_request(replica=voter, epoch=1, offset=2, last_epoch=1), 10_031)
    assert node.high_watermark == 2
    ready, _ = node.shell.turn(10_031, lambda request: None, lambda response: None)
    assert len(ready.responses) == 12 and reads == [1]  # the HWM moved (Kafka: completeAll): no records
    assert len({id(r.body) for r in ready.responses[2:]}) == 1
    got = partition(roundtrip(ready.responses[-1].body, 17, requests=False))
    assert not got.records and got.high_watermark == 2


def test_deferred_observers_keep_their_turn_and_voters_with_new_data_go_first():
    from kraft_server.raft.boundary import InboundRequest
    from kraft_server.raft.rpc.fetch import OBSERVER_ANSWERS_PER_READY as SLICE

    def park(replica, offset, hwm, now):  # the handle names the replica
        body = fetch_request(replica=replica, epoch=1, offset=offset, last_epoch=1, hwm=hwm)
        node.step(InboundRequest(("r", replica), 1, 18, roundtrip(body, 18)), now)

    def turn(now):
        ready, more = node.shell.turn(now, lambda request: None, lambda response: None)
        return [r.handle[1] for r in ready.responses], more

    node = leader_node()
    for voter in (2, 3):
        ask(node, fetch_request(replica=voter, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    observers = list(range(100, 100 + 2 * SLICE + 5))
    for replica in [2, 3] + observers:
        park(replica, 1, 1, 10_002)
    node.propose([b"x"], 10_003)
    node.tick(10_030)
    answered, more = turn(10_030)  # new data wakes every one: the voters, then one slice
    assert answered == [2, 3] + observers[:SLICE] and more
    for voter in (2, 3):  # their acks (parked again at the new end) move the HWM
        park(voter, 2, 1, 10_031)
    assert node.high_watermark == 2
    answered, more = turn(10_031)  # the HWM moved: the voters, then the next slice in order
    assert answered == [2, 3] + observers[SLICE:2 * SLICE] and more
    for voter in (2, 3):
        park(voter, 2, 2, 10_032)
    park(999, 2, 2, 10_032)  # parks behind the observers already due
    node.propose([b"y"], 10_032)
    node.tick(10_060)
    answered, more = turn(10_060)  # new data: the voters first, then the rest in order, 999 last
    assert answered == [2, 3] + observers[2 * SLICE:] + [999]
    assert node.quorum.state.due_observers == 0 and node.quorum.state.parked == []
