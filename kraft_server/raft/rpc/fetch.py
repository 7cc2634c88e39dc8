"""Fetch (API 1): how followers and observers replicate, and how the leader learns
their progress (KIP-595: pull-based Raft).

Leader side (``handle_fetch_request``), in Kafka's order:
1. cluster id (INCONSISTENT_CLUSTER_ID, top level); exactly ``__cluster_metadata``/0
   and a replica id (INVALID_REQUEST);
2. FetchOffset >= 0, LastFetchedEpoch >= 0 and not above CurrentLeaderEpoch
   (INVALID_REQUEST);
3. CurrentLeaderEpoch: older FENCED_LEADER_EPOCH, newer UNKNOWN_LEADER_EPOCH, not
   the leader NOT_LEADER_OR_FOLLOWER — each with CurrentLeader so the fetcher can
   find the leader (this is how observers bootstrap);
4. the fetch position against our log (``fetch_position``): FetchOffset 0 while we
   hold a snapshot other than the bootstrap 0-0 -> SnapshotId of the latest (an
   empty replica takes the snapshot, not the log from 0); below the log start, or a
   LastFetchedEpoch older than our earliest snapshot -> SnapshotId of the latest; a
   LastFetchedEpoch whose end offset is below FetchOffset, or that we do not have ->
   DivergingEpoch (the fetcher truncates and retries);
5. otherwise record the replica's progress (HWM, check-quorum, epoch ack) and answer
   with records, or park the request until data arrives, the HWM moves or MaxWaitMs
   passes (KIP-1166: not parked when the fetcher's HighWatermark is behind ours).

Follower side (``handle_fetch_response``): adopt a newer leader/epoch, truncate on
DivergingEpoch, switch to FetchSnapshot on SnapshotId, else append and move the HWM
to min(leader HWM, our log end).
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import fetch_request as freq
from wire.messages import fetch_response as fresp
from wire.records import walk

from kraft_server.raft.quorum_config import (
    MAX_FETCH_BYTES, METADATA_PARTITION, METADATA_TOPIC, METADATA_TOPIC_ID,
)
from kraft_server.raft.boundary import SendFailure
from kraft_server.common.values import OffsetAndEpoch
from kraft_server.raft.roles.base import Role
from kraft_server.raft.roles.follower import SnapshotDownload
from kraft_server.raft.roles.leader import PendingFetch
from kraft_server.raft.rpc.common import cluster_id_ok, follow_current_leader
from kraft_server.raft.voters import VoterKey
from wire.uuids import ZERO_UUID

API_KEY = freq.FetchRequest.API_KEY
MIN_VERSION = 15  # ReplicaState (KIP-903); every KIP-853-era peer has it
NO_HWM = 2**63 - 1


def build_fetch_request(node):
    log, q = node.log, node.quorum
    part = freq.FetchPartition(
        partition=METADATA_PARTITION, current_leader_epoch=q.epoch, fetch_offset=log.end_offset(),
        last_fetched_epoch=log.last_fetched_epoch(), log_start_offset=log.start_offset(),
        partition_max_bytes=MAX_FETCH_BYTES, replica_directory_id=node.local_key.directory_id,
        high_watermark=node.high_watermark if node.high_watermark is not None else -1)
    return freq.FetchRequest(
        cluster_id=node.config.cluster_id,
        replica_state=freq.ReplicaState(replica_id=node.local_key.node_id, replica_epoch=-1),
        max_wait_ms=node.config.fetch_max_wait_ms, min_bytes=0, max_bytes=MAX_FETCH_BYTES,
        topics=[freq.FetchTopic(topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID, partitions=[part])])


def _response(node, listener: str, error=ErrorCode.NONE, top_error=ErrorCode.NONE, records=b"",
              diverging: OffsetAndEpoch | None = None, snapshot: OffsetAndEpoch | None = None):
    if top_error:
        return fresp.FetchResponse(error_code=top_error)
    q = node.quorum
    part = fresp.PartitionData(
        partition_index=METADATA_PARTITION, error_code=error,
        high_watermark=node.high_watermark if node.high_watermark is not None else -1,
        log_start_offset=node.log.start_offset(),
        current_leader=fresp.LeaderIdAndEpoch(leader_id=q.leader_id, leader_epoch=q.epoch),
        records=records)
    if diverging is not None:
        part.diverging_epoch = fresp.EpochEndOffset(epoch=diverging.epoch, end_offset=diverging.offset)
    if snapshot is not None:
        part.snapshot_id = fresp.SnapshotId(end_offset=snapshot.offset, epoch=snapshot.epoch)
    return fresp.FetchResponse(
        responses=[fresp.FetchableTopicResponse(topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID,
                                                partitions=[part])],
        node_endpoints=[fresp.NodeEndpoint(node_id=q.leader_id, host=e.host, port=e.port)
                        for e in node.leader_endpoints(listener)])


def earliest_snapshot(log):
    """``ReplicatedLog.earliestSnapshotId``: the oldest snapshot, the bootstrap
    checkpoint 0-0 included (Kafka keeps it with the others until the log start
    moves past it)."""
    ids = log.snapshot_ids()
    earliest = ids[0] if ids else None
    if (earliest is None or earliest.offset > 0) and log.start_offset() == 0 \
            and log.bootstrap_checkpoint() is not None:
        return OffsetAndEpoch(0, 0)  # a log that keeps the bootstrap checkpoint apart
    return earliest


def validate_position(log, offset: int, epoch: int):
    """``ReplicatedLog.validateOffsetAndEpoch``: ("valid"|"diverging"|"snapshot", id).

    The snapshot test is against the *earliest* snapshot (the one at or below the
    log start); only the id sent back is the latest one. A position the log still
    holds is checked against the log's epochs (diverging or valid)."""
    start = log.start_offset()
    if start == 0 and offset == 0:
        return "valid", OffsetAndEpoch(0, 0)
    if start < offset <= log.end_offset() and epoch == log.last_fetched_epoch():
        # the common case (a replica in our latest epoch): what the lookups below
        # would find, without them
        return "valid", OffsetAndEpoch(offset, epoch)
    earliest = earliest_snapshot(log)
    if earliest is not None and (offset < start or (offset == start and epoch != earliest.epoch)
                                 or epoch < earliest.epoch):
        latest = log.latest_snapshot()
        if latest is not None:
            return "snapshot", latest
    end = log.end_offset_for_epoch(epoch)
    if end.epoch != epoch or end.offset < offset:
        return "diverging", end
    return "valid", OffsetAndEpoch(offset, epoch)


