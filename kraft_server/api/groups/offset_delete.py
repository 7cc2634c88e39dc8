"""OffsetDelete (key 47), v0 (KIP-496): forget a group's committed offsets of some
partitions. As Kafka's classic groups: an unknown group is GROUP_ID_NOT_FOUND; a group
with members may lose offsets only of topics its members are not subscribed to (else
GROUP_SUBSCRIBED_TO_TOPIC per partition; a subscription we cannot read counts as
subscribed, as Kafka's ``isSubscribedToTopic`` does for the "consumer" protocol)."""
from __future__ import annotations

import logging
import struct

from wire.errors import ErrorCode
from wire.messages import OffsetDeleteResponse
from wire.messages.offset_delete_response import OffsetDeleteResponsePartition, OffsetDeleteResponseTopic

from kraft_server.groups.group import GroupState

log = logging.getLogger(__name__)


def subscribed_topics(metadata: bytes) -> set[str] | None:
    """The topics of a ``ConsumerProtocolSubscription`` (version, then topics: the same
    leading fields in every version); None if it cannot be read."""
    try:
        pos = 2
        (count,) = struct.unpack_from(">i", metadata, pos)
        pos += 4
        topics = set()
        for _ in range(count):
            (size,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            if size < 0 or pos + size > len(metadata):
                return None
            topics.add(metadata[pos:pos + size].decode())
            pos += size
        return topics
    except (struct.error, UnicodeDecodeError):
        return None


def _subscribed(group, topic: str) -> bool:
    if group.state is GroupState.EMPTY or not group.members:
        return False
    if group.protocol_type != "consumer":
        return False
    for member in group.members.values():
        protocol = group.protocol_name or (member.protocols[0][0] if member.protocols else "")
        topics = subscribed_topics(member.metadata(protocol))
        if topics is None or topic in topics:
            return True
    return False


def offset_delete(service, body) -> OffsetDeleteResponse:
    group = service.coordinator.group(body.group_id)
    if group is None:
        return OffsetDeleteResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND)
    results, doomed = [], []
    for t in body.topics:
        blocked = _subscribed(group, t.name)
        rows = []
        for p in t.partitions:
            rows.append([p.partition_index, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC if blocked else 0])
            if not blocked and (t.name, p.partition_index) in service.store.get(body.group_id):
                doomed.append((t.name, p.partition_index))
        results.append((t.name, rows))
    if doomed:
        try:
            service.store.delete(body.group_id, doomed)
        except OSError as exc:
            log.error("group %s: cannot delete offsets: %s", body.group_id, exc)
            return OffsetDeleteResponse(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    return OffsetDeleteResponse(topics=[
        OffsetDeleteResponseTopic(name=name, partitions=[
            OffsetDeleteResponsePartition(partition_index=i, error_code=e) for i, e in rows])
        for name, rows in results])


def handle_offset_delete_request(call, service) -> None:
    call.respond(offset_delete(service, call.body))
    service.touched()
