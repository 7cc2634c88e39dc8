"""The companion topics (kraft_server/api/topic): ``__cluster_metadata_control`` (the
log's control records as data at their offsets, an empty control batch up to the
high watermark) and ``__cluster_metadata_snapshot`` (the snapshot at the log start),
through the same handlers as ``__cluster_metadata``."""
from __future__ import annotations

import pytest

from kraft_server.api.metadata import metadata_response
from kraft_server.api.topic import (CONTROL_TOPIC, CONTROL_TOPIC_ID, SNAPSHOT_TOPIC, SNAPSHOT_TOPIC_ID,
                                    TOPIC, Topics)
from kraft_server.api.topic.consumer_fetch import ConsumerFetch
from kraft_server.api.topic.describe_topic_partitions import describe_topic_partitions_response
from kraft_server.api.topic.list_offsets import list_offsets_response
from kraft_server.api.topic.produce import produce_response
from kraft_server.log.file_log import FileReplicatedLog
from kraft_server.common.values import OffsetAndEpoch
from wire.errors import ErrorCode as E
from wire.messages import (DescribeTopicPartitionsRequest, LeaderChangeMessage, ListOffsetsRequest,
                           MetadataRequest, ProduceRequest, SnapshotHeaderRecord, VotersRecord)
from wire.messages.describe_topic_partitions_request import Cursor
from wire.messages.leader_change_message import Voter
from wire.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from wire.messages.produce_request import PartitionProduceData, TopicProduceData
from wire.records import ControlRecordType as C, build_control_batch, data_batch, iter_batches

from tests.unit.api.test_topic_handlers import Call, Core, fetch_body

T0 = 1_700_000_000_000


def leader_change(offset, epoch, leader):
    msg = LeaderChangeMessage(version=0, leader_id=leader, voters=[Voter(voter_id=leader)],
                              granting_voters=[Voter(voter_id=leader)])
    return build_control_batch(offset, epoch, T0 + offset, [(C.LEADER_CHANGE, msg)])


@pytest.fixture
def log(tmp_path):
    """0-2 bootstrap control (KRaftVersion + Voters + LeaderChange), 3-9 data, 10 a
    LeaderChange at epoch 2, 11-19 data."""
    with FileReplicatedLog(tmp_path, segment_bytes=400) as log:
        voters = VotersRecord(version=0, voters=[])
        log.append(build_control_batch(0, 1, T0, [(C.KRAFT_VERSION, _kraft_version()),
                                                  (C.KRAFT_VOTERS, voters)]))
        log.append(leader_change(2, 1, 1))
        for i in range(3, 10):
            log.append(data_batch(i, 1, T0 + i, [b"d%d" % i]))
        log.append(leader_change(10, 2, 2))
        for i in range(11, 20):
            log.append(data_batch(i, 2, T0 + i, [b"d%d" % i]))
        log.flush()
        yield log


def _kraft_version():
    from wire.messages import KRaftVersionRecord
    return KRaftVersionRecord(version=0, kraft_version=1)


@pytest.fixture
def topics(log):
    return Topics.of_log(Core(epoch=2, hwm=18), log, node_id=1)


def fetch(topics, topic_id, offset, version=12, pmax=1 << 20, name=CONTROL_TOPIC):
    call = Call(1, version, fetch_body(version, offset=offset, pmax=pmax, topic=name))
    if version >= 13:
        call.body.topics[0].topic_id = topic_id
    ConsumerFetch(topics).handle(call)
    (t,) = call.response.responses
    (p,) = t.partitions
    return p


def records(data):
    """[(offset, key, value, headers, is_control)] of a fetched records blob."""
    out = []
    for batch in iter_batches(bytes(data)):
        if not batch.records:
            out.append((batch.base_offset, batch.last_offset, None, batch.is_control))
        for r in batch.records:
            out.append((batch.base_offset + r.offset_delta, r.key, r.value, batch.is_control))
    return out


def test_metadata_lists_the_three_topics(topics):
    r = metadata_response(12, MetadataRequest(topics=None), node_id=1, host="h", port=9,
                          cluster_id="c", topics=topics)
    assert [(t.name, t.topic_id, t.is_internal) for t in r.topics] == [
        (TOPIC, topics.main.topic_id, False), (CONTROL_TOPIC, CONTROL_TOPIC_ID, False),
        (SNAPSHOT_TOPIC, SNAPSHOT_TOPIC_ID, False)]
    by_id = metadata_response(12, MetadataRequest(topics=[_by_id(CONTROL_TOPIC_ID)]), node_id=1, host="h",
                              port=9, cluster_id="c", topics=topics)
    assert [t.name for t in by_id.topics] == [CONTROL_TOPIC]
    described = describe_topic_partitions_response(DescribeTopicPartitionsRequest(topics=[]), topics)
    assert [t.name for t in described.topics] == [TOPIC, CONTROL_TOPIC, SNAPSHOT_TOPIC]
    after = describe_topic_partitions_response(DescribeTopicPartitionsRequest(
        topics=[], cursor=Cursor(topic_name=CONTROL_TOPIC, partition_index=0)), topics)
    assert [(t.name, len(t.partitions)) for t in after.topics] == [(TOPIC, 0), (CONTROL_TOPIC, 1),
                                                                  (SNAPSHOT_TOPIC, 1)]


def _by_id(topic_id):
    from wire.messages.metadata_request import MetadataRequestTopic
    return MetadataRequestTopic(name=None, topic_id=topic_id)


