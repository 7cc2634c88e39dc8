"""``kraft-metadata-stream --command-config`` (tools/metadata_stream/client_config.py):
a Kafka client properties file becomes ``kafka.<key>`` source options; ``--option``
wins; what Spark's Kafka source refuses, and ``bootstrap.servers``, are left out."""
from __future__ import annotations

import pytest

from tools.metadata_stream.__main__ import parse_args, source_options
from tools.metadata_stream.client_config import command_config_options

JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required \\\n'
        '    username="reader" password="s3cret";')


def test_a_client_properties_file_becomes_kafka_options(tmp_path):
    path = tmp_path / "client.properties"
    path.write_text("# as kafka-metadata-quorum --command-config takes it\n"
                    "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
                    f"sasl.jaas.config={JAAS}\nssl.truststore.type=PEM\nssl.truststore.location=/ca.pem\n"
                    "bootstrap.servers=elsewhere:9092\nauto.offset.reset=latest\nkafka.client.id=x\n")
    assert command_config_options(path) == {
        "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                  'username="reader" password="s3cret";',
        "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": "/ca.pem", "kafka.client.id": "x"}
    args = parse_args(["--command-config", str(path), "--option", "kafka.sasl.mechanism=SCRAM-SHA-256",
                       "--option", "failOnDataLoss=false"])
    options = source_options(args)
    assert options["kafka.sasl.mechanism"] == "SCRAM-SHA-256" and options["failOnDataLoss"] == "false"
    assert options["kafka.security.protocol"] == "SASL_SSL"


def test_no_file_no_options(tmp_path):
    assert command_config_options(None) == {}
    with pytest.raises(FileNotFoundError, match="Properties file .*missing.properties does not exist"):
        command_config_options(tmp_path / "missing.properties")
