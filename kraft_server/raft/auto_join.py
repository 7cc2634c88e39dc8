"""Auto-join (``controller.quorum.auto.join.enable``, KIP-853 / Kafka 4.2+): an observer
controller makes itself a voter.

Kafka's ``KafkaRaftClient.pollFollowerAsObserver``: under kraft.version 1, once the
observer has fetched from the leader and its "update voter set" period
(``controller.quorum.fetch.timeout.ms``) has expired, it sends instead of a Fetch

- RemoveRaftVoter for the voter that has its node id but another directory id (its
  old disk), if there is one;
- otherwise AddRaftVoter for itself, with its controller listeners and
  ``AckWhenCommitted=false``.

The period restarts whenever one is sent; the answer changes nothing by itself: the
observer sees its new voter set by replicating the VotersRecord.
"""
from __future__ import annotations

from wire.messages import add_raft_voter_request as areq
from wire.messages import remove_raft_voter_request as rreq

ADD_KEY, REMOVE_KEY = 80, 81


def maybe_send(node, state, dest, now_ms: int) -> bool:
    cfg = node.config
    if not cfg.auto_join or node.is_voter() or node.kraft_version() < 1 or not state.has_fetched \
            or now_ms < state.update_voter_due_ms or not cfg.listeners:
        return False
    me = node.local_key
    old = node.voter_set().node(me.node_id)
    if old is not None:
        body = rreq.RemoveRaftVoterRequest(cluster_id=cfg.cluster_id, voter_id=old.key.node_id,
                                           voter_directory_id=old.key.directory_id)
        sent = node.send(dest, REMOVE_KEY, body, now_ms)
    else:
        body = areq.AddRaftVoterRequest(
            cluster_id=cfg.cluster_id, timeout_ms=cfg.request_timeout_ms, voter_id=me.node_id,
            voter_directory_id=me.directory_id, ack_when_committed=False,
            listeners=[areq.Listener(name=e.name, host=e.host, port=e.port) for e in cfg.listeners])
        sent = node.send(dest, ADD_KEY, body, now_ms, 1)
    if sent:
        state.update_voter_due_ms = now_ms + cfg.fetch_timeout_ms
        node.stats["auto_join_requests"] += 1
    return sent


def handle_response(node, inflight, body, failure, now_ms: int) -> bool:
    """Answers to our own Add/RemoveRaftVoter: nothing to do but back off on failure."""
    return failure is None
