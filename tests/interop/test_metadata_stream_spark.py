"""The PySpark pipeline (``tools/metadata_stream``) with real Spark 4.2.0 and its Kafka
source:

- over an Apache Kafka 4.3.1 broker whose topic holds metadata records (produced with
  kafka-python): a stream that stops inside a transaction and restarts from its
  checkpoint yields each committed record once, in order, aborted ones dropped, the
  same rows as the batch job; the views fold them;
- over our own node's ``__cluster_metadata`` (skipped, with the reason, while the node's
  client listener does not list the topic): rows == the committed records of its log.
"""
from __future__ import annotations

import uuid

import pytest

pytest.importorskip("pyspark", reason="pyspark (the `spark` extra) is not installed")
pytest.importorskip("pyarrow", reason="pyarrow (the `spark` extra) is not installed")

from tests.support.kafka_broker import kafka_broker  # noqa: E402
from tests.support.kraft_nodes import OurNode, _roundtrip, wait_for  # noqa: E402
from tests.support.metadata_rows import dump_log_rows, kafka_type_name, source_rows  # noqa: E402
from tools.metadata_stream import pipeline, views  # noqa: E402
from tests.support.spark_env import local_spark  # noqa: E402
from wire.messages import (  # noqa: E402
    AbortTransactionRecord, BeginTransactionRecord, EndTransactionRecord, FeatureLevelRecord,
    MetadataRequest, NoOpRecord, PartitionChangeRecord, PartitionRecord, RegisterBrokerRecord, TopicRecord,
    UnfenceBrokerRecord, UnregisterBrokerRecord,
)
from wire.messages.metadata_request import MetadataRequestTopic  # noqa: E402
from wire.records import decode_metadata_record, encode_metadata_record  # noqa: E402

TOPIC = "__cluster_metadata"


@pytest.fixture(scope="module")
def spark():
    yield from local_spark()


def _values():
    """Two produce rounds: the first ends inside a transaction, the second ends it, then
    aborts another one."""
    topic_id = uuid.uuid4()
    enc = encode_metadata_record
    first = [enc(BeginTransactionRecord(name="bootstrap"), 0),
             enc(FeatureLevelRecord(name="metadata.version", feature_level=30), 0),
             enc(FeatureLevelRecord(name="group.version", feature_level=1), 0)]
    second = [enc(FeatureLevelRecord(name="transaction.version", feature_level=2), 0),
              enc(EndTransactionRecord(), 0),
              enc(TopicRecord(name="orders", topic_id=topic_id), 0),
              enc(BeginTransactionRecord(name="doomed"), 0),
              enc(PartitionRecord(partition_id=0, topic_id=topic_id, replicas=[1], isr=[1], leader=1), 0),
              enc(AbortTransactionRecord(reason="controller moved"), 0),
              enc(PartitionRecord(partition_id=1, topic_id=topic_id, replicas=[1], isr=[1], leader=1,
                                  leader_epoch=0, partition_epoch=0), 1),
              enc(NoOpRecord(), 0),
              # 11-16: two brokers, one unfenced, one gone; partition 1 moves to broker 1 only
              enc(RegisterBrokerRecord(broker_id=1, broker_epoch=11, incarnation_id=uuid.uuid4()), 3),
              enc(RegisterBrokerRecord(broker_id=2, broker_epoch=12, incarnation_id=uuid.uuid4()), 3),
              enc(UnfenceBrokerRecord(id=1, epoch=11), 0),
              enc(UnregisterBrokerRecord(broker_id=2, broker_epoch=12), 0),
              enc(PartitionChangeRecord(partition_id=1, topic_id=topic_id, leader=2, isr=[1, 2]), 0),
              enc(PartitionChangeRecord(partition_id=1, topic_id=topic_id, replicas=[1, 2]), 0)]
    return first, second


def _run_available_now(spark, options, checkpoint, path):
    query = pipeline.start_stream(pipeline.read_stream(spark, options), "parquet", checkpoint=checkpoint,
                                  path=path, trigger={"availableNow": True})
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()


