"""The ``__cluster_metadata`` consumer handlers (kraft_server/api/topic) over a real
on-disk log and a stand-in core: error paths, offsets, sessions, long poll. Every
answer is also encoded at the request's version (a field a version cannot carry
would otherwise only show up on the wire)."""
from __future__ import annotations

import uuid

import pytest

from kraft_server.api.metadata import metadata_response
from kraft_server.api.topic import TOPIC, TOPIC_ID, MetadataPartition, Topics
from kraft_server.api.topic.consumer_fetch import ConsumerFetch
from kraft_server.api.topic.describe_topic_partitions import describe_topic_partitions_response
from kraft_server.api.topic.fetch_sessions import FetchSessionCache
from kraft_server.api.topic.list_offsets import list_offsets_response
from kraft_server.api.topic.long_poll import LongPoll
from kraft_server.api.topic.offset_for_leader_epoch import offset_for_leader_epoch_response
from kraft_server.api.topic.produce import handle_produce_request, produce_response
from kraft_server.log.file_log import FileReplicatedLog
from wire.errors import ErrorCode as E
from wire.headers import encode_response
from wire.messages import (
    DescribeTopicPartitionsRequest, FetchRequest, ListOffsetsRequest,
    MetadataRequest, OffsetForLeaderEpochRequest, ProduceRequest)
from wire.messages.describe_topic_partitions_request import TopicRequest
from wire.messages.fetch_request import FetchPartition, FetchTopic, ForgottenTopic, ReplicaState
from wire.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from wire.messages.metadata_request import MetadataRequestTopic
from wire.messages.offset_for_leader_epoch_request import OffsetForLeaderPartition, OffsetForLeaderTopic
from wire.messages.produce_request import PartitionProduceData, TopicProduceData
from wire.records import data_batch, iter_headers, read_header

T0 = 1_700_000_000_000


class Core:
    def __init__(self, epoch=3, hwm=None):
        self.epoch, self.high_watermark, self.leader_id = epoch, hwm, 1


class Call:
    forwarded = token_authenticated = False

    def __init__(self, key, version, body, listener="CLIENT"):
        self.api_key, self.api_version, self.body, self.listener = key, version, body, listener
        self.response, self.closed, self.done = None, None, False

    def respond(self, body):
        assert not self.done
        encode_response(self.api_key, self.api_version, 7, body)  # encodable at this version
        self.response, self.done = body, True

    def close_connection(self, reason):
        self.closed, self.done = reason, True


@pytest.fixture
def log(tmp_path):
    """Epoch 1: offsets 0-9 (ten batches of one record, 1 s apart); epoch 3: 10-19 (two
    batches of five); 1 KiB values."""
    with FileReplicatedLog(tmp_path) as log:
        for i in range(10):
            log.append(data_batch(i, 1, T0 + 1000 * i, [bytes([i]) * 1024]))
        log.append(data_batch(10, 3, T0 + 20_000, [b"x" * 1024] * 5))
        log.append(data_batch(15, 3, T0 + 21_000, [b"y" * 1024] * 5))
        log.flush()
        yield log


@pytest.fixture
def part(log):
    return MetadataPartition(Core(epoch=3, hwm=15), log, node_id=1)


def offsets_of(records) -> list[tuple[int, int]]:
    return [(h.base_offset, h.next_offset) for _, h in iter_headers(bytes(records))]


# -- Metadata / DescribeTopicPartitions ---------------------------------------------------

@pytest.mark.parametrize("version", range(0, 14))
def test_metadata_lists_the_topic_at_every_version(part, version):
    body = MetadataRequest(topics=None if version else [])
    r = metadata_response(version, body, node_id=1, host="h", port=9, cluster_id="c", topics=Topics([part]))
    encode_response(3, version, 1, r)
    (t,) = r.topics
    assert (t.name, t.error_code, t.is_internal, t.topic_id) == (TOPIC, 0, False, TOPIC_ID)
    (p,) = t.partitions
    assert (p.partition_index, p.leader_id, p.leader_epoch, p.replica_nodes, p.isr_nodes) == (0, 1, 3, [1], [1])