def fetch_position(log, offset: int, epoch: int):
    """``KafkaRaftClient.tryCompleteFetchRequest``: an empty replica (FetchOffset 0)
    is sent the latest snapshot when there is one besides the bootstrap checkpoint
    (cheaper than the log from offset 0); otherwise ``validate_position``."""
    if offset == 0:
        latest = log.latest_snapshot()
        if latest is not None and latest != OffsetAndEpoch(0, 0):
            return "snapshot", latest
    return validate_position(log, offset, epoch)


def _the_partition(req, version: int):
    if len(req.topics) != 1:
        return None
    topic = req.topics[0]
    if (topic.topic_id != METADATA_TOPIC_ID) if version >= 13 else (topic.topic != METADATA_TOPIC):
        return None
    if len(topic.partitions) != 1 or topic.partitions[0].partition != METADATA_PARTITION:
        return None
    return topic.partitions[0]


def leader_only_error(node, epoch: int) -> int:
    q = node.quorum
    if epoch < q.epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    if epoch > q.epoch:
        return ErrorCode.UNKNOWN_LEADER_EPOCH
    if q.role is not Role.LEADER:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    return ErrorCode.NONE


def handle_fetch_request(node, inbound, now_ms: int):
    req, version = inbound.body, inbound.api_version
    if not cluster_id_ok(node, req.cluster_id):
        return _response(node, inbound.listener, top_error=ErrorCode.INCONSISTENT_CLUSTER_ID)
    replica_id = req.replica_state.replica_id if version >= 15 else req.replica_id
    part = _the_partition(req, version)
    if part is None or replica_id < 0:
        return _response(node, inbound.listener, top_error=ErrorCode.INVALID_REQUEST)
    if part.fetch_offset < 0 or part.last_fetched_epoch < 0 \
            or part.last_fetched_epoch > part.current_leader_epoch:
        return _response(node, inbound.listener, ErrorCode.INVALID_REQUEST)
    error = leader_only_error(node, part.current_leader_epoch)
    if error:
        return _response(node, inbound.listener, error)
    key = VoterKey(replica_id, part.replica_directory_id if version >= 17 else ZERO_UUID)
    follower_hwm = part.high_watermark if version >= 18 else NO_HWM
    return complete_fetch(node, inbound, key, part, follower_hwm, req.max_wait_ms, now_ms)


