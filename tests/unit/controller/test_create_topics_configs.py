"""The configs a CreateTopics answer lists for a new topic (v5+), as Kafka 4.3.1's
controller computes them (``KafkaConfigSchema.resolveEffectiveTopicConfigs``): every
topic config, sorted, the request's own first, then this controller's dynamic config,
the cluster default, its properties file (each layer with every synonym, hours and
minutes converted), else the default; the same for validateOnly; none for an error.
The live comparison with a Kafka controller is ``tests/interop/test_admin_answers_vs_kafka.py``."""
from __future__ import annotations

from kraft_server.controller.admin_requests import create_topics_op
from kraft_server.controller.configs.definitions import TOPIC_DEFS
from wire.messages import CreateTopicsRequest

from tests.unit.controller.test_controller_configs import SET, alter, incremental
from tests.unit.controller.test_controller_topics import run, three, topic

DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 1, 2, 3, 4, 5


def _layered():
    """Three brokers; static, cluster-default and per-node broker configs that topic
    configs fall back to."""
    c, _ = three()
    settings = c.controller.settings
    settings.static_configs = {"log.retention.hours": "48", "log.roll.ms": "3600000", "log.segment.bytes": "4194304"}
    assert alter(c, incremental((4, "", [("log.segment.bytes", SET, "2097152"),
                                         ("log.retention.minutes", SET, "30")]),
                                (4, str(settings.node_id), [("log.cleaner.delete.retention.ms", SET, "1000")]))) == \
        {(4, ""): (0, None), (4, str(settings.node_id)): (0, None)}
    return c


def _create(c, *topics, validate_only=False, version=7):
    req = CreateTopicsRequest(topics=list(topics), validate_only=validate_only)
    return run(c, create_topics_op(req, version, settings=c.controller.settings))


def _listed(result):
    return {e.name: (e.value, e.config_source, e.read_only, e.is_sensitive) for e in result.configs}


def test_every_topic_config_with_its_value_and_source_layer_by_layer():
    c = _layered()
    r = _create(c, topic("t", 2, 3, configs=[("cleanup.policy", "compact"), ("max.message.bytes", "2000000")]))
    (t,) = r.topics
    assert (t.error_code, t.num_partitions, t.replication_factor) == (0, 2, 3)
    names = [e.name for e in t.configs]
    assert names == sorted(n for n, d in TOPIC_DEFS.items() if not d.internal)
    got = _listed(t)
    assert got["cleanup.policy"] == ("compact", DYNAMIC_TOPIC, False, False)
    assert got["max.message.bytes"] == ("2000000", DYNAMIC_TOPIC, False, False)
    assert got["delete.retention.ms"] == ("1000", DYNAMIC_BROKER, False, False)
    assert got["segment.bytes"] == ("2097152", DYNAMIC_DEFAULT, False, False)  # the default beats the file
    # layer first, then synonym: the default's minutes beat the file's hours
    assert got["retention.ms"] == ("1800000", DYNAMIC_DEFAULT, False, False)
    assert got["segment.ms"] == ("3600000", STATIC, False, False)
    assert got["flush.ms"] == ("9223372036854775807", DEFAULT, False, False)
    assert got["unclean.leader.election.enable"] == ("false", DEFAULT, False, False)
    # written as a cluster default when ELR is on, as Kafka's bootstrap does
    assert got["min.insync.replicas"] == ("1", DYNAMIC_DEFAULT, False, False)


def test_validate_only_answers_the_same_and_errors_list_nothing():
    c = _layered()
    offset = c.controller.image.offset
    checked = _create(c, topic("v", 1, 1, configs=[("retention.ms", "5000")]), topic("bad", 1, 1, configs=[
        ("retention.ms", "soon")]), validate_only=True)
    v, bad = checked.topics
    assert v.error_code == 0 and _listed(v)["retention.ms"] == ("5000", DYNAMIC_TOPIC, False, False)
    assert len(v.configs) == len([d for d in TOPIC_DEFS.values() if not d.internal])
    assert bad.error_code != 0 and bad.configs == [] and (bad.num_partitions, bad.replication_factor) == (-1, -1)
    c.run_for(50)
    assert "v" not in c.controller.image.topics.by_name
    assert c.controller.image.offset - offset < 5  # nothing but NoOps written
    made = _create(c, topic("v", 1, 1, configs=[("retention.ms", "5000")]))
    assert _listed(made.topics[0]) == _listed(v)


def test_an_internal_config_is_listed_only_when_set():
    from kraft_server.controller.configs.describe import NodeConfig
    from kraft_server.controller.configs.effective import effective_topic_configs

    c, _ = three()
    plain = _create(c, topic("a", 1, 1)).topics[0]
    assert plain.error_code == 0 and "internal.segment.bytes" not in _listed(plain)
    given = _create(c, topic("b", 1, 1, configs=[("internal.segment.bytes", "1048576")])).topics[0]
    assert given.error_code == 0  # Kafka takes it (LogConfig.configNames holds internal ones)
    assert _listed(given)["internal.segment.bytes"] == ("1048576", DYNAMIC_TOPIC, False, False)
    node = NodeConfig(c.controller.image, 1, {"log.retention.hours": "x"})
    listed = {e.name: (e.value, e.source) for e in effective_topic_configs(node, {})}
    assert listed["retention.ms"] == ("0", STATIC)  # ConfigSynonym: an unreadable hours value is 0