@pytest.mark.parametrize("version", [4, 12, 13])
def test_control_topic_serves_control_records_as_data_at_their_offsets(topics, version):
    p = fetch(topics, CONTROL_TOPIC_ID, 0, version)
    assert p.error_code == 0 and p.high_watermark == 18 and p.log_start_offset == 0
    got = records(p.records)
    assert [(o, k, c) for o, k, _, c in got] == [
        (0, b"KRaftVersion", False), (1, b"Voters", False), (2, b"LeaderChange", False),
        (10, b"LeaderChange", False), (11, 17, True)]  # skip batch up to the high watermark
    value = got[3][2]
    assert LeaderChangeMessage.decode(value, 0).leader_id == 2
    # from inside a gap: the next control batch; at the high watermark: nothing
    assert [o for o, *_ in records(fetch(topics, CONTROL_TOPIC_ID, 5, version).records)] == [10, 11]
    assert [o for o, *_ in records(fetch(topics, CONTROL_TOPIC_ID, 12, version).records)] == [12]
    assert fetch(topics, CONTROL_TOPIC_ID, 18, version).records in (b"", None)


def test_control_topic_respects_max_bytes_and_never_skips_a_control_batch(topics):
    first = records(fetch(topics, CONTROL_TOPIC_ID, 0, pmax=1).records)
    assert [o for o, *_ in first] == [0, 1]  # one whole batch, no skip batch after it
    assert [o for o, *_ in records(fetch(topics, CONTROL_TOPIC_ID, 2, pmax=1).records)] == [2]


def test_control_topic_follows_the_log_start_and_commits(log, topics):
    core = topics.main.core
    assert [o for o, *_ in records(fetch(topics, CONTROL_TOPIC_ID, 0).records)][-1] == 11
    core.high_watermark = 20
    assert records(fetch(topics, CONTROL_TOPIC_ID, 18).records) == [(18, 19, None, True)]
    snap = OffsetAndEpoch(10, 1)
    with log.create_snapshot(snap) as writer:
        writer.append(build_control_batch(0, 1, T0, [(C.SNAPSHOT_HEADER, SnapshotHeaderRecord(
            version=0, last_contained_log_timestamp=T0))]))
        writer.append(data_batch(1, 1, T0, [b"state"]))
        writer.append(build_control_batch(2, 1, T0, [(C.SNAPSHOT_FOOTER, _footer())]))
        writer.freeze()
    log.delete_before_snapshot(snap)
    start = log.start_offset()
    assert start == 10
    assert fetch(topics, CONTROL_TOPIC_ID, 0).error_code == E.OFFSET_OUT_OF_RANGE
    assert [o for o, *_ in records(fetch(topics, CONTROL_TOPIC_ID, 10).records)] == [10, 11]


def _footer():
    from wire.messages import SnapshotFooterRecord
    return SnapshotFooterRecord(version=0)


def test_snapshot_topic_serves_the_oldest_snapshot_from_the_log_start_on(log, topics):
    assert fetch(topics, SNAPSHOT_TOPIC_ID, 0, name=SNAPSHOT_TOPIC).high_watermark == 0  # none yet
    snap = OffsetAndEpoch(10, 1)
    with log.create_snapshot(snap) as writer:
        writer.append(build_control_batch(0, 1, T0, [(C.SNAPSHOT_HEADER, SnapshotHeaderRecord(
            version=0, last_contained_log_timestamp=T0))]))
        writer.append(data_batch(1, 1, T0, [b"state1", b"state2"]))
        writer.append(build_control_batch(3, 1, T0, [(C.SNAPSHOT_FOOTER, _footer())]))
        writer.freeze()
    log.delete_before_snapshot(snap)  # served before, and after the log start moved to it
    p = fetch(topics, SNAPSHOT_TOPIC_ID, 0, version=13, name=SNAPSHOT_TOPIC)
    assert (p.error_code, p.high_watermark, p.log_start_offset) == (0, 4, 0)
    batches = list(iter_batches(bytes(p.records)))
    assert [(b.base_offset, b.is_control) for b in batches] == [(0, False), (1, False), (3, False)]
    head, footer = batches[0].records[0], batches[2].records[0]
    assert (head.key, footer.key) == (b"SnapshotHeader", b"SnapshotFooter")
    ids = (("snapshot.end.offset", b"10"), ("snapshot.epoch", b"1"))
    assert head.headers == ids and footer.headers == ids
    assert [r.value for r in batches[1].records] == [b"state1", b"state2"]
    assert fetch(topics, SNAPSHOT_TOPIC_ID, 5, name=SNAPSHOT_TOPIC).error_code == E.OFFSET_OUT_OF_RANGE
    body = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=SNAPSHOT_TOPIC, partitions=[
        ListOffsetsPartition(partition_index=0, timestamp=ts) for ts in (-2, -1)])])
    r = list_offsets_response(11, body, topics)
    assert [(q.offset, q.leader_epoch) for q in r.topics[0].partitions] == [(0, 1), (4, 1)]


@pytest.mark.parametrize("name", [CONTROL_TOPIC, SNAPSHOT_TOPIC])
def test_companions_refuse_produce(topics, name):
    body = ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[TopicProduceData(
        name=name, partition_data=[PartitionProduceData(index=0, records=b"")])])
    (p,) = produce_response(9, body, topics).responses[0].partition_responses
    assert p.error_code == E.INVALID_TOPIC_EXCEPTION and name in p.error_message
