"""Timer work per role (Kafka's ``pollUnattached``/``pollFollower``/... ), and the next
deadline the shell should wake us at.

Each ``_poll_<role>`` sends what that role sends while nothing arrives and acts on
its expired timers. Sends are idempotent: ``node.send`` refuses while a request to
the same destination is in flight or backing off, so polling often is harmless.
"""
from __future__ import annotations

from kraft_server.raft import auto_join, membership, own_voter
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc import begin_epoch, end_epoch, fetch, fetch_snapshot, update_voter, vote


def poll(node, now_ms: int) -> None:
    for _ in range(4):  # a transition may make the new role's work due at once
        role = node.role
        _POLLS[role](node, node.quorum.state, now_ms)
        if node.role is role:
            return


def _poll_unattached(node, state, now_ms: int) -> None:
    if node.is_voter():
        if now_ms >= state.election_deadline_ms:
            node.transition_to_prospective(now_ms)
        return
    # Observers look for the leader through the bootstrap servers (KIP-853).
    dest = node.bootstrap_destination_if_free(now_ms)
    if dest is not None:
        node.send(dest, fetch.API_KEY, fetch.build_fetch_request(node), now_ms,
                  fetch.MIN_VERSION, fetch_offset=node.log.end_offset())


def _ask_for_votes(node, state, now_ms: int, pre_vote: bool) -> None:
    voters = node.voter_set()
    for voter_id in state.voter_ids:
        if voter_id == node.local_key.node_id or voter_id in state.granted or voter_id in state.rejected:
            continue
        dest = node.voter_destination(voter_id)
        key = voters.node(voter_id)
        if dest is None or key is None or not node.can_send(dest, now_ms):
            continue
        node.send(dest, vote.API_KEY, vote.build_vote_request(node, key.key, pre_vote), now_ms,
                  2 if pre_vote else 0, pre_vote=pre_vote)


def _poll_prospective(node, state, now_ms: int) -> None:
    if now_ms >= state.election_deadline_ms:
        node.election_lost(now_ms)
        return
    _ask_for_votes(node, state, now_ms, pre_vote=True)


def _poll_candidate(node, state, now_ms: int) -> None:
    if now_ms >= state.election_deadline_ms:
        if state.backing_off:
            node.transition_to_prospective(now_ms)
        else:
            node.election_lost(now_ms)  # timed out: back off first, like a lost election
        return
    if state.backing_off:
        return
    _ask_for_votes(node, state, now_ms, pre_vote=False)


def _poll_leader(node, state, now_ms: int) -> None:
    membership.expire(node, state, now_ms)
    own_voter.maybe_update(node, state, now_ms)
    if state.resign_requested:
        node.transition_to_resigned(now_ms)
        return
    if now_ms >= state.check_quorum_deadline_ms:
        if state.check_quorum_needed() > 0:
            node.stats["check_quorum_resignations"] += 1
            node.transition_to_resigned(now_ms)
            return
        state.check_quorum_deadline_ms = now_ms + node.config.check_quorum_timeout_ms
    if state.linger_deadline_ms is not None and now_ms >= state.linger_deadline_ms:
        # Answers already waiting go out first: appending now would hold them behind
        # this Ready's write and fsync. Put off once; the next Ready appends.
        if node.has_responses() and state.drain_put_off in (None, node.ready_count):
            state.drain_put_off = node.ready_count
        else:
            state.drain_put_off = None
            node.drain_proposals()
    voters = node.voter_set()
    for voter_id in sorted(state.unacked_voters):
        dest, key = node.voter_destination(voter_id), voters.node(voter_id)
        if dest is not None and key is not None and node.can_send(dest, now_ms):
            node.send(dest, begin_epoch.API_KEY, begin_epoch.build_begin_epoch_request(node, key.key),
                      now_ms)


def _poll_follower(node, state, now_ms: int) -> None:
    if now_ms >= state.fetch_deadline_ms:
        if node.is_voter():
            node.transition_to_prospective(now_ms)
        else:
            node.observer_lost_leader(now_ms)
        return
    dest = node.voter_destination(state.leader_id)
    if dest is None or not node.can_send(dest, now_ms):
        if dest is None and not node.is_voter():
            node.observer_lost_leader(now_ms)
        return
    if state.snapshot is not None:
        node.send(dest, fetch_snapshot.API_KEY,
                  fetch_snapshot.build_fetch_snapshot_request(node, state.snapshot), now_ms)
    elif not update_voter.maybe_send(node, state, dest, now_ms) \
            and not auto_join.maybe_send(node, state, dest, now_ms):
        node.send(dest, fetch.API_KEY, fetch.build_fetch_request(node), now_ms, fetch.MIN_VERSION,
                  fetch_offset=node.log.end_offset())


def _poll_resigned(node, state, now_ms: int) -> None:
    voters = node.voter_set()
    for voter_id in sorted(state.unacked_voters):
        dest = node.voter_destination(voter_id)
        if dest is not None and voters.node(voter_id) is not None and node.can_send(dest, now_ms):
            node.send(dest, end_epoch.API_KEY,
                      end_epoch.build_end_epoch_request(node, state.preferred_candidates), now_ms)
    if not state.shutting_down and now_ms >= state.election_deadline_ms:
        node.transition_to_epoch(state.epoch + 1, -1, now_ms)


_POLLS = {
    Role.UNATTACHED: _poll_unattached,
    Role.PROSPECTIVE: _poll_prospective,
    Role.CANDIDATE: _poll_candidate,
    Role.LEADER: _poll_leader,
    Role.FOLLOWER: _poll_follower,
    Role.RESIGNED: _poll_resigned,
}


def next_deadline(node, now_ms: int) -> int | None:
    """The earliest time ``tick`` has something to do (None: only messages can help)."""
    s, role = node.quorum.state, node.role
    times = [t for t in node.backoff_deadlines() if t > now_ms]
    if role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE, Role.RESIGNED):
        if role is not Role.RESIGNED or not s.shutting_down:
            times.append(s.election_deadline_ms)
    elif role is Role.FOLLOWER:
        times.append(s.fetch_deadline_ms)
        if s.update_voter_due_ms > now_ms:
            times.append(s.update_voter_due_ms)
    elif role is Role.LEADER:
        times.append(s.check_quorum_deadline_ms)
        if s.linger_deadline_ms is not None:
            times.append(s.linger_deadline_ms)
        if s.parked_deadline is not None:
            times.append(s.parked_deadline)
        times.extend(membership.deadlines(s))
        if not s.own_update_done and s.own_update_due_ms > now_ms:
            times.append(s.own_update_due_ms)
    return min(times) if times else None
