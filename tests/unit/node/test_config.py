"""server.properties parsing: Java Properties syntax, Kafka's names, defaults,
validators and error messages, and listener / voter / bootstrap-server strings."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraft_server.java_properties import PropertiesSyntaxError
from kraft_server.config import (
    ConfigError,
    Endpoint,
    KafkaConfig,
    Voter,
    load_properties,
    parse_bootstrap_servers,
    parse_listeners,
    parse_properties,
    parse_voters,
)

MINIMAL = {
    "node.id": "1",
    "process.roles": "controller",
    "controller.listener.names": "CONTROLLER",
    "listeners": "CONTROLLER://127.0.0.1:9093",
}


# -- Java Properties syntax ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("a=1", {"a": "1"}),
    ("a:1", {"a": "1"}),
    ("a 1", {"a": "1"}),
    ("a  =  1", {"a": "1"}),
    ("a = 1  ", {"a": "1  "}),  # trailing whitespace is part of the value
    ("  a=1", {"a": "1"}),
    ("a==1", {"a": "=1"}),  # only one separator is consumed
    ("a", {"a": ""}),
    ("a=", {"a": ""}),
    ("# comment\n! also\na=1", {"a": "1"}),
    ("   # indented comment\na=1", {"a": "1"}),
    ("a=1\na=2", {"a": "2"}),  # last one wins
    ("a=x\\\n   y", {"a": "xy"}),  # continuation, leading blanks dropped
    ("a=x\\\\\nb=y", {"a": "x\\", "b": "y"}),  # escaped backslash: no continuation
    ("# comment \\\na=1", {"a": "1"}),  # a comment line never continues
    ("a\\=b=c", {"a=b": "c"}),
    ("a\\ b=c", {"a b": "c"}),
    ("a=\\t\\n\\u0041\\q", {"a": "\t\nAq"}),
    ("a=1\r\nb=2\rc=3", {"a": "1", "b": "2", "c": "3"}),
    ("a=x\\", {"a": "x"}),  # a trailing backslash at the end of the file is dropped
])
def test_properties_syntax(text, expected):
    assert parse_properties(text) == expected


def test_properties_file_is_latin1(tmp_path):
    path = tmp_path / "server.properties"
    path.write_bytes("host=caf\xe9\n".encode("latin-1"))
    assert load_properties(path) == {"host": "caf\xe9"}


def test_bad_unicode_escape(tmp_path):
    with pytest.raises(PropertiesSyntaxError, match="Malformed"):
        parse_properties("a=\\u00zz")
    path = tmp_path / "server.properties"
    path.write_text("node.id=\\u00zz\n")
    with pytest.raises(ConfigError, match="Malformed"):
        KafkaConfig.from_file(path)


# -- typed config ----------------------------------------------------------------------

def test_defaults_are_kafkas():
    c = KafkaConfig.from_props(MINIMAL)
    assert c.quorum_election_timeout_ms == 1000
    assert c.quorum_fetch_timeout_ms == 2000
    assert c.quorum_election_backoff_max_ms == 1000
    assert c.quorum_request_timeout_ms == 2000
    assert c.quorum_retry_backoff_ms == 20
    assert c.quorum_append_linger_ms == 25
    assert c.quorum_auto_join_enable is False
    assert c.metadata_log_segment_bytes == 1024 ** 3
    assert c.metadata_log_max_record_bytes_between_snapshots == 20 * 1024 * 1024
    assert c.metadata_log_max_snapshot_interval_ms == 3600 * 1000
    assert c.metadata_max_idle_interval_ms == 500
    assert c.socket_request_max_bytes == 104857600
    assert c.metadata_log_dir == Path("/tmp/kafka-logs")
    assert c.quorum_voters == () and c.quorum_bootstrap_servers == ()
    assert not c.is_static_quorum
    assert c["controller.quorum.fetch.timeout.ms"] == 2000
    assert c["listeners"] == ["CONTROLLER://127.0.0.1:9093"]


def test_from_file_and_overrides(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text(
        "node.id = 3\nprocess.roles=controller\ncontroller.listener.names=controller\n"
        "listeners=CONTROLLER://[::1]:9093,PLAINTEXT://:9092\n"
        "advertised.listeners=CONTROLLER://ctl.example:19093\n"
        "controller.quorum.voters=1@a:1, 2@[::1]:2 ,3@c:3\n"
        "log.dirs=/d1,/d2\n"
        "controller.quorum.auto.join.enable=TRUE\n"
        "controller.quorum.election.timeout.ms= 1500 \n"
    )
    c = KafkaConfig.from_file(path)
    assert c.node_id == 3
    assert c.controller_listener_names == ("CONTROLLER",)
    assert c.listeners == (Endpoint("CONTROLLER", "::1", 9093), Endpoint("PLAINTEXT", "", 9092))
    assert c.controller_endpoints() == (Endpoint("CONTROLLER", "ctl.example", 19093),)
    assert c.quorum_voters == (Voter(1, "a", 1), Voter(2, "::1", 2), Voter(3, "c", 3))
    assert c.is_static_quorum
    assert c.metadata_log_dir == Path("/d1") and c.log_dirs == (Path("/d1"), Path("/d2"))
    assert c.quorum_auto_join_enable is True
    assert c.quorum_election_timeout_ms == 1500
    assert c.listener_security_protocol_map["CONTROLLER"] == "PLAINTEXT"


def test_metadata_log_dir_wins():
    c = KafkaConfig.from_props({**MINIMAL, "log.dirs": "/a,/b", "metadata.log.dir": "/m"})
    assert c.metadata_log_dir == Path("/m")


def test_internal_segment_bytes_allows_tiny_segments():
    c = KafkaConfig.from_props({**MINIMAL, "internal.metadata.log.segment.bytes": "1024"})
    assert c.metadata_log_segment_bytes == 1024


@pytest.mark.parametrize("props, message", [
    ({**MINIMAL, "node.id": "abc"}, "Invalid value abc for configuration node.id: Not a number of type INT"),
    ({**MINIMAL, "node.id": "99999999999"}, "Invalid value 99999999999 for configuration node.id: Not a number of type INT"),
    ({**MINIMAL, "node.id": "-1"}, "Invalid value -1 for configuration node.id: Value must be at least 0"),
    ({**MINIMAL, "metadata.log.max.snapshot.interval.ms": "x"},
     "Invalid value x for configuration metadata.log.max.snapshot.interval.ms: Not a number of type LONG"),
    ({**MINIMAL, "controller.quorum.auto.join.enable": "yes"},
     "Invalid value yes for configuration controller.quorum.auto.join.enable: Expected value to be either true or false"),
    ({**MINIMAL, "metadata.log.segment.bytes": "1000"},
     "Invalid value 1000 for configuration metadata.log.segment.bytes: Value must be at least 8388608"),
    ({k: v for k, v in MINIMAL.items() if k != "node.id"},
     'Missing required configuration "node.id" which has no default value.'),
    ({**MINIMAL, "process.roles": "controller,wizard"}, "configuration process.roles: String must be one of: broker, controller"),
    ({**MINIMAL, "controller.quorum.voters": "1localhost:9093"}, "configuration controller.quorum.voters"),
    ({**MINIMAL, "controller.quorum.voters": "x@localhost:9093"}, "Failed to parse node id"),
    ({**MINIMAL, "controller.quorum.voters": "1@localhost"}, "configuration controller.quorum.voters"),
    ({**MINIMAL, "controller.quorum.bootstrap.servers": "localhost"}, "controller.quorum.bootstrap.servers"),
    ({**MINIMAL, "listeners": "CONTROLLER:9093"}, "Unable to parse CONTROLLER:9093 to a broker endpoint"),
    ({**MINIMAL, "listeners": "CONTROLLER://a:1,CONTROLLER://b:2"}, "Each listener must have a different name"),
    ({**MINIMAL, "listeners": "PLAINTEXT://:9092"}, "controller.listener.names must only contain values appearing in the 'listeners'"),
])
def test_invalid_values_name_the_property(props, message):
    with pytest.raises(ConfigError) as info:
        KafkaConfig.from_props(props)
    assert message in str(info.value)


# -- endpoint strings --------------------------------------------------------------------

def test_listener_forms():
    assert parse_listeners("plaintext://host:1, SSL://[fe80::1%eth0]:2,X://:0") == [
        Endpoint("PLAINTEXT", "host", 1), Endpoint("SSL", "fe80::1%eth0", 2), Endpoint("X", "", 0)]
    assert str(Endpoint("C", "::1", 9)) == "C://[::1]:9"


def test_voters_and_bootstrap_servers():
    assert parse_voters("1@h:1,2@[::1]:2") == [Voter(1, "h", 1), Voter(2, "::1", 2)]
    assert parse_voters("") == []
    assert parse_bootstrap_servers("a:1, [::1]:2") == [Endpoint("", "a", 1), Endpoint("", "::1", 2)]
    with pytest.raises(ConfigError, match="duplicate"):
        parse_voters("1@a:1,1@b:2")
    with pytest.raises(ConfigError, match="out of range"):
        parse_bootstrap_servers("a:70000")


def test_probe_listeners_are_the_other_controller_listeners_with_the_first_ones_protocol():
    """AddRaftVoter probes a new voter's endpoints on these too (raft/endpoint_probe.py):
    the outbound channel speaks the first controller listener's protocol only."""
    from kraft_server.shell.quorum_setup import probe_listeners
    c = KafkaConfig.from_props({
        **MINIMAL, "controller.listener.names": "CONTROLLER,CTRL2,SECURE",
        "listeners": "CONTROLLER://127.0.0.1:9093,CTRL2://127.0.0.1:9094,SECURE://127.0.0.1:9095",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,CTRL2:PLAINTEXT,SECURE:SSL"})
    assert probe_listeners(c) == ("CTRL2",)
    assert probe_listeners(KafkaConfig.from_props(MINIMAL)) == ()
