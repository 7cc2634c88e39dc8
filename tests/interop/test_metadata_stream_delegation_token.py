"""``kraft-metadata-stream --delegation-token`` (issue 42) with real PySpark 4.2.0 and its
Kafka source, over one node of ours whose client listener is SASL_SSL (SCRAM-SHA-512, user ``reader``
formatted into the log) and which has ``delegation.token.secret.key``:

- the driver logs in as ``reader`` on the client listener and creates a token with
  Kafka's AdminClient; the source options carry only the token (token id, HMAC,
  ``tokenauth=true``), never ``reader``'s password; a stream reads the token's own
  DelegationTokenRecord, then a config set during the run; after ExpireDelegationToken
  the token login is refused, and a Spark read with the same options fails with
  SaslAuthenticationException;
- (slow) the whole tool, ``main``: a batch read with a token the driver expires at the
  end (RemoveDelegationTokenRecord in the log); with a PLAINTEXT command config the tool
  refuses before Spark starts.
"""
from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="pyspark (the `spark` extra) is not installed")
pytest.importorskip("pyarrow", reason="pyarrow (the `spark` extra) is not installed")

from tests.support.certs import Pki  # noqa: E402
from tests.support.kraft_nodes import wait_for  # noqa: E402
from tests.support.metadata_rows import source_rows  # noqa: E402
from tests.support.secure_client import sasl_command_config, scram_reader_node  # noqa: E402
from tests.support.spark_env import local_spark  # noqa: E402

USER, PASSWORD = "reader", "reader-secret"
MECHANISM = "SCRAM-SHA-512"
REFUSED = f"Authentication failed during authentication due to invalid credentials with SASL mechanism {MECHANISM}"


@pytest.fixture(scope="module")
def token_node(tmp_path_factory):
    root = tmp_path_factory.mktemp("token-node")
    pki = Pki(root / "pki")
    node = scram_reader_node(root, pki, USER, PASSWORD, "delegation.token.secret.key=issue-42-secret")
    node.start()
    try:
        node.wait_leader(60)
        yield node, pki, sasl_command_config(root / "client.properties", pki, MECHANISM, USER, PASSWORD)
    finally:
        node.stop()


@pytest.fixture(scope="module")
def spark():
    yield from local_spark()


def _args(node, config, *more):
    return ["--bootstrap-server", f"127.0.0.1:{node.client_port}", "--command-config", str(config),
            "--option", "fetchOffset.numRetries=1", "--delegation-token", *more]


def _admin(spark, props: dict):
    jvm = spark._jvm
    java_props = jvm.java.util.Properties()
    for key, value in props.items():
        java_props.setProperty(key, value)
    return jvm.org.apache.kafka.clients.admin.Admin.create(java_props)


def _set_config(spark, node, name: str, value: str) -> None:
    """A cluster-wide broker config set with Kafka's AdminClient on the controller listener."""
    jvm = spark._jvm
    pkg, config = jvm.org.apache.kafka.clients.admin, jvm.org.apache.kafka.common.config
    resource = config.ConfigResource(getattr(config, "ConfigResource$Type").BROKER, "")
    op = pkg.AlterConfigOp(pkg.ConfigEntry(name, value), getattr(pkg, "AlterConfigOp$OpType").SET)
    change = jvm.java.util.HashMap()
    change.put(resource, jvm.java.util.Collections.singletonList(op))
    admin = _admin(spark, {"bootstrap.controllers": node.bootstrap})
    try:
        admin.incrementalAlterConfigs(change).all().get()
    finally:
        admin.close()


def _token_login_refused(spark, node, options: dict) -> str | None:
    """DescribeCluster on the client listener with the source's (token) login: the
    refusal's message, or None while the token still logs in."""
    from py4j.protocol import Py4JJavaError

    from tools.metadata_stream.tokens import admin_properties
    admin = _admin(spark, {**admin_properties(options, f"127.0.0.1:{node.client_port}"),
                           "default.api.timeout.ms": "10000", "request.timeout.ms": "5000"})
    try:
        admin.describeCluster().clusterId().get()
        return None
    except Py4JJavaError as exc:
        cause = exc.java_exception.getCause()
        if cause is not None and cause.getClass().getSimpleName() == "SaslAuthenticationException":
            return cause.getMessage()
        raise
    finally:
        admin.close()


