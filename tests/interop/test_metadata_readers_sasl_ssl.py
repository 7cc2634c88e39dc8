"""Reading ``__cluster_metadata`` over SASL_SSL with SCRAM-SHA-512 (issue 28): one node
whose client listener is SASL_SSL (a server certificate from the test's own CA) and
whose user ``reader`` was formatted into the metadata log with ``kraft-storage format
--add-scram``.

- kafka-python reads the topic from offset 0: the records of the node's log.
- PySpark's Kafka source through the pipeline of ``tools/metadata_stream``, its options
  built from a Kafka client properties file (``security.protocol=SASL_SSL``,
  ``sasl.mechanism``, ``sasl.jaas.config``, a PEM ``ssl.truststore``) exactly as
  ``kraft-metadata-stream --command-config`` builds them: a stream yields the node's
  committed records; with a wrong password the query fails with Kafka's
  SaslAuthenticationException and the node keeps serving (slow: a Spark session).
"""
from __future__ import annotations

import pytest

from tests.support.certs import Pki
from tests.support.kraft_nodes import wait_for
from tests.support.metadata_rows import source_rows
from tests.support.secure_client import sasl_command_config, scram_reader_node

TOPIC = "__cluster_metadata"
USER, SECRET = "reader", "reader-secret"
REFUSED = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"


@pytest.fixture(scope="module")
def scram_node(tmp_path_factory):
    root = tmp_path_factory.mktemp("sasl-ssl-readers")
    pki = Pki(root / "pki")
    node = scram_reader_node(root, pki, USER, SECRET)
    node.start()
    try:
        node.wait_leader(60)
        yield node, pki
    finally:
        node.stop()


def _consumer(node, pki, password):
    from kafka import KafkaConsumer
    return KafkaConsumer(bootstrap_servers=f"127.0.0.1:{node.client_port}", security_protocol="SASL_SSL",
                         ssl_cafile=str(pki.truststore_pem), sasl_mechanism="SCRAM-SHA-512",
                         sasl_plain_username=USER, sasl_plain_password=password, enable_auto_commit=False,
                         request_timeout_ms=10_000)


def test_kafka_python_reads_over_sasl_ssl_with_scram_sha_512(scram_node):
    from kafka import TopicPartition
    node, pki = scram_node
    consumer = _consumer(node, pki, SECRET)
    try:
        tp = TopicPartition(TOPIC, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        records = wait_for(lambda: consumer.poll(timeout_ms=1000, max_records=50).get(tp), 30,
                           "records over SASL_SSL")
    finally:
        consumer.close()
    expected = source_rows(node.data, below=records[-1].offset + 1)
    assert [(r.offset, r.value) for r in records] == [(e["offset"], e["value"]) for e in expected]


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark", reason="pyspark (the `spark` extra) is not installed")
    pytest.importorskip("pyarrow", reason="pyarrow (the `spark` extra) is not installed")
    from tests.support.spark_env import local_spark
    yield from local_spark()


def _source_options(node, pki, tmp_path, password):
    """The Kafka source options ``kraft-metadata-stream --command-config FILE`` uses."""
    from tools.metadata_stream import pipeline
    from tools.metadata_stream.__main__ import parse_args, source_options
    path = sasl_command_config(tmp_path / f"client-{password}.properties", pki, "SCRAM-SHA-512", USER, password)
    args = parse_args(["--bootstrap-server", f"127.0.0.1:{node.client_port}", "--command-config", str(path),
                       "--option", "fetchOffset.numRetries=1"])
    return pipeline.kafka_options(args.bootstrap_server, pipeline.TOPIC, args.starting_offsets, source_options(args))


def _available_now(spark, options, tmp_path, name):
    from tools.metadata_stream import pipeline
    return pipeline.start_stream(pipeline.read_stream(spark, options), "memory", checkpoint=str(tmp_path / name),
                                 query_name=name, trigger={"availableNow": True})


@pytest.mark.slow  # a Spark session of its own
def test_spark_streams_over_sasl_ssl_and_a_wrong_password_fails(scram_node, spark, tmp_path):
    node, pki = scram_node
    wrong = _source_options(node, pki, tmp_path, "wrong")
    assert {k: wrong[k] for k in ("kafka.security.protocol", "kafka.sasl.mechanism", "kafka.ssl.truststore.type",
                                  "kafka.ssl.truststore.location")} == {
        "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": str(pki.truststore_pem)}
    assert 'username="reader" password="wrong"' in wrong["kafka.sasl.jaas.config"]
    query = _available_now(spark, wrong, tmp_path, "refused_rows")
    with pytest.raises(Exception) as failure:
        query.awaitTermination(180)
    assert not query.isActive
    assert "SaslAuthenticationException" in str(failure.value) and REFUSED in str(failure.value), \
        str(failure.value)[:3000]
    node.wait_leader(10)  # the node keeps serving

    query = _available_now(spark, _source_options(node, pki, tmp_path, SECRET), tmp_path, "sasl_rows")
    query.awaitTermination(180)
    assert not query.isActive and query.exception() is None, query.exception()
    rows = spark.sql("SELECT offset, type, version, error FROM sasl_rows ORDER BY offset").collect()
    assert len(rows) >= 5 and all(r.error is None for r in rows)
    expected = source_rows(node.data, below=rows[-1].offset + 1)
    assert [r.offset for r in rows] == [e["offset"] for e in expected]  # once each, in order
