"""ConfigurationControl on the active controller (``kraft_server/controller/configs``):
IncrementalAlterConfigs / AlterConfigs records and Kafka 4.3.1's error codes and texts,
ClearElrRecord after a min.insync.replicas change, validateOnly, replay into the image
and the snapshot, and DescribeConfigs' sources and synonyms."""
from __future__ import annotations

import pytest

from kraft_server.api.config_requests import alter_configs_op
from kraft_server.controller.configs.definitions import TOPIC_DEFS, ConfigError, parse
from kraft_server.controller.configs.describe import describe
from kraft_server.controller.admin_requests import create_topics_op
from kraft_server.controller.image import records as rec
from wire.errors import ErrorCode
from wire.messages import AlterConfigsRequest, CreateTopicsRequest, IncrementalAlterConfigsRequest
from wire.messages.alter_configs_request import AlterableConfig as LegacyConfig
from wire.messages.alter_configs_request import AlterConfigsResource as LegacyResource
from wire.messages.incremental_alter_configs_request import AlterableConfig, AlterConfigsResource

from tests.unit.controller.test_controller_topics import run, three, topic

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def incremental(*resources, validate_only=False):
    return IncrementalAlterConfigsRequest(validate_only=validate_only, resources=[
        AlterConfigsResource(resource_type=t, resource_name=n,
                             configs=[AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops])
        for t, n, ops in resources])


def alter(c, request, api_key=44, version=1):
    name, op = alter_configs_op(api_key, version, request, node_id=c.controller.settings.node_id)
    return {(r.resource_type, r.resource_name): (r.error_code, r.error_message) for r in run(c, op).responses}


def with_topic(name="t", configs=()):
    c, _ = three()
    r = run(c, create_topics_op(CreateTopicsRequest(topics=[topic(name, 1, 3, configs)]), 7))
    assert r.topics[0].error_code == 0
    return c


def last_batch(c):
    return c.data_batches()[-1]


def test_set_delete_append_subtract_write_config_records():
    c = with_topic()
    out = alter(c, incremental((2, "t", [("retention.ms", SET, "1000"),
                                         ("leader.replication.throttled.replicas", APPEND, "0:1,0:2")])))
    assert out == {(2, "t"): (0, None)}
    assert c.controller.image.configs.resource(2, "t") == {
        "retention.ms": "1000", "leader.replication.throttled.replicas": "0:1,0:2"}
    alter(c, incremental((2, "t", [("leader.replication.throttled.replicas", SUBTRACT, "0:1"),
                                   ("retention.ms", DELETE, None)])))
    assert c.controller.image.configs.resource(2, "t") == {"leader.replication.throttled.replicas": "0:2"}
    # cleanup.policy APPENDs to its default (delete)
    alter(c, incremental((2, "t", [("cleanup.policy", APPEND, "compact")])))
    assert c.controller.image.configs[(2, "t", "cleanup.policy")] == "delete,compact"


def test_unchanged_topic_value_writes_nothing_but_a_broker_value_is_written_again():
    c = with_topic(configs=[("retention.ms", "1000")])
    before = len(c.data_batches())
    assert alter(c, incremental((2, "t", [("retention.ms", SET, "1000")]))) == {(2, "t"): (0, None)}
    assert len(c.data_batches()) == before
    alter(c, incremental((4, "", [("log.cleaner.threads", SET, "2")])))
    alter(c, incremental((4, "", [("log.cleaner.threads", SET, "2")])))
    assert len(c.data_batches()) == before + 2  # KAFKA-14136