def _rows(spark, table: str):
    return spark.sql(f"SELECT offset, type_name, error, delegation_token_record, config_record "
                     f"FROM {table} ORDER BY offset").collect()


def test_executors_read_with_the_drivers_token_only_until_it_expires(token_node, spark, tmp_path):
    from tools.metadata_stream import pipeline
    from tools.metadata_stream.__main__ import parse_args, source_options, token_options
    node, _pki, config = token_node
    args = parse_args(_args(node, config))
    driver = source_options(args)
    extra, holder = token_options(spark, args, driver)
    query = None
    try:
        options = pipeline.kafka_options(args.bootstrap_server, pipeline.TOPIC, args.starting_offsets, extra)
        jaas = options["kafka.sasl.jaas.config"]
        token_id = jaas.split('username="', 1)[1].split('"', 1)[0]
        assert options["kafka.sasl.mechanism"] == MECHANISM and "tokenauth=true" in jaas
        assert token_id != USER and len(token_id) == 22, jaas  # Kafka's token ids: 22 characters
        assert not any(PASSWORD in value for value in options.values()), "the driver's password reached the source"
        assert PASSWORD in driver["kafka.sasl.jaas.config"]  # ... which the driver itself had

        query = pipeline.start_stream(pipeline.read_stream(spark, options), "memory",
                                      checkpoint=str(tmp_path / "checkpoint"), query_name="token_rows",
                                      trigger={"processingTime": "500 milliseconds"})

        def has(test):
            if query.exception() is not None:
                raise AssertionError(query.exception())
            return any(test(r) for r in _rows(spark, "token_rows"))
        wait_for(lambda: has(lambda r: r.delegation_token_record is not None
                             and r.delegation_token_record.token_id == token_id), 180,
                 "the token's own DelegationTokenRecord, read with the token")
        _set_config(spark, node, "log.retention.ms", "4242000")
        wait_for(lambda: has(lambda r: r.config_record is not None and r.config_record.value == "4242000"), 60,
                 "a config set during the run")
        query.stop()
        rows = _rows(spark, "token_rows")
        assert all(r.error is None for r in rows)
        expected = source_rows(node.data, below=rows[-1].offset + 1)
        assert [r.offset for r in rows] == [e["offset"] for e in expected]  # once each, in order

        assert _token_login_refused(spark, node, options) is None  # the token still logs in
        holder.expire()
        refusal = wait_for(lambda: _token_login_refused(spark, node, options), 30, "the token login refused")
        assert REFUSED in refusal, refusal
        with pytest.raises(Exception) as failure:
            pipeline.read_batch(spark, options).collect()
        assert "SaslAuthenticationException" in str(failure.value), str(failure.value)[:3000]
    finally:
        if query is not None and query.isActive:
            query.stop()
        holder.close()


@pytest.mark.slow  # a second Spark read, through main
def test_the_tool_expires_its_token_when_the_batch_ends(token_node, spark, tmp_path, capsys):
    from tools.metadata_stream.__main__ import main
    from wire.records import decode_metadata_record
    node, _pki, config = token_node
    out = tmp_path / "rows"
    assert main(_args(node, config, "--batch", "--sink", "parquet", "--path", str(out))) == 0
    rows = spark.read.parquet(str(out)).orderBy("offset").collect()
    tokens = [r.delegation_token_record.token_id for r in rows if r.delegation_token_record is not None]
    assert tokens, "no DelegationTokenRecord read"
    records = [decode_metadata_record(e["value"]).message for e in source_rows(node.data)]
    assert any(type(r).__name__ == "RemoveDelegationTokenRecord" and r.token_id == tokens[-1] for r in records), \
        f"the token {tokens[-1]} the batch read with was not expired"

    plain = tmp_path / "plain.properties"
    plain.write_text("security.protocol=PLAINTEXT\n")
    assert main(_args(node, plain, "--batch")) == 1
    assert "--delegation-token needs security.protocol SASL_SSL or SASL_PLAINTEXT" in capsys.readouterr().err
