"""The leader keeps its own voter entry up to date (KIP-853).

A voter that restarts with other controller listeners (a new port, a new host) or
another kraft.version range tells the leader with UpdateRaftVoter
(``rpc/update_voter.py``). A leader has nobody to tell: Kafka's leader writes its own
entry at the start of its epoch, in the LeaderChange batch
(``LeaderState.appendStartOfEpochControlRecords``, when ``voterNodeNeedsUpdate``),
unchecked. Until that, the voter set in the log sends the other voters and the
brokers to an address it no longer listens on.

Here the leader does what it would do for another voter's UpdateRaftVoter, once its
epoch has a high watermark and no voter change is in flight: a new endpoint is first
reached with ApiVersions (``endpoint_probe.py``, KAFKA-20661: an advertised address
nobody can reach must not be committed; the leader's own included), then one control
batch holding the updated VotersRecord is appended. A failed probe writes nothing and
is tried again a fetch timeout later.
"""
from __future__ import annotations

from kraft_server.raft import endpoint_probe as probe
from kraft_server.raft import membership
from kraft_server.raft.voters import VoterNode
from wire.uuids import ZERO_UUID


def local_node(node) -> VoterNode:
    """This node as its configuration describes it: what its voter entry should say."""
    cfg = node.config
    return VoterNode(node.local_key, tuple(cfg.listeners), cfg.kraft_version_min, cfg.kraft_version_max)


def differs(logged: VoterNode, mine: VoterNode) -> bool:
    return (set(logged.endpoints) != set(mine.endpoints)
            or (logged.kraft_version_min, logged.kraft_version_max) != (mine.kraft_version_min,
                                                                       mine.kraft_version_max))


def maybe_update(node, leader, now_ms: int) -> None:
    """Called from the leader's poll: start the update of its own entry when it is due."""
    if leader.own_update_done or now_ms < leader.own_update_due_ms:
        return
    cfg = node.config
    if node.kraft_version() < 1 or not cfg.listeners or node.local_key.directory_id == ZERO_UUID:
        leader.own_update_done = True  # kraft.version 0 keeps static voters; nothing to write
        return
    hwm = node.high_watermark
    if leader.change is not None or hwm is None or node.history.latest_offset() >= hwm:
        return  # one voter change at a time, on a committed voter set (as UpdateRaftVoter)
    logged = node.voter_set().node(node.local_key.node_id)
    mine = local_node(node)
    if logged is None or logged.key != mine.key or not differs(logged, mine):
        leader.own_update_done = True
        return
    leader.own_update_due_ms = now_ms + cfg.fetch_timeout_ms
    updated = node.voter_set().update(mine)
    new_endpoints = [e for e in probe.endpoints_to_probe(cfg, mine.endpoints) if e not in logged.endpoints]
    if not new_endpoints:
        append(node, updated, now_ms)
        return
    change = membership.PendingChange(
        membership.UPDATE, None, mine.key, mine.endpoints, True, now_ms,
        probes_left=tuple(new_endpoints[1:]), voter=mine)
    if probe.send(node, change, new_endpoints[0], now_ms):
        leader.change = change
        node.stats["own_voter_probes"] += 1


def append(node, voters, now_ms: int) -> None:
    from kraft_server.raft.rpc.update_voter import append_voters
    append_voters(node, voters, now_ms)
    appended(node, node.quorum.state)


def appended(node, leader) -> None:
    node.stats["own_voter_updates"] += 1
    leader.own_update_done = True