def _parquet_offsets(spark, path):
    try:
        return [r.offset for r in spark.read.parquet(path).orderBy("offset").select("offset").collect()]
    except Exception as exc:  # no file committed yet
        if "PATH_NOT_FOUND" in str(exc) or "UNABLE_TO_INFER_SCHEMA" in str(exc):
            return []
        raise


@pytest.mark.slow  # 2.5 min: a broker, transactions and two Spark queries
def test_stream_over_a_kafka_broker_resumes_exactly_once_and_drops_aborts(spark, tmp_path):
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic
    broker, bootstrap = kafka_broker(tmp_path / "kafka")
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([NewTopic("meta", 1, 1)])
        admin.close()
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        first, second = _values()
        for value in first:
            producer.send("meta", value, partition=0)
        producer.flush()
        options = pipeline.kafka_options(bootstrap, "meta")
        checkpoint, out = str(tmp_path / "checkpoint"), str(tmp_path / "rows")

        _run_available_now(spark, options, checkpoint, out)
        assert _parquet_offsets(spark, out) == []  # the open transaction is held in the state

        for value in second:
            producer.send("meta", value, partition=0)
        producer.flush()
        producer.close()
        _run_available_now(spark, options, checkpoint, out)  # a new query: from the checkpoint
        expected = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16]  # 7: in the aborted one
        assert _parquet_offsets(spark, out) == expected

        _run_available_now(spark, options, checkpoint, out)  # nothing new: nothing written
        rows = spark.read.parquet(out).orderBy("offset")
        assert [r.offset for r in rows.select("offset").collect()] == expected
        names = [r.type_name for r in rows.select("type_name").collect()]
        assert names == ["BeginTransactionRecord", "FeatureLevelRecord", "FeatureLevelRecord",
                         "FeatureLevelRecord", "EndTransactionRecord", "TopicRecord",
                         "BeginTransactionRecord", "AbortTransactionRecord", "PartitionRecord", "NoOpRecord",
                         "RegisterBrokerRecord", "RegisterBrokerRecord", "UnfenceBrokerRecord",
                         "UnregisterBrokerRecord", "PartitionChangeRecord", "PartitionChangeRecord"]
        assert rows.where("type = 3").select("version").first().version == 1

        batch = pipeline.read_batch(spark, options)
        assert batch.drop("timestamp").collect() == rows.drop("timestamp").collect()
        features = {r.name: r.feature_level for r in views.features(batch).collect()}
        assert features == {"metadata.version": 30, "group.version": 1, "transaction.version": 2}
        assert [r.name for r in views.topics(batch).collect()] == ["orders"]
        parts = views.partitions(batch).collect()
        assert [(p.topic, p.partition_id, p.leader, p.isr, p.replicas, p.leader_epoch, p.partition_epoch)
                for p in parts] == [("orders", 1, 2, [1, 2], [1, 2], 1, 2)]
        assert [(b.broker_id, b.broker_epoch, b.fenced) for b in views.brokers(batch).collect()] == [(1, 11, False)]
    finally:
        broker.close()