def test_metadata_unknown_names_and_ids(part):
    body = MetadataRequest(topics=[MetadataRequestTopic(name="other"),
                                   MetadataRequestTopic(name=None, topic_id=TOPIC_ID),
                                   MetadataRequestTopic(name=None, topic_id=uuid.UUID(int=9))])
    r = metadata_response(12, body, node_id=1, host="h", port=9, cluster_id="c", topics=Topics([part]))
    assert [(t.name, t.error_code) for t in r.topics] == [
        ("other", E.UNKNOWN_TOPIC_OR_PARTITION), (TOPIC, 0), (None, E.UNKNOWN_TOPIC_ID)]


def test_describe_topic_partitions(part):
    r = describe_topic_partitions_response(
        DescribeTopicPartitionsRequest(topics=[TopicRequest(name=TOPIC), TopicRequest(name="x")]), Topics([part]))
    encode_response(75, 0, 1, r)
    assert [(t.name, t.error_code, t.is_internal) for t in r.topics] == [
        (TOPIC, 0, False), ("x", E.UNKNOWN_TOPIC_OR_PARTITION, False)]
    assert r.topics[0].partitions[0].leader_epoch == 3
    assert [t.name for t in describe_topic_partitions_response(
        DescribeTopicPartitionsRequest(topics=[]), Topics([part])).topics] == [TOPIC]


# -- ListOffsets ---------------------------------------------------------------------------

def list_offsets(part, version, *specs, topic=TOPIC, partition=0, epoch=-1):
    body = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=topic, partitions=[
        ListOffsetsPartition(partition_index=partition, current_leader_epoch=epoch, timestamp=ts)
        for ts in specs])])
    r = list_offsets_response(version, body, Topics([part]))
    encode_response(2, version, 1, r)
    return [(p.error_code, p.offset, p.timestamp, p.leader_epoch) for p in r.topics[0].partitions]


def test_list_offsets_earliest_latest_and_timestamps(part):
    assert list_offsets(part, 11, -2, -1, -4, -5) == [
        (0, 0, -1, 1), (0, 15, -1, 3), (0, 0, -1, 1), (0, -1, -1, -1)]
    # first record with timestamp >= ts; records at or past the high watermark do not count
    assert list_offsets(part, 11, T0 + 2500, T0, T0 + 20_000, T0 + 21_000) == [
        (0, 3, T0 + 3000, 1), (0, 0, T0, 1), (0, 10, T0 + 20_000, 3), (0, -1, -1, -1)]
    assert list_offsets(part, 11, -3) == [(0, 10, T0 + 20_000, 3)]  # max timestamp below the HWM
    assert list_offsets(part, 3, -1) == [(0, 15, -1, -1)]  # no LeaderEpoch before v4


def test_list_offsets_errors(part):
    assert list_offsets(part, 11, -1, topic="nope")[0][0] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert list_offsets(part, 11, -1, partition=1)[0][0] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert list_offsets(part, 11, -1, epoch=2)[0][0] == E.FENCED_LEADER_EPOCH
    assert list_offsets(part, 11, -1, epoch=4)[0][0] == E.UNKNOWN_LEADER_EPOCH
    assert list_offsets(part, 11, -1, epoch=3)[0][0] == 0
    part.core.high_watermark = None  # a new leader, this epoch not committed yet
    assert list_offsets(part, 11, -1, -2, T0) == [
        (E.OFFSET_NOT_AVAILABLE, -1, -1, -1), (0, 0, -1, 1), (E.OFFSET_NOT_AVAILABLE, -1, -1, -1)]
    assert list_offsets(part, 4, -1)[0][0] == E.LEADER_NOT_AVAILABLE


