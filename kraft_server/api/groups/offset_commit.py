"""OffsetCommit (key 8), v2-10.

The group check comes first (Kafka's ``validateOffsetCommit``: generation, member,
REBALANCE_IN_PROGRESS while CompletingRebalance) and its error goes to every partition.
Then each partition: only ``__cluster_metadata``/0 exists here, any other topic or
partition gets UNKNOWN_TOPIC_OR_PARTITION (an unknown v10 topic id UNKNOWN_TOPIC_ID);
metadata longer than ``offset.metadata.max.bytes`` gets OFFSET_METADATA_TOO_LARGE. The
accepted partitions are written as one frame and fsync'd before the answer leaves; if the
write fails they get COORDINATOR_NOT_AVAILABLE (retriable, and nothing was acknowledged).
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import OffsetCommitResponse
from wire.messages.offset_commit_response import (
    OffsetCommitResponsePartition, OffsetCommitResponseTopic)

from kraft_server.groups import topics
from kraft_server.groups.offset_store import CommittedOffset

log = logging.getLogger(__name__)


def _topic_key(version: int, t) -> tuple[str | None, int]:
    """(name or None when unknown, the error an unknown topic gets)."""
    if version >= 10:
        return topics.topic_name(t.topic_id), ErrorCode.UNKNOWN_TOPIC_ID
    return t.name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def offset_commit(service, version: int, body) -> OffsetCommitResponse:
    now = service.now()
    group_error = service.coordinator.validate_commit(
        body.group_id, body.member_id, body.group_instance_id, body.generation_id_or_member_epoch,
        now, version)
    log.debug("group %s: OffsetCommit v%d from %r, generation %d: %s", body.group_id, version,
              body.member_id, body.generation_id_or_member_epoch, ErrorCode(group_error).name)
    max_bytes = service.settings.offset_metadata_max_bytes
    results, accepted = [], {}
    for t in body.topics:
        name, unknown = _topic_key(version, t)
        rows = []
        for p in t.partitions:
            metadata = p.committed_metadata if p.committed_metadata is not None else ""
            if group_error:
                error = group_error
            elif name is None or not topics.served(name, p.partition_index):
                error = unknown if name is None else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif len(metadata.encode()) > max_bytes:
                error = ErrorCode.OFFSET_METADATA_TOO_LARGE
            else:
                error = ErrorCode.NONE
                accepted[(name, p.partition_index)] = CommittedOffset(
                    p.committed_offset, p.committed_leader_epoch if version >= 6 else -1,
                    metadata, now)
            rows.append([p.partition_index, error, name])
        results.append((t, rows))
    if accepted:
        try:
            service.store.commit(body.group_id, accepted)
        except OSError as exc:
            log.error("group %s: cannot write committed offsets: %s", body.group_id, exc)
            for _, rows in results:
                for row in rows:
                    if row[1] == ErrorCode.NONE:
                        row[1] = ErrorCode.COORDINATOR_NOT_AVAILABLE
    return OffsetCommitResponse(topics=[
        OffsetCommitResponseTopic(
            name=t.name if version < 10 else "", topic_id=t.topic_id if version >= 10 else topics.ZERO_UUID,
            partitions=[OffsetCommitResponsePartition(partition_index=i, error_code=e)
                        for i, e, _ in rows])
        for t, rows in results])


def handle_offset_commit_request(call, service) -> None:
    call.respond(offset_commit(service, call.api_version, call.body))
    service.touched()
