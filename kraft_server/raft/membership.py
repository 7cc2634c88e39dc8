"""The leader's one voter change at a time (KIP-853), shared by AddRaftVoter,
RemoveRaftVoter and the kraft.version upgrade.

Kafka keeps this in ``LeaderState`` (``AddVoterHandlerState``,
``RemoveVoterHandlerState``): at most one Add/Remove in flight, each with a timer of
``controller.quorum.request.timeout.ms``. A change finishes when

- the VotersRecord it appended commits (HWM > its offset) -> NONE,
- AckWhenCommitted=false and the record was appended -> NONE at once,
- the timer fires first -> REQUEST_TIMED_OUT (an appended record stays in the log),
- the leader loses its leadership -> NOT_LEADER_OR_FOLLOWER.

A leader that removed itself keeps leading until that removal commits, then
resigns (``transition_to_resigned`` sends EndQuorumEpoch).
"""
from __future__ import annotations

from dataclasses import dataclass

from wire.errors import ErrorCode
from wire.messages import AddRaftVoterResponse, RemoveRaftVoterResponse
from wire.records import ControlRecordType, build_control_batch

from kraft_server.raft.boundary import Endpoint, InboundRequest
from kraft_server.raft.roles.base import Role
from kraft_server.raft.rpc.common import cluster_id_ok
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet
from wire.uuids import ZERO_UUID

ADD, REMOVE, UPDATE = "add", "remove", "update"
_WORDS = {ADD: ("Add", "adding"), REMOVE: ("Remove", "removing")}


@dataclass
class PendingChange:
    kind: str  # ADD, REMOVE, or UPDATE (an UpdateRaftVoter whose new endpoint is probed)
    inbound: InboundRequest | None  # answered when the change finishes (None: the leader's own update)
    key: VoterKey
    endpoints: tuple[Endpoint, ...]
    ack_when_committed: bool
    deadline_ms: int
    probe_correlation: int = -1  # Add: the ApiVersions request to the new voter
    last_offset: int | None = None  # offset of the appended VotersRecord
    # Add: the endpoint being probed, those left to probe, and the kraft.version
    # range the default listener's answer gave (endpoint_probe.py)
    probing: Endpoint | None = None
    probes_left: tuple[Endpoint, ...] = ()
    kraft_range: tuple[int, int] | None = None
    timeout_message: str | None = None  # what the timer's expiry says, if not the default
    voter: VoterNode | None = None  # Update: the voter as it asks to be
    reply: object = None  # Update: callable(error) -> the response body


@dataclass
class PendingUpgrade:
    """An UpdateFeatures kraft.version upgrade waiting for its control batch to commit."""

    inbound: InboundRequest
    last_offset: int
    deadline_ms: int
    respond: object  # callable(error, message) -> response body


def response(kind: str, error: int = ErrorCode.NONE, message: str | None = None):
    cls = AddRaftVoterResponse if kind == ADD else RemoveRaftVoterResponse
    return cls(error_code=error, error_message=message)


def finish(node, leader, error: int = ErrorCode.NONE, message: str | None = None) -> None:
    change, leader.change = leader.change, None
    if change is not None:
        if change.inbound is not None:  # None: the leader's own update (own_voter.py), nobody to answer
            body = change.reply(error) if change.reply is not None else response(change.kind, error, message)
            node.respond(change.inbound, body)
        node.stats[f"{change.kind}_voter_{'ok' if error == ErrorCode.NONE else 'failed'}"] += 1


def expire(node, leader, now_ms: int) -> None:
    """``maybeExpirePendingOperation``: the timer of the change in flight."""
    change = leader.change
    if change is not None and now_ms >= change.deadline_ms:
        finish(node, leader, ErrorCode.REQUEST_TIMED_OUT, change.timeout_message or
               f"Request timed out waiting for the {change.kind} voter operation to complete")
    up = leader.upgrade
    if up is not None and now_ms >= up.deadline_ms:
        leader.upgrade = None
        node.respond(up.inbound, up.respond(ErrorCode.REQUEST_TIMED_OUT,
                                            "Timed out waiting for kraft.version to commit"))


def deadlines(leader) -> list[int]:
    out = []
    if leader.change is not None:
        out.append(leader.change.deadline_ms)
    if leader.upgrade is not None:
        out.append(leader.upgrade.deadline_ms)
    return out


