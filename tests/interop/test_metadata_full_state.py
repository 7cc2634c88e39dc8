"""The full current state after retention (docs/metadata-topic.md, "the full state after retention"):
a node snapshots every 3 KB of records and retention (8 KB) moves its log start past
every record of its bootstrap. A kafka-python consumer that read ``__cluster_metadata`` and
``__cluster_metadata_control`` from offset 0 before retention and one that starts
after it (``__cluster_metadata_snapshot``, then both topics from its end offset)
fold the same state at the same offset; so does Spark's bootstrap mode
(``tools/metadata_stream/bootstrap.py``)."""
from __future__ import annotations

import time
import uuid

import pytest

from tests.interop.test_metadata_companion_clients import latest
from tests.support.kraft_nodes import OurNode, _roundtrip, set_property
from wire.messages import ListOffsetsRequest, VotersRecord
from wire.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from wire.records import decode_metadata_record

TOPIC, CONTROL, SNAPSHOT = "__cluster_metadata", "__cluster_metadata_control", "__cluster_metadata_snapshot"
FEATURE_LEVEL, REGISTER_CONTROLLER = 12, 27


def earliest(node) -> int:
    body = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name=TOPIC, partitions=[
        ListOffsetsPartition(partition_index=0, timestamp=-2)])])
    (p,) = _roundtrip(node.client_port, body, 9).topics[0].partitions
    return p.offset


class State:
    """What a metadata image holds that this node writes: features, controllers, voters."""

    def __init__(self):
        self.features, self.controllers, self.voters, self.upto = {}, {}, None, 0

    def apply(self, value) -> None:
        record = decode_metadata_record(value)
        msg = record.message
        if record.api_key == FEATURE_LEVEL:
            if msg.feature_level:
                self.features[msg.name] = msg.feature_level
            else:
                self.features.pop(msg.name, None)
        elif record.api_key == REGISTER_CONTROLLER:
            self.controllers[msg.controller_id] = (str(msg.incarnation_id), sorted(
                (e.name, e.host, e.port) for e in msg.end_points))

    def apply_control(self, key: bytes, value) -> None:
        if key == b"Voters":
            self.voters = sorted(v.voter_id for v in VotersRecord.decode(value, 0).voters)

    def same(self):
        return self.features, self.controllers, self.voters


def consume(consumer, partitions, state: State, end: int, seen: list) -> None:
    """Poll until every partition's position reaches ``end``; fold what comes below it."""
    deadline = time.monotonic() + 60
    while any(consumer.position(tp) < end for tp in partitions):
        assert time.monotonic() < deadline, "the consumer did not reach the end"
        for tp, records in consumer.poll(timeout_ms=200).items():
            for r in records:
                if r.offset >= end:
                    continue
                seen.append((tp.topic, r.offset))
                if tp.topic == CONTROL or r.key is not None:
                    state.apply_control(r.key, r.value)
                else:
                    state.apply(r.value)
    state.upto = end


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    n = OurNode(tmp_path_factory.mktemp("full-state"), extra=(
        "metadata.max.idle.interval.ms=100",
        "metadata.log.max.record.bytes.between.snapshots=3000",
        "internal.metadata.log.segment.bytes=2048",
        # a few snapshots' worth of log stays: the early reader, a poll behind, keeps up
        "metadata.max.retention.bytes=8000",
        "metadata.max.retention.ms=-1",
    ))
    n.format_with_ours(uuid.uuid4().hex[:22])
    n.start()
    try:
        n.wait_leader(60)
        yield n
    finally:
        n.stop()


@pytest.fixture(scope="module")
def early_and_late(node):
    """(early state, late state, the late consumer's snapshot end offset) at one offset."""
    from kafka import KafkaConsumer, TopicPartition
    main, control = TopicPartition(TOPIC, 0), TopicPartition(CONTROL, 0)
    early = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{node.client_port}", enable_auto_commit=False,
                          auto_offset_reset="none")
    early_state, early_seen = State(), []
    try:
        early.assign([main, control])
        early.seek(main, 0)
        early.seek(control, 0)
        # Read along from 0 while the node snapshots and retention moves the log start.
        deadline = time.monotonic() + 120
        while earliest(node) == 0:
            assert time.monotonic() < deadline, "retention never moved the log start"
            consume(early, [main, control], early_state, latest(node), early_seen)
        assert (CONTROL, 0) in early_seen and min(o for t, o in early_seen if t == TOPIC) < 10  # from the start
        late = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{node.client_port}", enable_auto_commit=False,
                             auto_offset_reset="none")
        late_state, late_seen = State(), []
        try:
            snap = TopicPartition(SNAPSHOT, 0)
            late.assign([snap])
            late.seek(snap, 0)
            consume(late, [snap], late_state, late.end_offsets([snap])[snap], late_seen)
            start = earliest(node)
            late.assign([main, control])
            late.seek(main, start)
            late.seek(control, start)
            end = latest(node)
            consume(late, [main, control], late_state, end, late_seen)
            consume(early, [main, control], early_state, end, early_seen)
        finally:
            late.close()
    finally:
        early.close()
    return early_state, late_state, start, late_seen


def test_snapshot_then_log_rebuilds_the_state_of_a_reader_from_offset_0(early_and_late):
    early, late, start, late_seen = early_and_late
    assert start > 0 and min(o for t, o in late_seen if t == TOPIC) >= start
    assert early.features and early.controllers and early.voters == [1]
    assert late.same() == early.same() and late.upto == early.upto


@pytest.mark.slow  # its own Spark session and a node restart: about 100 s
def test_spark_bootstrap_mode_yields_the_same_state(request, node, early_and_late):
    """Spark's batch jobs take longer than this node's retention window (a snapshot every
    few seconds), so the node is restarted with snapshots and retention off first: its
    log start stays where retention left it. (A moving start makes ``read_full_state`` read again.)"""
    pytest.importorskip("pyspark", reason="pyspark (the `spark` extra) is not installed")
    from tools.metadata_stream import bootstrap, views
    early, _, _, _ = early_and_late
    spark = request.getfixturevalue("spark")
    node.stop()
    set_property(node.config, "metadata.log.max.record.bytes.between.snapshots", str(1 << 30))
    set_property(node.config, "metadata.max.retention.bytes", "-1")
    node.start()
    node.wait_leader(60)
    assert earliest(node) > 0
    rows, start = bootstrap.read_full_state(spark, f"127.0.0.1:{node.client_port}")
    rows = rows.cache()
    assert start >= earliest(node) > 0  # after a restart the start is a segment's base offset
    assert rows.where("error IS NOT NULL").count() == 0
    features = {r.name: r.feature_level for r in views.features(rows).collect()}
    assert features == early.features
    controllers = {r.controller_id: r.incarnation_id for r in views.controllers(rows).collect()}
    assert set(controllers) == set(early.controllers)  # re-registered by the restart: a new incarnation
    snapshot_offsets = [r.offset for r in rows.where(f"offset < {start}").collect()]
    # the snapshot's records, rebased to end just below S (its footer, last, is not a row)
    assert snapshot_offsets and max(snapshot_offsets) == start - 2


from tests.interop.test_metadata_stream_spark import spark  # noqa: E402,F401 (fixture)