def complete_fetch(node, inbound, key: VoterKey, part, follower_hwm: int, max_wait_ms: int,
                   now_ms: int, may_park: bool = True):
    """Answer (or park) a validated Fetch while we are the leader of its epoch."""
    log, leader = node.log, node.quorum.state
    kind, position = fetch_position(log, part.fetch_offset, part.last_fetched_epoch)
    if kind == "diverging":
        return _response(node, inbound.listener, diverging=position)
    if kind == "snapshot":
        return _response(node, inbound.listener, snapshot=position)
    node.record_replica_fetch(key, part.fetch_offset, now_ms)
    hwm = node.high_watermark
    behind = hwm is not None and follower_hwm < hwm
    if part.fetch_offset >= log.end_offset() and may_park and max_wait_ms > 0 and not behind:
        deadline = now_ms + max_wait_ms
        leader.parked.append(PendingFetch(inbound, key, part, follower_hwm, hwm, deadline))
        if leader.parked_deadline is None or deadline < leader.parked_deadline:
            leader.parked_deadline = deadline
        return None
    return _records_answer(node, leader, inbound, part)


def _records_answer(node, leader, inbound, part):
    """The answer with the records from ``part.fetch_offset``. Replicas at the same
    offset (a hundred observers tailing the log) get the same answer object: the log
    is read and the answer built once while the log end, the HWM and the log start
    stay where they were (``LeaderState.answers``, dropped once no due observer is left); the
    connection layer then encodes it once (``api/raft_rpcs.deliver``)."""
    log = node.log
    stamp = (log.end_offset(), node.high_watermark, log.start_offset())
    if leader.answers_stamp != stamp:
        leader.answers.clear()
        leader.answers_stamp = stamp
    max_bytes = min(part.partition_max_bytes or MAX_FETCH_BYTES, MAX_FETCH_BYTES)
    key = (part.fetch_offset, max_bytes, inbound.listener, inbound.api_version)
    body = leader.answers.get(key)
    if body is None:
        records = log.read(part.fetch_offset, max_bytes) if part.fetch_offset < stamp[0] else b""
        body = leader.answers[key] = _response(node, inbound.listener, records=records)
    return body


# Observers' parked Fetches answered per Ready; the others wait one more turn of the
# loop, so the voters' next Fetches (which move the high watermark) are read in between.
OBSERVER_ANSWERS_PER_READY = 16


def complete_parked(node, now_ms: int) -> None:
    """Answer the parked Fetches whose wait is over, as Kafka 4.3.1 does for every
    replica alike: once the log end passed the fetch offset (new data,
    ``KafkaRaftClient.updateLeaderEndOffsetAndTimestamp`` ->
    ``fetchPurgatory.maybeComplete(endOffset)``), on any HWM increase
    (``onUpdateLeaderHighWatermark`` -> ``fetchPurgatory.completeAll``) or at
    MaxWaitMs. Voters are answered first and all at once (their next Fetch moves the
    high watermark); observers at most ``OBSERVER_ANSWERS_PER_READY`` at a time,
    oldest first, so that a hundred observers waking together do not delay commits."""
    leader = node.quorum.state
    parked, due = leader.parked, leader.due_observers
    end, hwm = node.log.end_offset(), node.high_watermark
    if not due and leader.parked_quiet == (end, hwm) \
            and (leader.parked_deadline is None or now_ms < leader.parked_deadline):
        # Nothing due since the last scan: those parked since were parked at this log
        # end and HWM (most Readys of a leader with a hundred observers are these).
        return
    # the observers left over by the last Ready are due already: only the rest is sorted
    keep, voters, observers = [], [], parked[:due]
    is_voter = leader.is_voter_key
    for p in parked[due:] if due else parked:
        if now_ms >= p.deadline_ms or hwm != p.high_watermark or end > p.fetch_offset:
            (voters if is_voter(p.key) else observers).append(p)
        else:
            keep.append(p)
    later = observers[OBSERVER_ANSWERS_PER_READY:]
    leader.parked = later + keep
    leader.due_observers = len(later)
    leader.answers_deferred = bool(later)
    leader.parked_deadline = min((p.deadline_ms for p in keep), default=None)
    leader.parked_quiet = () if later else (end, hwm)
    # by offset: the answers one object serves leave one after another (encoded once)
    for p in voters + sorted(observers[:OBSERVER_ANSWERS_PER_READY], key=_offset):
        node.respond(p.inbound, complete_fetch(node, p.inbound, p.key, p.partition, p.follower_hwm,
                                               0, now_ms, may_park=False))
    if not later:
        # held while due observers remain (the next slices share these answers, read
        # and encoded once), then dropped: at most one entry per parked Fetch
        leader.answers.clear()


