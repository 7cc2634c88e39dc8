"""Snapshot and segment cleaning after snapshots (Kafka's ``KafkaRaftLog.maybeClean``,
run by ``KafkaRaftClient`` every 60 s).

Kafka never moves the log start when it writes a snapshot. It keeps every
snapshot, and the log from the oldest one on, until retention says otherwise:

* size (``metadata.max.retention.bytes``, < 0 disables): while the log's bytes plus
  the kept snapshots' bytes exceed it, the oldest snapshot goes;
* age (``metadata.max.retention.ms``, < 0 disables): while the oldest snapshot's
  LastContainedLogTimestamp is older than ``now - retention``, it goes.

"Goes" means: the log start moves to the *next* snapshot's end offset, whole
segments below it are deleted and snapshots below it are removed
(``deleteBeforeSnapshot``). Each rule walks from the oldest snapshot and stops at
the first it keeps; the newest snapshot always stays.
"""
from __future__ import annotations

import logging

from wire.records import HEADER_SIZE, BatchError, ControlRecordType, control_records, walk
from wire.records.header import next_batch_size

log = logging.getLogger(__name__)

CLEAN_INTERVAL_MS = 60_000  # KafkaRaftClient's RaftMetadataLogCleanerManager period


def snapshot_timestamp(raft_log, snapshot_id) -> int | None:
    head = raft_log.read_snapshot(snapshot_id, 0, HEADER_SIZE)
    try:
        size = next_batch_size(head, 0) or 0
        data = raft_log.read_snapshot(snapshot_id, 0, size)  # the header batch
        for info in walk(data):
            for kind, msg in control_records(data, info):
                if kind is ControlRecordType.SNAPSHOT_HEADER:
                    return msg.last_contained_log_timestamp
    except (BatchError, ValueError):  # ValueError: wire's DecodeError too
        return None
    return None


def _clean(raft_log, predicate) -> bool:
    ids = [s for s in raft_log.snapshot_ids() if s.offset >= raft_log.start_offset()]
    cleaned = False
    for oldest, following in zip(ids, ids[1:]):
        reason = predicate(oldest)
        if reason is None:
            break
        before = raft_log.start_offset()
        raft_log.delete_before_snapshot(following)
        if raft_log.start_offset() == before:
            break
        log.info("Deleted snapshot %s and the log before %s because %s", oldest, following, reason)
        cleaned = True
    return cleaned


def maybe_clean(raft_log, retention_bytes: int, retention_ms: int, now_ms: int) -> bool:
    cleaned = False
    if retention_bytes >= 0:
        sizes = {s: raft_log.snapshot_size(s) for s in raft_log.snapshot_ids()}
        total = [sum(sizes.values())]

        def too_big(snapshot_id):
            size = raft_log.size_bytes() + total[0]
            if size > retention_bytes:
                total[0] -= sizes.get(snapshot_id, 0)
                return f"the log and snapshots ({size} bytes) exceed {retention_bytes}"
            return None
        cleaned |= _clean(raft_log, too_big)
    if retention_ms >= 0:
        def too_old(snapshot_id):
            ts = snapshot_timestamp(raft_log, snapshot_id)
            if ts is not None and now_ms - ts > retention_ms:
                return f"its timestamp {ts} is older than {retention_ms} ms"
            return None
        cleaned |= _clean(raft_log, too_old)
    return cleaned
