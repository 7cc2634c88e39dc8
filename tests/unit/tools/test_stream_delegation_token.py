"""``kraft-metadata-stream --delegation-token`` (tools/metadata_stream/tokens.py) without
Spark: the driver's AdminClient settings, the token's SCRAM login in place of the
driver's own in the source options, and what the tool refuses before Spark starts.
(Real Spark and a real token: tests/interop/test_metadata_stream_delegation_token.py.)"""
from __future__ import annotations

import pytest

from tools.metadata_stream.__main__ import main, parse_args
from tools.metadata_stream.tokens import (
    Token, TokenError, admin_properties, check_settings, token_mechanism, token_options,
)

DRIVER = {
    "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN",
    "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                              'username="reader" password="s3cret";',
    "kafka.sasl.client.callback.handler.class": "com.example.Handler",
    "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": "/ca.pem",
    "failOnDataLoss": "false",
}
TOKEN = Token(token_id="Ab3dEfGhIjKlMnOpQrStUv", hmac="aG1hYw==", owner="User:reader", expiry_ms=1)


def test_the_executors_get_the_token_login_and_nothing_of_the_drivers():
    options = token_options(DRIVER, TOKEN, "SCRAM-SHA-512")
    assert options == {
        "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                                  'username="Ab3dEfGhIjKlMnOpQrStUv" password="aG1hYw==" tokenauth=true;',
        "kafka.ssl.truststore.type": "PEM", "kafka.ssl.truststore.location": "/ca.pem",
        "failOnDataLoss": "false",
    }
    assert not any("s3cret" in v or "reader" in v for v in options.values())
    assert "hmac" not in repr(TOKEN) and "aG1hYw" not in repr(TOKEN)  # never logged


def test_the_driver_asks_with_its_own_login_where_the_source_reads():
    props = admin_properties({**DRIVER, "kafka.bootstrap.servers": "old:1"}, "n1:9092,n2:9092")
    assert props == {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                     "sasl.jaas.config": DRIVER["kafka.sasl.jaas.config"],
                     "sasl.client.callback.handler.class": "com.example.Handler",
                     "ssl.truststore.type": "PEM", "ssl.truststore.location": "/ca.pem",
                     "bootstrap.servers": "n1:9092,n2:9092"}


@pytest.mark.parametrize("driver, wanted, expected", [
    ("SCRAM-SHA-256", None, "SCRAM-SHA-256"),  # the driver's SCRAM
    ("PLAIN", None, "SCRAM-SHA-512"),  # Spark's sasl.token.mechanism default
    ("", None, "SCRAM-SHA-512"),
    ("SCRAM-SHA-512", "scram-sha-256", "SCRAM-SHA-256"),
])
def test_the_token_mechanism(driver, wanted, expected):
    assert token_mechanism({"kafka.sasl.mechanism": driver}, wanted) == expected


def test_a_token_logs_in_with_scram_only():
    with pytest.raises(TokenError, match="SCRAM-SHA-256 or SCRAM-SHA-512, not PLAIN"):
        token_mechanism(DRIVER, "PLAIN")


@pytest.mark.parametrize("options, message", [
    ({}, "needs security.protocol SASL_SSL or SASL_PLAINTEXT .* not PLAINTEXT"),
    ({"kafka.security.protocol": "SSL"}, "not SSL"),
    ({"kafka.security.protocol": "SASL_SSL"}, "needs the driver's sasl.jaas.config"),
])
def test_settings_that_cannot_ask_for_a_token(options, message):
    with pytest.raises(TokenError, match=message):
        check_settings(options)
    check_settings({"kafka.security.protocol": "sasl_plaintext", "kafka.sasl.jaas.config": "x"})


def test_the_tool_refuses_before_spark_starts(tmp_path, capsys):
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SSL\nssl.truststore.location=/ca.pem\n")
    assert main(["--command-config", str(config), "--delegation-token", "--batch"]) == 1
    assert "--delegation-token needs security.protocol SASL_SSL" in capsys.readouterr().err
    args = parse_args(["--delegation-token"])
    assert (args.token_mechanism, args.token_max_lifetime_ms, args.keep_token) == (None, -1, False)