def test_high_watermark_is_capped_by_the_flushed_offset_and_never_moves_back(log):
    core = Core(hwm=15)
    part = MetadataPartition(core, log, 1)
    assert part.high_watermark() == 15
    core.high_watermark = 99
    assert part.high_watermark() == 20  # only what this node has on disk
    core.high_watermark = None
    assert part.high_watermark() == 20


# -- OffsetForLeaderEpoch --------------------------------------------------------------------

@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch(part, version):
    body = OffsetForLeaderEpochRequest(replica_id=-1, topics=[
        OffsetForLeaderTopic(topic=TOPIC, partitions=[
            OffsetForLeaderPartition(partition=0, current_leader_epoch=3, leader_epoch=1),
            OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=2),
            OffsetForLeaderPartition(partition=0, current_leader_epoch=3, leader_epoch=3),
            OffsetForLeaderPartition(partition=0, current_leader_epoch=2, leader_epoch=1),
            OffsetForLeaderPartition(partition=0, current_leader_epoch=5, leader_epoch=1),
            OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0),
            OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=7)]),
        OffsetForLeaderTopic(topic="x", partitions=[OffsetForLeaderPartition(partition=0, leader_epoch=1)])])
    r = offset_for_leader_epoch_response(body, Topics([part]))
    encode_response(23, version, 1, r)
    assert [(p.error_code, p.leader_epoch, p.end_offset) for p in r.topics[0].partitions] == [
        (0, 1, 10), (0, 1, 10), (0, 3, 20), (E.FENCED_LEADER_EPOCH, -1, -1),
        (E.UNKNOWN_LEADER_EPOCH, -1, -1), (0, 0, 0), (0, -1, -1)]
    assert r.topics[1].partitions[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION


# -- Fetch -----------------------------------------------------------------------------------

def fetch_body(version, offset=0, *, max_bytes=1 << 20, pmax=1 << 20, epoch=-1, topic=TOPIC, partition=0,
               session=(0, -1), min_bytes=1, wait=0, forgotten=(), topics=None):
    if topics is None:
        ft = FetchTopic(topic=topic if version < 13 else "",
                        topic_id=(TOPIC_ID if topic == TOPIC else uuid.UUID(int=7)) if version >= 13 else None,
                        partitions=[FetchPartition(partition=partition, current_leader_epoch=epoch,
                                                   fetch_offset=offset, partition_max_bytes=pmax)])
        if version < 13:
            ft.topic_id = uuid.UUID(int=0)
        topics = [ft]
    return FetchRequest(replica_id=-1, replica_state=ReplicaState(replica_id=-1), max_wait_ms=wait,
                        min_bytes=min_bytes, max_bytes=max_bytes, session_id=session[0],
                        session_epoch=session[1], topics=topics,
                        forgotten_topics_data=list(forgotten))


def fetch(fetcher, version, **kw):
    call = Call(1, version, fetch_body(version, **kw))
    fetcher.handle(call)
    return call


def only(call):
    (t,) = call.response.responses
    (p,) = t.partitions
    return p


@pytest.mark.parametrize("version", [4, 11, 12, 13, 17, 18])
def test_fetch_reads_whole_batches_below_the_high_watermark(part, version):
    f = ConsumerFetch(Topics([part]))
    p = only(fetch(f, version, offset=0))
    assert p.error_code == 0 and p.high_watermark == 15 and p.last_stable_offset == 15
    assert offsets_of(p.records) == [(i, i + 1) for i in range(10)] + [(10, 15)]
    # from the middle of a batch: that whole batch
    assert offsets_of(only(fetch(f, version, offset=12)).records) == [(10, 15)]
    # at the high watermark (and up to the log end): nothing, no error
    for offset in (15, 17, 20):
        p = only(fetch(f, version, offset=offset))
        assert (p.error_code, bytes(p.records)) == (0, b"")


def test_fetch_byte_limits_keep_at_least_one_batch(part):
    f = ConsumerFetch(Topics([part]))
    one = read_header(bytes(only(fetch(f, 12, offset=0)).records)).size
    assert offsets_of(only(fetch(f, 12, offset=0, pmax=2 * one + 1)).records) == [(0, 1), (1, 2)]
    assert offsets_of(only(fetch(f, 12, offset=0, max_bytes=10)).records) == [(0, 1)]  # KIP-74
    assert offsets_of(only(fetch(f, 12, offset=10, pmax=1)).records) == [(10, 15)]


def test_fetch_records_are_views_of_the_segment_file(part):
    records = only(fetch(ConsumerFetch(Topics([part])), 12, offset=0)).records
    assert isinstance(records, memoryview) and records.readonly


def test_fetch_errors(part):
    f = ConsumerFetch(Topics([part]))
    assert only(fetch(f, 12, offset=21)).error_code == E.OFFSET_OUT_OF_RANGE
    assert only(fetch(f, 12, offset=-1)).error_code == E.OFFSET_OUT_OF_RANGE
    part.core.leader_id = 2  # a follower cannot tell whether the leader committed offset 21
    assert only(fetch(f, 12, offset=21)).error_code == E.OFFSET_NOT_AVAILABLE
    assert only(fetch(f, 12, offset=-1)).error_code == E.OFFSET_OUT_OF_RANGE
    part.core.leader_id = 1
    assert only(fetch(f, 12, epoch=2)).error_code == E.FENCED_LEADER_EPOCH
    assert only(fetch(f, 12, epoch=4)).error_code == E.UNKNOWN_LEADER_EPOCH
    assert only(fetch(f, 12, topic="other")).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert only(fetch(f, 12, partition=3)).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    call = fetch(f, 13, topic="other")
    assert call.response.responses[0].topic_id == uuid.UUID(int=7)
    assert only(call).error_code == E.UNKNOWN_TOPIC_ID
    part.core.high_watermark, part._hwm = None, None
    assert only(fetch(f, 12)).error_code == E.OFFSET_NOT_AVAILABLE


def test_fetch_v13_answers_by_topic_id(part):
    (t,) = fetch(ConsumerFetch(Topics([part])), 13).response.responses
    assert (t.topic, t.topic_id) == ("", TOPIC_ID)


class Timers:
    def __init__(self):
        self.pending = []

    def __call__(self, delay, fn, *args):
        timer = Timer(delay, fn, args)
        self.pending.append(timer)
        return timer

    def fire(self):
        for t in [t for t in self.pending if not t.cancelled]:
            t.fn(*t.args)


class Timer:
    def __init__(self, delay, fn, args):
        self.delay, self.fn, self.args, self.cancelled = delay, fn, args, False

    def cancel(self):
        self.cancelled = True


def test_long_poll_wakes_when_the_high_watermark_moves(part):
    timers = Timers()
    f = ConsumerFetch(Topics([part]), long_poll=LongPoll(timers))
    f.progress()
    call = fetch(f, 12, offset=15, wait=500)
    assert call.response is None and timers.pending[0].delay == 0.5  # parked
    f.progress()  # nothing moved
    assert call.response is None
    part.core.high_watermark = 20
    f.progress()
    assert offsets_of(only(call).records) == [(15, 20)]
    assert timers.pending[0].cancelled


def test_long_poll_answers_empty_when_the_wait_ends(part):
    timers = Timers()
    f = ConsumerFetch(Topics([part]), long_poll=LongPoll(timers))
    call = fetch(f, 12, offset=15, wait=500)
    timers.fire()
    assert (only(call).error_code, bytes(only(call).records)) == (0, b"")
    # min_bytes larger than what is there: waits even with data, answers with it at the end
    call = fetch(f, 12, offset=0, wait=500, min_bytes=1 << 30)
    assert call.response is None
    timers.fire()
    assert offsets_of(only(call).records)[0] == (0, 1)


def test_fetch_sessions(part):
    f = ConsumerFetch(Topics([part]), sessions=FetchSessionCache(slots=2))
    full = fetch(f, 12, offset=0, session=(0, 0))
    sid = full.response.session_id
    assert sid > 0 and offsets_of(only(full).records)[0] == (0, 1)
    # incremental, epoch 1: a new fetch offset, but nothing new to say -> not listed
    inc = fetch(f, 12, offset=15, session=(sid, 1), wait=0)
    assert (inc.response.error_code, inc.response.session_id, inc.response.responses) == (0, sid, [])
    # epoch 2, no partition listed, nothing changed: an empty incremental answer
    call = Call(1, 12, fetch_body(12, session=(sid, 2), topics=[]))
    f.handle(call)
    assert call.response.error_code == 0 and call.response.responses == []
    # ... until the high watermark moves: then the session's partition is back
    part.core.high_watermark = 20
    call = Call(1, 12, fetch_body(12, session=(sid, 3), topics=[]))
    f.handle(call)
    assert offsets_of(only(call).records) == [(15, 20)]
    # wrong epoch, unknown session
    assert fetch(f, 12, session=(sid, 9)).response.error_code == E.INVALID_FETCH_SESSION_EPOCH
    assert fetch(f, 12, session=(sid + 1, 1)).response.error_code == E.FETCH_SESSION_ID_NOT_FOUND
    # forgetting the partition empties the session
    call = Call(1, 12, fetch_body(12, session=(sid, 4), topics=[],
                                  forgotten=[ForgottenTopic(topic=TOPIC, partitions=[0])]))
    f.handle(call)
    assert call.response.responses == [] and f.sessions.sessions[sid].partitions == {}
    # epoch -1 closes it
    closed = fetch(f, 12, session=(sid, -1))
    assert closed.response.session_id == 0 and sid not in f.sessions.sessions
    # sessionless: no session id
    assert fetch(f, 12, session=(0, -1)).response.session_id == 0


def test_session_cache_is_bounded(part):
    f = ConsumerFetch(Topics([part]), sessions=FetchSessionCache(slots=2))
    ids = [fetch(f, 12, session=(0, 0)).response.session_id for _ in range(3)]
    assert len(f.sessions.sessions) == 2 and ids[0] not in f.sessions.sessions
    assert fetch(f, 12, session=(ids[0], 1)).response.error_code == E.FETCH_SESSION_ID_NOT_FOUND
    assert fetch(f, 12, session=(ids[2], 1)).response.error_code == 0
    assert fetch(ConsumerFetch(Topics([part]), sessions=FetchSessionCache(0)), 12,
                 session=(0, 0)).response.session_id == 0  # no slots: sessionless


def test_sessions_hold_a_bounded_number_of_partitions(part):
    from kraft_server.api.topic.fetch_sessions import MAX_SESSION_PARTITIONS
    f = ConsumerFetch(Topics([part]))
    many = [FetchTopic(topic=f"t{i}", topic_id=uuid.UUID(int=0), partitions=[FetchPartition(partition=0)])
            for i in range(MAX_SESSION_PARTITIONS + 1)]
    call = Call(1, 12, fetch_body(12, session=(0, 0), topics=many))
    f.handle(call)
    assert call.response.session_id == 0 and len(call.response.responses) == MAX_SESSION_PARTITIONS + 1
    sid = fetch(f, 12, session=(0, 0)).response.session_id
    call = Call(1, 12, fetch_body(12, session=(sid, 1), topics=many))
    f.handle(call)
    assert call.response.error_code == E.FETCH_SESSION_ID_NOT_FOUND and sid not in f.sessions.sessions


# -- Produce / FindCoordinator ----------------------------------------------------------------

@pytest.mark.parametrize("version", [3, 8, 9, 12, 13])
def test_produce_is_refused_per_partition(part, version):
    def topic(name, tid, *indexes):
        return TopicProduceData(name=name if version < 13 else "", topic_id=tid if version >= 13 else uuid.UUID(int=0),
                                partition_data=[PartitionProduceData(index=i, records=b"") for i in indexes])
    body = ProduceRequest(acks=-1, timeout_ms=100, topic_data=[
        topic(TOPIC, TOPIC_ID, 0, 1), topic("other", uuid.UUID(int=5), 0)])
    call = Call(0, version, body)
    handle_produce_request(call, Topics([part]))
    r = call.response
    assert [[p.error_code for p in t.partition_responses] for t in r.responses] == [
        [E.INVALID_TOPIC_EXCEPTION, E.UNKNOWN_TOPIC_OR_PARTITION], [E.UNKNOWN_TOPIC_OR_PARTITION]]
    assert (r.responses[0].partition_responses[0].error_message is not None) == (version >= 8)


def test_produce_acks_0_closes_the_connection(part):
    call = Call(0, 9, ProduceRequest(acks=0, timeout_ms=1, topic_data=[]))
    handle_produce_request(call, Topics([part]))
    assert call.response is None and call.closed
    assert produce_response(9, call.body, Topics([part])).responses == []


def test_large_fetch_answers_reference_the_segment_bytes(tmp_path):
    """From segment file to socket buffers with no copy in Python: the response frame's
    buffers hold the very view of the mmapped segment (what the connection hands to
    ``transport.writelines``), and they concatenate to the plain encoding."""
    from wire.headers import encode_response_parts
    with FileReplicatedLog(tmp_path) as log:
        for i in range(40):
            log.append(data_batch(i * 8, 1, T0, [bytes([i]) * 8192] * 8))
        log.flush()
        part = MetadataPartition(Core(epoch=1, hwm=320), log, 1)
        call = fetch(ConsumerFetch(Topics([part])), 12, offset=0)
        records = only(call).records
        assert len(records) > 900_000 and isinstance(records.obj, __import__("mmap").mmap)
        parts = encode_response_parts(1, 12, 7, call.response)
        assert any(p is records for p in parts)
        assert b"".join(parts) == encode_response(1, 12, 7, call.response)


def test_timestamp_lookups_across_segments(tmp_path):
    """Small segments: look-ups skip segments whose largest timestamp is too small
    and still answer as a full scan does (timestamps not monotonic on purpose)."""
    with FileReplicatedLog(tmp_path, segment_bytes=4096) as log:
        stamps = [T0 + s for s in (5, 1, 9, 3, 20, 7, 2, 30, 4, 6, 8, 1)]
        for i, ts in enumerate(stamps):
            log.append(data_batch(i, 1, ts, [b"z" * 1500]))
        log.flush()
        assert len(log.segments) > 3
        part = MetadataPartition(Core(epoch=1, hwm=len(stamps)), log, 1)
        for ts in sorted(set(stamps)) + [T0 + 31, T0]:
            first = next((i for i, s in enumerate(stamps) if s >= ts), None)
            want = (0, first, stamps[first], 1) if first is not None else (0, -1, -1, -1)
            assert list_offsets(part, 11, ts) == [want], ts
        assert list_offsets(part, 11, -3) == [(0, 7, T0 + 30, 1)]
        part.core.high_watermark = 7  # the largest timestamp is past the high watermark
        part._hwm = None
        assert list_offsets(part, 11, -3) == [(0, 4, T0 + 20, 1)]


def test_produce_below_v3_closes_the_connection():
    """Produce is advertised from v0, as Kafka brokers do for librdkafka, but a v0-2
    request cannot be decoded: the connection is closed, as Kafka 4 does."""
    import struct

    from kraft_server.api.registry import listener_apis
    from kraft_server.net.pipeline import Pipeline, ProtocolViolation
    apis = listener_apis(False)
    assert apis[0] == (0, 13)
    header = struct.pack(">hhih", 0, 2, 5, 1) + b"c"
    body = struct.pack(">hii", 1, 1000, 0)  # acks, timeout, no topics
    frame = header + body
    pipe = Pipeline("CLIENT", apis)
    pipe.receive_data(struct.pack(">i", len(frame)) + frame)
    with pytest.raises(ProtocolViolation):
        pipe.next_call()
