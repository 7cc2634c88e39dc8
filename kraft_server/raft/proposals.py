"""The leader's proposals: records queued by ``RaftNode.propose``, the backlog that
pushes back (``Backpressure``), and the batches they become (Kafka's
``BatchAccumulator``: a linger, then batches of at most ``MAX_BATCH_BYTES``)."""
from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from wire.records import HEADER_SIZE, build_value_batch

from kraft_server.raft.quorum_config import MAX_BATCH_BYTES
from kraft_server.raft.roles.base import Role

# Batch sizing: at most this per record besides its value (length, attributes, deltas
# and value length as varints, a null key, no headers).
RECORD_OVERHEAD_BYTES = 20


class NotLeader(Exception):
    """``propose`` on a node that is not an active leader."""


class Backpressure(Exception):
    """``propose`` while the leader's uncommitted backlog is full
    (``QuorumConfig.max_backlog_bytes``): try again once more has committed."""


def propose(node, records: list[bytes], queued_ms: int | None) -> tuple[int, int]:
    """Queue ``records`` for the leader's next batch; (first, last) offsets they get."""
    if node.role is not Role.LEADER or node.quorum.state.resign_requested:
        raise NotLeader(f"node {node.local_key.node_id} is {node.role.value} in epoch {node.epoch}")
    if not records:
        raise ValueError("nothing to propose")
    leader, now = node.quorum.state, node.now_ms
    size = sum(map(len, records))
    backlog = leader.backlog_bytes()
    if backlog and backlog + size > node.config.max_backlog_bytes:
        node.stats["proposals_refused"] += 1
        raise Backpressure(f"{backlog} bytes proposed and not yet committed")
    first = node.log.end_offset() + len(leader.pending_records)
    leader.pending_records.extend(records)
    leader.pending_bytes += size
    wake = leader.linger_deadline_ms is None
    if wake:
        start = now if queued_ms is None else min(queued_ms, now)
        leader.linger_deadline_ms = start + node.config.append_linger_ms
    if leader.pending_bytes >= MAX_BATCH_BYTES:
        # a full batch: appended by the next poll (not here, between Readys, where a
        # Fetch answered next would carry it and wait for its fsync)
        leader.linger_deadline_ms = now
        wake = True
    node.propose_needs_cycle = wake
    return first, first + len(records) - 1


def append_room(node) -> int:
    """Bytes ``propose`` accepts now (at least one record always fits an empty backlog)."""
    if node.role is not Role.LEADER:
        return 0
    backlog = node.quorum.state.backlog_bytes()
    limit = node.config.max_backlog_bytes
    return max(0, limit - backlog) if backlog else limit


def drain(node) -> None:
    """Append what lingers, as batches of at most MAX_BATCH_BYTES of records (a larger
    single record gets a batch of its own)."""
    leader = node.quorum.state
    records = leader.pending_records
    if not records:
        return
    pending_bytes = leader.pending_bytes
    leader.pending_records, leader.pending_bytes, leader.linger_deadline_ms = [], 0, None
    room = MAX_BATCH_BYTES - HEADER_SIZE
    if pending_bytes + RECORD_OVERHEAD_BYTES * len(records) <= room:
        _append(node, records)  # one batch (the common case: no per-record work)
        return
    # cut[k]: the batch size of records[:k] less the header; each batch takes the
    # longest run that fits, and at least one record
    sizes = list(accumulate(map(len, records), initial=0))
    cut = sizes.__getitem__
    count, start = len(records), 0
    while start < count:
        limit = cut(start) + RECORD_OVERHEAD_BYTES * start + room
        end = bisect_right(range(count + 1), limit, start + 1, count + 1,
                           key=lambda k: cut(k) + RECORD_OVERHEAD_BYTES * k) - 1
        end = max(end, start + 1)
        _append(node, records[start:end] if start or end < count else records)
        start = end


def _append(node, records: list) -> None:
    leader = node.quorum.state
    data = build_value_batch(node.log.end_offset(), leader.epoch, node.now_ms, records)
    node.leader_append(data)
    leader.appended(node.log.end_offset() - 1, len(data))
