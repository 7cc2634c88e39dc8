"""Fetch (key 1), v4-18, from consumers (replica id -1): ``__cluster_metadata``-0 up
to the high watermark, and its companions (``catalog.py``) by the same rules. The Raft fetch between quorum members stays with the core
(``api/dispatch.py`` routes by replica id).

Per partition, Kafka's rules:

- unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION, or UNKNOWN_TOPIC_ID for
  a topic id (v13+ address topics by id; the answer echoes the id, name empty);
- ``CurrentLeaderEpoch`` (v9+) older than ours FENCED_LEADER_EPOCH, newer
  UNKNOWN_LEADER_EPOCH, -1 unchecked;
- a fetch offset below the log start or above the log end: OFFSET_OUT_OF_RANGE;
  between the high watermark and the log end: no records, no error. Above the log
  end of a node that is not the Raft leader: OFFSET_NOT_AVAILABLE (retriable)
  instead, since a lagging follower cannot tell an offset the leader committed
  from one that never existed, and a consumer that moved over from another node
  must not be reset (a leader holds every committed offset, so its answer is sure);
- no high watermark known yet (a restarted node before its first commit):
  OFFSET_NOT_AVAILABLE (retriable);
- otherwise whole batches from the one holding the fetch offset, below the high
  watermark, within ``PartitionMaxBytes`` and the request's ``MaxBytes`` but at
  least one batch (KIP-74). Control batches are served as they are: consumers skip
  them and move past them. ``LastStableOffset`` = high watermark (no transactions
  hide anything); ``AbortedTransactions`` empty under read_committed.

The answer waits (``long_poll.py``) while it holds fewer than ``MinBytes`` bytes and
has no error, up to ``MaxWaitMs``: a consumer parked at the high watermark gets the
next committed batch as soon as it commits. Records are views of the segment
files (``log/log_reader.py``); see docs/metadata-topic.md for where the encoder copies them.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import FetchResponse
from wire.messages.fetch_response import FetchableTopicResponse, PartitionData

from .catalog import NO_TOPICS
from .fetch_sessions import FetchSessionCache
from .long_poll import LongPoll
from .partition import PARTITION

MAX_WAIT_CAP_MS = 60_000  # a parked fetch never waits longer than this


def replica_id(version: int, body) -> int:
    return body.replica_state.replica_id if version >= 15 else body.replica_id


def _error(index: int, code: int) -> PartitionData:
    return PartitionData(partition_index=index, error_code=code, high_watermark=-1,
                         last_stable_offset=-1, log_start_offset=-1, records=b"")


def _answer(topics, version: int, key, wanted, budget: int, first: bool,
            read_committed: bool) -> PartitionData:
    topic, index = key
    partition = topics.with_id(topic) if version >= 13 else topics.named(topic)
    if partition is None:
        code = ErrorCode.UNKNOWN_TOPIC_ID if version >= 13 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return _error(index, code)
    if index != PARTITION:
        return _error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    code = partition.check_epoch(wanted.current_leader_epoch)
    if code:
        return _error(index, code)
    hwm = partition.high_watermark()
    if hwm is None:
        return _error(index, ErrorCode.OFFSET_NOT_AVAILABLE)
    start = partition.start_offset()
    offset = wanted.fetch_offset
    if offset < start:
        return _error(index, ErrorCode.OFFSET_OUT_OF_RANGE)
    if offset > partition.end_offset():
        return _error(index, ErrorCode.OFFSET_OUT_OF_RANGE if partition.is_leader()
                      else ErrorCode.OFFSET_NOT_AVAILABLE)
    limit = min(wanted.max_bytes, budget)
    records = b""
    if offset < hwm and (limit > 0 or first):
        records = partition.reader.read(offset, limit if limit > 0 else 1, hwm)
    return PartitionData(partition_index=index, error_code=0, high_watermark=hwm,
                         last_stable_offset=hwm, log_start_offset=start,
                         aborted_transactions=[] if read_committed else None, records=records)


class ConsumerFetch:
    """Answers consumer fetches for ``topics`` (``catalog.Topics``); owns the session
    cache and the parked fetches."""

    def __init__(self, topics, *, sessions: FetchSessionCache | None = None,
                 long_poll: LongPoll | None = None):
        self.topics = topics or NO_TOPICS
        self.sessions = FetchSessionCache() if sessions is None else sessions
        self.long_poll = LongPoll() if long_poll is None else long_poll
        self._last_hwm = None

    def progress(self) -> None:
        """After each Ready cycle: wake parked fetches if the high watermark (or the log
        start, which changes the snapshot topic) moved."""
        main = self.topics.main
        if main is None:
            return
        hwm = (main.high_watermark(), main.start_offset())
        if hwm != self._last_hwm:
            self._last_hwm = hwm
            if len(self.long_poll):
                self.long_poll.progress()

    def handle(self, call) -> None:
        version, body = call.api_version, call.body
        context = self.sessions.context(version, body)
        if context.error:
            call.respond(FetchResponse(error_code=context.error, session_id=0, responses=[]))
            return

        def attempt(final: bool) -> bool:
            if call.done:
                return True  # the connection went away
            response, size, errors, included = self.build(version, body, context)
            if final or errors or size >= body.min_bytes or body.max_wait_ms <= 0:
                if context.session_id:  # remember what each partition was told
                    for wanted, data in included:
                        wanted.sent = _sent(data)
                call.respond(response)
                return True
            return False

        if not attempt(False):
            self.long_poll.park(attempt, min(body.max_wait_ms, MAX_WAIT_CAP_MS))

    def build(self, version: int, body, context):
        """(response, record bytes, any partition error, [(SessionPartition, PartitionData)])."""
        budget = body.max_bytes
        read_committed = body.isolation_level == 1
        topics: dict = {}
        included = []
        size, errors, first = 0, False, True
        for key, wanted in context.partitions:
            data = _answer(self.topics, version, key, wanted, budget - size, first, read_committed)
            n = len(data.records) if data.records is not None else 0
            if context.incremental and not n and not data.error_code \
                    and not wanted.changed(_sent(data)):
                continue
            size += n
            first = first and not n
            errors = errors or bool(data.error_code)
            topics.setdefault(key[0], []).append(data)
            included.append((wanted, data))
        if version >= 13:
            responses = [FetchableTopicResponse(topic="", topic_id=topic_id, partitions=parts)
                         for topic_id, parts in topics.items()]
        else:
            responses = [FetchableTopicResponse(topic=name, partitions=parts)
                         for name, parts in topics.items()]
        return (FetchResponse(error_code=0, session_id=context.session_id, responses=responses),
                size, errors, included)


def _sent(data: PartitionData) -> tuple:
    return (data.high_watermark, data.log_start_offset, data.error_code)

