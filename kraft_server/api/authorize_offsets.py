"""The topic checks of OffsetCommit, OffsetFetch and OffsetDelete on a client listener,
made after the group's (``authorize_groups.py``) as a Kafka broker makes them
(``KafkaApis.handleOffsetCommitRequest``, ``fetchOffsetsForGroup``,
``fetchAllOffsetsForGroup``, ``handleOffsetDeleteRequest``):

- OffsetCommit and OffsetDelete need READ on each TOPIC. A refused topic's partitions
  are answered TOPIC_AUTHORIZATION_FAILED (first) and the group never sees them; when
  no topic is left, OffsetCommit is answered without asking the group at all (and
  OffsetDelete asks it anyway: an error of the group's is then the whole answer).
- OffsetFetch needs DESCRIBE on each TOPIC. Named topics that are refused are taken out
  of the group's request and added after its answer, each partition with offset -1 and
  TOPIC_AUTHORIZATION_FAILED (not when the group answered an error of its own); a fetch
  of all the group's offsets leaves the refused topics out.

v10 names topics by id. An id we cannot name is answered UNKNOWN_TOPIC_ID before any
check: by the handler for OffsetCommit, here (with the refused topics) for OffsetFetch,
as Kafka 4.3.1 does.
"""
from __future__ import annotations

from kraft_server.security import acls as A
from wire.errors import ErrorCode
from wire.messages import (
    OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest)
from wire.messages import offset_fetch_response as F
from wire.messages.offset_commit_response import OffsetCommitResponsePartition, OffsetCommitResponseTopic
from wire.messages.offset_delete_response import OffsetDeleteResponsePartition, OffsetDeleteResponseTopic

from .authorize_items import joiner, narrowed_body
from .call import CallWrapper, Narrowed
from kraft_server.groups import topics as served

DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
OFFSET_APIS = frozenset({OffsetCommitRequest.API_KEY, OffsetFetchRequest.API_KEY, OffsetDeleteRequest.API_KEY})


def _name(version: int, t) -> str | None:
    return served.topic_name(t.topic_id) if version >= 10 else t.name


def commit_refusal(version: int, topics, code: int) -> list[OffsetCommitResponseTopic]:
    """OffsetCommit's answer for ``topics``: every partition ``code``."""
    return [OffsetCommitResponseTopic(
        name=t.name if version < 10 else "", topic_id=t.topic_id if version >= 10 else served.ZERO_UUID,
        partitions=[OffsetCommitResponsePartition(partition_index=p.partition_index, error_code=code)
                    for p in t.partitions]) for t in topics]


def _delete_refusal(topics) -> list[OffsetDeleteResponseTopic]:
    return [OffsetDeleteResponseTopic(name=t.name, partitions=[
        OffsetDeleteResponsePartition(partition_index=p.partition_index, error_code=DENIED)
        for p in t.partitions]) for t in topics]


def _split(version: int, items, allowed):
    """(kept, refused) topics; a topic we cannot name is kept."""
    refused = [t for t in items if _name(version, t) is not None and not allowed(_name(version, t))]
    return [t for t in items if not any(t is x for x in refused)], refused


def admit_offset_topics(call, allowed):
    """``allowed(operation, resource type, name) -> bool``; the call to go on with, or
    None when answered here."""
    version, body = call.api_version, call.body
    if call.api_key == OffsetFetchRequest.API_KEY:
        return _FetchChecked(call, lambda name: allowed(A.DESCRIBE, A.TOPIC, name))
    kept, refused = _split(version, body.topics, lambda name: allowed(A.READ, A.TOPIC, name))
    if not refused:
        return call
    if call.api_key == OffsetCommitRequest.API_KEY:
        answer = OffsetCommitResponse(topics=commit_refusal(version, refused, DENIED))
        if not kept:  # the group is not asked at all
            call.respond(answer)
            return None
        return Narrowed(call, narrowed_body(body, "topics", kept), joiner("topics", answer))
    join = joiner("topics", OffsetDeleteResponse(topics=_delete_refusal(refused)))
    # a group error (GROUP_ID_NOT_FOUND, ...) replaces the whole answer, as Kafka's Builder.merge
    return Narrowed(call, narrowed_body(body, "topics", kept),
                    lambda answer: answer if answer.error_code else join(answer))


def fetch_refusal(version: int, t, code: int = DENIED):
    """OffsetFetch's answer for the request topic ``t``: every partition ``code``, offset -1."""
    partitions = [(F.OffsetFetchResponsePartition if version < 8 else F.OffsetFetchResponsePartitions)(
        partition_index=i, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=code)
        for i in t.partition_indexes]
    if version < 8:
        return F.OffsetFetchResponseTopic(name=t.name, partitions=partitions)
    return F.OffsetFetchResponseTopics(name=t.name if version < 10 else "",
                                       topic_id=t.topic_id if version >= 10 else served.ZERO_UUID,
                                       partitions=partitions)


class _FetchChecked(CallWrapper):
    """OffsetFetch with the refused named topics taken out of each group's request, and
    its answer completed (named topics) or filtered (all topics), group by group."""

    def __init__(self, call, allowed) -> None:
        super().__init__(call)
        self.allowed = allowed
        version, body = call.api_version, call.body
        groups = [body] if version < 8 else list(body.groups)
        self.refused: list = []  # per group: [(topic, error)], or None for "all topics"
        narrowed = []
        for g in groups:
            if g.topics is None:
                self.refused.append(None)
                narrowed.append(g)
                continue
            refused = [(t, DENIED if _name(version, t) else ErrorCode.UNKNOWN_TOPIC_ID) for t in g.topics
                       if _name(version, t) is None or not allowed(_name(version, t))]
            self.refused.append(refused)
            kept = [t for t in g.topics if not any(t is x for x, _ in refused)]
            narrowed.append(narrowed_body(g, "topics", kept) if refused else g)
        self.body = narrowed[0] if version < 8 else narrowed_body(body, "groups", narrowed)

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        version = self.call.api_version
        answers = [body] if version < 8 else list(body.groups)
        for answer, refused in zip(answers, self.refused):
            if answer.error_code:
                continue
            if refused is None:
                answer.topics = [t for t in answer.topics
                                 if _name(version, t) is None or self.allowed(_name(version, t))]
            else:
                answer.topics = list(answer.topics) + [fetch_refusal(version, t, code) for t, code in refused]
        self.call.respond(body, api_version)