def _lists_metadata_topic(port: int) -> bool:
    request = MetadataRequest(topics=[MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False)
    response = _roundtrip(port, request, 12)
    return any(t.name == TOPIC and t.error_code == 0 and t.partitions for t in response.topics)


def test_stream_over_our_node_yields_its_committed_records(request, tmp_path):
    node = OurNode(tmp_path, extra=("metadata.max.idle.interval.ms=200",))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    query = None
    try:
        node.wait_leader(60)
        if not _lists_metadata_topic(node.client_port):
            msg = (f"our node's client listener does not list {TOPIC} in Metadata yet "
                   "(served by the topic-serve branch)")
            print(f"SKIP: {msg}")
            pytest.skip(msg)
        spark = request.getfixturevalue("spark")
        options = pipeline.kafka_options(f"127.0.0.1:{node.client_port}")
        query = pipeline.start_stream(pipeline.read_stream(spark, options), "memory",
                                      checkpoint=str(tmp_path / "checkpoint"), query_name="our_rows",
                                      trigger={"processingTime": "500 milliseconds"})
        wait_for(lambda: spark.sql("SELECT count(*) AS n FROM our_rows").first().n >= 25, 240,
                 "25 rows from our node")
        query.stop()
        rows = spark.sql("SELECT offset, type, type_name, version, error FROM our_rows ORDER BY offset").collect()
    finally:
        if query is not None and query.isActive:
            query.stop()
        node.stop()
    expected = source_rows(node.data, below=rows[-1].offset + 1)
    assert [r.offset for r in rows] == [r["offset"] for r in expected]  # once each, in order
    assert all(r.error is None for r in rows)
    decoded = [decode_metadata_record(r["value"]) for r in expected]
    assert [(r.type, r.version) for r in rows] == [(d.api_key, d.version) for d in decoded]
    # Apache Kafka's own reading of the same segments agrees record by record.
    assert [(r.offset, kafka_type_name(r.type_name), r.version) for r in rows] == dump_log_rows(
        node.data, below=rows[-1].offset + 1)


@pytest.mark.slow
def test_stream_over_our_quorum_survives_kill_9_of_the_leader(request, tmp_path):
    """A 3-node quorum of ours: the stream reads from every node's client listener; the
    leader is killed with SIGKILL mid-stream and the query restarted from its checkpoint;
    the Parquet rows are the committed records of the surviving log, once each, in order."""
    from tests.support.kraft_nodes import agreed_leader, make_quorum
    nodes = make_quorum(tmp_path, "dynamic", uuid.uuid4().hex[:22], 3,
                        extra=("metadata.max.idle.interval.ms=100",))
    query = None
    try:
        for node in nodes:
            node.start()
        leader, _ = agreed_leader(nodes)
        if not _lists_metadata_topic(leader.client_port):
            msg = f"our node's client listener does not list {TOPIC} in Metadata yet"
            print(f"SKIP: {msg}")
            pytest.skip(msg)
        spark = request.getfixturevalue("spark")
        bootstrap = ",".join(f"127.0.0.1:{n.client_port}" for n in nodes)
        options = pipeline.kafka_options(bootstrap)
        checkpoint, out = str(tmp_path / "checkpoint"), str(tmp_path / "rows")

        def start():
            return pipeline.start_stream(pipeline.read_stream(spark, options), "parquet", checkpoint=checkpoint,
                                         path=out, trigger={"processingTime": "500 milliseconds"})

        query = start()
        wait_for(lambda: len(_parquet_offsets(spark, out)) >= 40, 240, "40 rows before the kill")
        leader.kill()
        survivor, _ = agreed_leader(nodes, exclude=(leader.node_id,))
        # The query may fail over on its own or die with the connection: either way it
        # is restarted from the checkpoint, as an operator would.
        before = len(_parquet_offsets(spark, out))
        wait_for(lambda: not query.isActive or len(_parquet_offsets(spark, out)) >= before + 20, 120,
                 "rows after the kill (or the query stopping)")
        query.stop()
        query = start()
        target = len(_parquet_offsets(spark, out)) + 20
        wait_for(lambda: len(_parquet_offsets(spark, out)) >= target, 240, "20 rows after the restart")
        query.stop()
        offsets = _parquet_offsets(spark, out)
    finally:
        if query is not None and query.isActive:
            query.stop()
        for node in nodes:
            node.stop()
    expected = [r["offset"] for r in source_rows(survivor.data, below=offsets[-1] + 1)]
    assert offsets == expected  # once each (no duplicate across the restart), in order, none lost
    assert offsets == [o for o, _, _ in dump_log_rows(survivor.data, below=offsets[-1] + 1)]


@pytest.mark.slow
def test_batch_over_our_observer_of_a_kafka_quorum_reads_kafka_written_records(request, tmp_path):
    """Metadata written by Apache Kafka 4.3.1's own active controller, replicated to our
    node as an observer and read from our node's client listener: the batch job's rows
    are the records Kafka's kafka-dump-log reads from our copy of the log."""
    from tools.kafka_dist.controller import KafkaController
    ctl = KafkaController(tmp_path / "kafka", node_id=1)
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=2)
    try:
        ctl.start_ready(timeout=120)
        node.format_as_observer_of(ctl.bootstrap, ctl.cluster_id)
        node.start()
        wait_for(lambda: len(source_rows(node.data)) >= 20, 90, "20 Kafka-written records on our observer")
        if not _lists_metadata_topic(node.client_port):
            msg = f"our node's client listener does not list {TOPIC} in Metadata yet"
            print(f"SKIP: {msg}")
            pytest.skip(msg)
        spark = request.getfixturevalue("spark")
        rows = pipeline.read_batch(spark, pipeline.kafka_options(f"127.0.0.1:{node.client_port}"))
        rows = rows.select("offset", "type_name", "version", "error", "register_controller_record").collect()
    finally:
        node.kill()
        ctl.close()
    assert len(rows) >= 20 and all(r.error is None for r in rows)
    assert [(r.offset, kafka_type_name(r.type_name), r.version) for r in rows] == dump_log_rows(
        node.data, below=rows[-1].offset + 1)
    controllers = [r.register_controller_record for r in rows if r.type_name == "RegisterControllerRecord"]
    # Kafka's active controller registered itself and our observer (ControllerRegistration).
    assert sorted(c.controller_id for c in controllers) == [1, 2]