def request_error(node, req, kind: str) -> tuple[int, str | None] | None:
    """What Add and RemoveRaftVoter check first, as Kafka: the cluster id, that we lead,
    a voter key with an id and a directory id. (error, message), or None."""
    if not cluster_id_ok(node, req.cluster_id):
        return ErrorCode.INCONSISTENT_CLUSTER_ID, None
    if node.role is not Role.LEADER:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, None
    if req.voter_id < 0 or req.voter_directory_id == ZERO_UUID:
        return ErrorCode.INVALID_REQUEST, f"{_WORDS[kind][0]} voter request didn't include a valid voter"
    return None


def change_error(node, leader, now_ms: int, kind: str) -> tuple[int, str] | None:
    """Then, before the change itself: no change in flight and a known HWM, kraft.version
    1, and the latest voter set committed. (error, message), or None."""
    reason = uncommitted_change_error(node, leader, now_ms)
    if reason:
        return ErrorCode.REQUEST_TIMED_OUT, reason
    if node.kraft_version() < 1:
        return (ErrorCode.UNSUPPORTED_VERSION, f"Cluster doesn't support {_WORDS[kind][1]} voter because the "
                                               f"kraft.version feature is {node.kraft_version()}")
    reason = uncommitted_voters_error(node)
    if reason:
        return ErrorCode.REQUEST_TIMED_OUT, reason
    return None


def uncommitted_change_error(node, leader, now_ms: int) -> str | None:
    """The REQUEST_TIMED_OUT reasons every change shares, or None (Kafka checks
    pending operation, then the HWM; the caller checks kraft.version between the
    HWM and the uncommitted-record checks)."""
    expire(node, leader, now_ms)
    if leader.change is not None:
        return "Request timed out waiting for leader to handle previous voter change request"
    if node.high_watermark is None:
        return "Request timed out waiting for leader to establish HWM and fence previous voter changes"
    return None


def uncommitted_voters_error(node) -> str | None:
    hwm = node.high_watermark
    offset = node.history.latest_offset()
    if offset >= hwm:
        return (f"Request timed out waiting for voters to commit the latest voter change at "
                f"{offset} with HWM {hwm}")
    return None


def append_voters(node, voters: VoterSet, now_ms: int, kraft_version: int | None = None) -> int:
    """Append a control batch with (optionally a KRaftVersionRecord and) a VotersRecord;
    returns the batch's last offset."""
    from wire.messages import KRaftVersionRecord
    node.drain_proposals()
    records = []
    if kraft_version is not None:
        records.append((ControlRecordType.KRAFT_VERSION,
                        KRaftVersionRecord(version=0, kraft_version=kraft_version)))
    records.append((ControlRecordType.KRAFT_VOTERS, voters.to_voters_record()))
    base = node.log.end_offset()
    node.leader_append(build_control_batch(base, node.epoch, now_ms, records))
    return base + len(records) - 1


def on_high_watermark(node, leader) -> None:
    """The HWM moved: finish what committed; a leader removed by a committed record resigns."""
    hwm = node.high_watermark
    if hwm is None:
        return
    change = leader.change
    if change is not None and change.last_offset is not None and hwm > change.last_offset:
        finish(node, leader)
    up = leader.upgrade
    if up is not None and hwm > up.last_offset:
        leader.upgrade = None
        node.respond(up.inbound, up.respond(ErrorCode.NONE, None))
    if not leader.resign_requested and not node.voter_set().is_voter(node.local_key) \
            and hwm > node.history.latest_offset():
        leader.resign_requested = True  # our removal committed (RemoveVoterHandler)
        node.stats["removed_leader_resigned"] += 1


def on_become_leader(node, leader) -> None:
    """Under kraft.version 0, start the voters for an upgrade from the static set with
    our own directory id, listeners and range (``KRaftVersionUpgrade.Voters``)."""
    if node.kraft_version() >= 1:
        return
    cfg = node.config
    me = VoterNode(node.local_key, tuple(cfg.listeners), cfg.kraft_version_min, cfg.kraft_version_max)
    leader.upgrade_voters = node.voter_set().update_ignoring_directory(me) or node.voter_set()


def on_leadership_lost(node, old_leader) -> None:
    if old_leader.change is not None:
        finish(node, old_leader, ErrorCode.NOT_LEADER_OR_FOLLOWER, "Leadership was lost")
    up, old_leader.upgrade = old_leader.upgrade, None
    if up is not None:
        node.respond(up.inbound, up.respond(ErrorCode.NOT_CONTROLLER, "Leadership was lost"))