@pytest.mark.parametrize("ops,code,message", [
    ([("retention.ms", SET, "abc")], ErrorCode.INVALID_CONFIG,
     "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ([("retention.ms", SET, "-5")], ErrorCode.INVALID_CONFIG,
     "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
    ([("no.such.config", SET, "1")], ErrorCode.INVALID_CONFIG, "Unknown topic config name: no.such.config"),
    ([("retention.ms", APPEND, "1")], ErrorCode.INVALID_CONFIG,
     "Can't APPEND to key retention.ms because its type is not LIST."),
    ([("cleanup.policy", SET, "compact,bogus")], ErrorCode.INVALID_CONFIG,
     "Invalid value bogus for configuration cleanup.policy: String must be one of: compact, delete"),
    ([("follower.replication.throttled.replicas", SET, "x")], ErrorCode.INVALID_CONFIG,
     "Invalid value [x] for configuration follower.replication.throttled.replicas: "
     "follower.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
     "format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."),
    ([("min.compaction.lag.ms", SET, "10"), ("max.compaction.lag.ms", SET, "5")], ErrorCode.INVALID_CONFIG,
     "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
])
def test_invalid_topic_values_get_kafkas_error(ops, code, message):
    c = with_topic()
    before = len(c.data_batches())
    assert alter(c, incremental((2, "t", ops))) == {(2, "t"): (code, message)}
    assert len(c.data_batches()) == before


def test_resource_errors():
    c = with_topic()
    out = alter(c, incremental((2, "nope", [("retention.ms", SET, "1")]), (4, "77", [("a", SET, "1")]),
                               (4, "x", [("a", SET, "1")]), (9, "y", []), (2, "", [])))
    assert out[(2, "nope")] == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist.")
    assert out[(4, "77")] == (ErrorCode.BROKER_ID_NOT_REGISTERED, "No node with id 77 found.")
    assert out[(4, "x")] == (ErrorCode.INVALID_REQUEST, "Unable to parse broker name as a base 10 number.")
    assert out[(9, "y")] == (ErrorCode.UNSUPPORTED_VERSION, "Unknown resource type 9.")
    assert out[(2, "")] == (ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    dup = alter(c, incremental((2, "t", []), (2, "t", [])))
    assert dup == {(2, "t"): (ErrorCode.INVALID_REQUEST, "Duplicate resource.")}


def test_min_isr_change_writes_clear_elr_and_broker_level_is_refused_with_elr():
    c = with_topic()
    alter(c, incremental((2, "t", [("min.insync.replicas", SET, "2")])))
    assert [k for k in last_batch(c)] == [(rec.CONFIG_RECORD, 0), (rec.CLEAR_ELR_RECORD, 0)]
    alter(c, incremental((4, "", [("min.insync.replicas", SET, "2")])))
    assert [k for k in last_batch(c)] == [(rec.CONFIG_RECORD, 0), (rec.CLEAR_ELR_RECORD, 0)]
    out = alter(c, incremental((4, "1", [("min.insync.replicas", SET, "2")]), (4, "", [("min.insync.replicas", DELETE, None)])))
    assert out[(4, "1")] == (ErrorCode.INVALID_CONFIG, "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
    assert out[(4, "")] == (ErrorCode.INVALID_CONFIG, "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")


def test_validate_only_and_legacy_alter_replaces_the_set():
    c = with_topic(configs=[("retention.ms", "1000"), ("segment.ms", "100000")])
    before = len(c.data_batches())
    assert alter(c, incremental((2, "t", [("retention.ms", SET, "5")]), validate_only=True)) == {(2, "t"): (0, None)}
    assert len(c.data_batches()) == before
    legacy = AlterConfigsRequest(resources=[LegacyResource(resource_type=2, resource_name="t", configs=[
        LegacyConfig(name="retention.ms", value="2000")])])
    assert alter(c, legacy, 33, 2) == {(2, "t"): (0, None)}
    assert c.controller.image.configs.resource(2, "t") == {"retention.ms": "2000"}  # segment.ms deleted


def test_describe_topic_and_broker_sources_and_synonyms():
    c = with_topic(configs=[("retention.ms", "1000")])
    alter(c, incremental((4, "", [("log.cleaner.threads", SET, "3")])))
    image = c.controller.image
    node_id = c.controller.settings.node_id
    static = {"node.id": str(node_id), "log.retention.hours": "100", "sasl.jaas.config": "secret"}
    t, default, me, other, missing = describe(image, node_id, static, [
        (2, "t", None), (4, "", None), (4, str(node_id), None), (4, "99", None), (2, "nope", None)], True)
    by = {e.name: e for e in t.entries}
    assert (by["retention.ms"].value, by["retention.ms"].source) == ("1000", 1)
    # configSynonyms drops the leading synonyms not named log.retention.ms (Kafka's dropWhile)
    assert by["retention.ms"].synonyms == [("retention.ms", "1000", 1)]
    assert by["segment.bytes"].synonyms == [("log.segment.bytes", "1073741824", 5)]
    assert (by["segment.bytes"].value, by["segment.bytes"].source, by["segment.bytes"].config_type) == (
        "1073741824", 5, 3)
    assert [(e.name, e.value, e.source) for e in default.entries] == [
        ("log.cleaner.threads", "3", 3), ("min.insync.replicas", "1", 3)]  # the second from bootstrap (ELR)
    mine = {e.name: e for e in me.entries}
    assert (mine["log.cleaner.threads"].value, mine["log.cleaner.threads"].source) == ("3", 3)
    assert mine["log.retention.hours"].value == "100" and mine["log.retention.hours"].read_only
    assert mine["sasl.jaas.config"].value is None and mine["sasl.jaas.config"].sensitive
    assert other.error == ErrorCode.INVALID_REQUEST and missing.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_configs_survive_a_snapshot():
    from kraft_server.controller.image.metadata_image import MetadataImage
    c = with_topic(configs=[("retention.ms", "1000")])
    image = c.controller.image
    again = MetadataImage()
    for value in image.snapshot_records():
        again.replay(value)
    assert dict(again.configs) == dict(image.configs) and (2, "t", "retention.ms") in again.configs


def test_parse_follows_configdef():
    assert parse(TOPIC_DEFS["preallocate"], " TRUE ") is True
    with pytest.raises(ConfigError, match="Expected value to be either true or false"):
        parse(TOPIC_DEFS["preallocate"], "yes")
    with pytest.raises(ConfigError, match="Not a number of type INT"):
        parse(TOPIC_DEFS["segment.bytes"], "99999999999")


def test_create_topics_checks_configs_against_kafkas_definitions():
    c, _ = three()
    r = run(c, create_topics_op(CreateTopicsRequest(topics=[
        topic("bad", 1, 1, [("retention.ms", "soon")]), topic("odd", 1, 1, [("retention.msec", "1")]),
        topic("good", 1, 1, [("retention.ms", "1000")])]), 7))
    got = {t.name: (t.error_code, t.error_message) for t in r.topics}
    assert got["bad"] == (ErrorCode.INVALID_CONFIG,
                          "Invalid value soon for configuration retention.ms: Not a number of type LONG")
    assert got["odd"] == (ErrorCode.INVALID_CONFIG, "Unknown topic config name: retention.msec")
    assert got["good"][0] == 0 and set(c.controller.image.topics.by_name) >= {"good"}
    assert "bad" not in c.controller.image.topics.by_name


def test_broker_logger_levels_change_locally_and_write_nothing():
    import logging
    c = with_topic()
    before = len(c.data_batches())
    me = str(c.controller.settings.node_id)
    name = "kraft_server.controller.write_queue"
    out = alter(c, incremental((8, me, [(name, SET, "DEBUG")]), (8, "42", [(name, SET, "DEBUG")])))
    assert out[(8, me)] == (0, None)
    assert out[(8, "42")] == (ErrorCode.INVALID_REQUEST, f"Unexpected node id. Expected {me}, but received 42")
    assert logging.getLogger(name).level == logging.DEBUG
    (described,) = describe(c.controller.image, int(me), {}, [(8, me, [name])], False)
    assert [(e.name, e.value, e.source) for e in described.entries] == [(name, "DEBUG", 6)]
    alter(c, incremental((8, me, [(name, DELETE, None)])))
    assert logging.getLogger(name).level == logging.NOTSET
    assert len(c.data_batches()) == before


def test_envelope_carries_incremental_alter_configs():
    from wire.headers import decode_response
    from tests.unit.controller.test_controller_topics import enveloped

    c = with_topic()
    env, _ = enveloped(c, 44, 1, 77, incremental((2, "t", [("retention.ms", SET, "1000")])))
    assert env.error_code == 0
    corr, body = decode_response(bytes(env.response_data), 44, 1)
    assert corr.correlation_id == 77 and body.responses[0].error_code == 0
    assert c.controller.image.configs[(2, "t", "retention.ms")] == "1000"


def test_configs_image_index_follows_replay_and_topic_removal():
    from kraft_server.controller.image.configs import ConfigsImage
    from wire.messages import ConfigRecord
    img = ConfigsImage()
    img.replay(ConfigRecord(resource_type=2, resource_name="t", name="segment.ms", value="1"))
    img.replay(ConfigRecord(resource_type=2, resource_name="t", name="flush.ms", value="2"))
    img.replay(ConfigRecord(resource_type=4, resource_name="", name="a", value="3"))
    img.replay(ConfigRecord(resource_type=2, resource_name="t", name="segment.ms", value=None))
    assert img.resource(2, "t") == {"flush.ms": "2"} and dict(img) == {(2, "t", "flush.ms"): "2", (4, "", "a"): "3"}
    img.drop_topic("t")
    assert img.resource(2, "t") == {} and dict(img) == {(4, "", "a"): "3"}
    # names the type does not define are skipped (DefaultSupportedConfigChecker)
    img.replay(ConfigRecord(resource_type=2, resource_name="t", name="message.format.version", value="3.0"))
    img.replay(ConfigRecord(resource_type=2, resource_name="t", name="retention.ms", value="5"))
    assert img.resource(2, "t") == {"retention.ms": "5"}


def test_group_and_client_metrics_configs():
    c = with_topic()
    out = alter(c, incremental(
        (32, "g", [("consumer.session.timeout.ms", SET, "50000")]),
        (32, "h", [("consumer.session.timeout.ms", SET, "5000")]),
        (32, "i", [("no.such", SET, "1")]),
        (16, "sub", [("interval.ms", SET, "1000"), ("metrics", SET, "org.apache.kafka.producer."),
                     ("match", SET, "client_id=app.*")]),
        (16, "bad", [("interval.ms", SET, "10")]),
        (16, "odd", [("match", SET, "whoever=x")])))
    assert out[(32, "g")] == (0, None) and out[(16, "sub")] == (0, None)
    assert out[(32, "h")] == (ErrorCode.INVALID_CONFIG,
                              "consumer.session.timeout.ms must be greater than or equal to "
                              "group.consumer.min.session.timeout.ms")
    assert out[(32, "i")] == (ErrorCode.INVALID_CONFIG, "Unknown group config name: no.such")
    assert out[(16, "bad")] == (ErrorCode.INVALID_REQUEST,
                                "Invalid value 10 for interval.ms, interval must be between 100 and 3600000 (1 hour)")
    assert out[(16, "odd")] == (ErrorCode.INVALID_REQUEST, "Illegal client matching pattern: whoever=x")
    node_id = c.controller.settings.node_id
    group, sub = describe(c.controller.image, node_id, {}, [(32, "g", None), (16, "sub", None)], True)
    by = {e.name: e for e in group.entries}
    assert (by["consumer.session.timeout.ms"].value, by["consumer.session.timeout.ms"].source) == ("50000", 8)
    assert (by["consumer.heartbeat.interval.ms"].value, by["consumer.heartbeat.interval.ms"].source) == ("5000", 5)
    assert [(e.name, e.value, e.source) for e in sub.entries] == [
        ("interval.ms", "1000", 7), ("match", "client_id=app.*", 7), ("metrics", "org.apache.kafka.producer.", 7)]


def test_describe_refuses_a_request_naming_an_unknown_resource_type():
    c = with_topic()
    results = describe(c.controller.image, 1, {}, [(2, "t", None), (99, "x", None)], False)
    assert [(r.resource_type, r.error, r.message) for r in results] == [
        (2, ErrorCode.INVALID_REQUEST, "Unexpected resource type UNKNOWN for resource x"),
        (99, ErrorCode.INVALID_REQUEST, "Unexpected resource type UNKNOWN for resource x")]


def test_legacy_alter_refuses_broker_logger_and_duplicates_once():
    c = with_topic()
    legacy = AlterConfigsRequest(resources=[
        LegacyResource(resource_type=8, resource_name="1", configs=[]),
        LegacyResource(resource_type=8, resource_name="2", configs=[]),
        LegacyResource(resource_type=8, resource_name="2", configs=[]),
        LegacyResource(resource_type=8, resource_name="2", configs=[])])
    name, op = alter_configs_op(33, 2, legacy, node_id=1)
    answers = [(r.resource_name, r.error_code, r.error_message) for r in run(c, op).responses]
    assert answers == [("2", ErrorCode.INVALID_REQUEST, "Duplicate resource."),
                       ("1", ErrorCode.INVALID_REQUEST, "Unexpected resource type BROKER_LOGGER.")]