def test_console_view_fits_the_terminal_leaves_noops_out_and_picks_types(spark):
    """`make stream`'s console rows (issue 31): a RegisterControllerRecord's fields no
    longer widen the table past the terminal; NoOpRecords are left out unless asked
    for; --types keeps only the named record types."""
    import datetime

    from tools.metadata_stream import console
    from tools.metadata_stream.rowtype import RowType
    from wire.messages import RegisterControllerRecord
    from wire.messages.register_controller_record import ControllerEndpoint, ControllerFeature

    row_type = RowType.load()
    wide = RegisterControllerRecord(
        controller_id=3000, incarnation_id=uuid.uuid4(), zk_migration_ready=False,
        end_points=[ControllerEndpoint(name=f"CONTROLLER{i}", host=f"controller-{i}.example.internal",
                                      port=9093 + i, security_protocol=0) for i in range(8)],
        features=[ControllerFeature(name=f"feature.{i}", min_supported_version=0, max_supported_version=9)
                  for i in range(8)])
    values = [encode_metadata_record(wide, 0), encode_metadata_record(NoOpRecord(), 0),
              encode_metadata_record(TopicRecord(name="t", topic_id=uuid.uuid4()), 0)]
    now = datetime.datetime(2026, 11, 27, 12, 0, 0)
    raw = spark.createDataFrame([(0, i, now, v) for i, v in enumerate(values)],
                                "partition int, offset long, timestamp timestamp, value binary")
    rows = pipeline._decode(raw, row_type)
    assert len(encode_metadata_record(wide, 0)) > 400  # the row that used to widen the table
    for width in (80, 120, 160):
        shown = console.console_rows(console.select_types(rows, None, include_noop=False), row_type, width)
        table = shown._jdf.showString(20, 0, False)  # what the console sink prints
        lines = table.splitlines()
        assert max(map(len, lines)) <= width, table
        assert "NoOpRecord" not in table and "RegisterControllerRecord" in table and "TopicRecord" in table
        assert "..." in table  # the wide record was cut, not wrapped
    everything = console.console_rows(console.select_types(rows, None, include_noop=True), row_type, 120)
    assert [r.type_name for r in everything.collect()] == [
        "RegisterControllerRecord", "NoOpRecord", "TopicRecord"]
    types = console.parse_types("Topic,NoOpRecord", row_type)
    assert types == ["TopicRecord", "NoOpRecord"]
    picked = console.select_types(rows, types, include_noop=False)
    assert sorted(r.type_name for r in picked.collect()) == ["NoOpRecord", "TopicRecord"]
    with pytest.raises(ValueError, match="unknown record type 'Topik'"):
        console.parse_types("Topik", row_type)