def _offset(p) -> int:
    return p.partition.fetch_offset


def refuse_parked(node, old_leader) -> None:
    """Leadership is gone: each parked Fetch gets the error a new Fetch would get."""
    for p in old_leader.parked:
        error = leader_only_error(node, p.partition.current_leader_epoch)
        node.respond(p.inbound, _response(node, p.inbound.listener, error))
    old_leader.parked = []


def handle_fetch_response(node, inflight, body, failure, now_ms: int) -> bool:
    if failure is SendFailure.DISCONNECTED:
        _leader_unreachable(node, inflight, now_ms)
    if failure is not None or body.error_code:
        return False
    if len(body.responses) != 1 or len(body.responses[0].partitions) != 1:
        return False
    part = body.responses[0].partitions[0]
    if follow_current_leader(node, part, body.node_endpoints, now_ms):
        return part.error_code == ErrorCode.NONE
    q = node.quorum
    if part.error_code or q.role is not Role.FOLLOWER or inflight.epoch != q.epoch:
        return not part.error_code
    state = q.state
    if inflight.fetch_offset != node.log.end_offset():
        return True  # our log moved since we asked (truncation, snapshot): ask again
    if not state.leader_resigned:
        # After EndQuorumEpoch any success is an answer the leader sent before it
        # resigned: take its records but keep the shortened election timer.
        state.has_fetched = True
        state.leader_unreachable = False
        state.timeout_deadline_ms = None
        state.fetch_deadline_ms = now_ms + node.config.fetch_timeout_ms
    if part.diverging_epoch.epoch >= 0 and part.diverging_epoch.end_offset >= 0:
        truncate_diverging(node, OffsetAndEpoch(part.diverging_epoch.end_offset, part.diverging_epoch.epoch))
        return True
    if part.snapshot_id.epoch >= 0 and part.snapshot_id.end_offset >= 0:
        snap = OffsetAndEpoch(part.snapshot_id.end_offset, part.snapshot_id.epoch)
        state.snapshot = SnapshotDownload(snap)
        return True
    records = part.records or b""
    if records:
        append_checked(node.log, node.history, bytes(records))
    if part.high_watermark >= 0:
        _follow_high_watermark(node, min(part.high_watermark, node.log.end_offset()))
    return True


def _leader_unreachable(node, inflight, now_ms: int) -> None:
    """A voter's Fetch to its leader found the connection refused or reset: the
    leader's process is most likely gone. Pre-vote after a short random delay rather
    than the rest of the fetch timeout (``roles/follower.py``)."""
    q = node.quorum
    if q.role is not Role.FOLLOWER or inflight.epoch != q.epoch or not node.is_voter():
        return
    state = q.state
    if inflight.destination.node_id != state.leader_id or state.leader_unreachable:
        return
    state.leader_unreachable = True
    state.timeout_deadline_ms = state.fetch_deadline_ms
    state.fetch_deadline_ms = min(state.fetch_deadline_ms, q.early_deadline(now_ms))
    node.stats["leader_unreachable"] += 1


def _follow_high_watermark(node, offset: int) -> None:
    if node.high_watermark is None or offset > node.high_watermark:
        node.high_watermark = offset
    elif offset < node.high_watermark:
        node.stats["hwm_regression_ignored"] += 1


def truncate_diverging(node, diverging: OffsetAndEpoch) -> None:
    """DivergingEpoch: truncate to where our log and the leader's agree (Kafka's
    ``KafkaRaftClient.handleFetchResponse`` -> ``truncateToEndOffset``)."""
    local = node.log.end_offset_for_epoch(diverging.epoch)
    if local.epoch == diverging.epoch:
        offset = min(local.offset, diverging.offset)
    else:
        offset = local.offset
    offset = max(offset, node.log.start_offset())
    if node.high_watermark is not None and offset < node.high_watermark:
        node.stats["truncated_below_hwm"] += 1  # would lose committed data: a bug
    node.log.truncate_to(offset)
    node.history.truncate_to(node.log.end_offset())
    node.stats["truncations"] += 1


def append_checked(log, history, data: bytes) -> int:
    """Append fetched batches that continue our log; returns how many were taken."""
    infos = walk(data, verify=True)
    if not infos or infos[0].base_offset != log.end_offset():
        return 0
    log.append(data)
    history.observe(data)
    return len(infos)
