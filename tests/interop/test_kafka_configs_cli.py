"""``kafka-configs`` of Apache Kafka (the default release) against a quorum of ours with
a real broker of that release on it, compared with the same commands against Kafka's own controller
(issue 26, configs): a topic config set through the broker (an Envelope carrying
IncrementalAlterConfigs) is a ConfigRecord the broker replays (its own DescribeConfigs
shows it); the cluster-wide broker default likewise; the reassignment throttles
``kafka-reassign-partitions --throttle`` sets are accepted; an invalid value gets
Kafka's error text; ``--bootstrap-controller`` describes the cluster default and the
controller's own broker config (DescribeConfigs answered by our controller) as Kafka's
controller prints them, and a DescribeConfigs v4 of the topic sent to each controller
(the admin client will not send it to controllers) gets the same answer. One cluster of each kind per module: ours for every test, Kafka's for
the comparison (slow)."""
from __future__ import annotations

import json
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import OurNode, _roundtrip, wait_for
from tools.kafka_dist import KAFKA_VERSION
from tools.kafka_dist.controller import KafkaController, run_tool

pytestmark = pytest.mark.java
CLUSTER = "Q29uZmlnc09uT3VyUXVvcnVt"
TOPIC = "configured"
# Kafka's controller's DescribeConfigs v4 answer for the topic after
# ``alter_and_describe_topic`` (``python -m tests.interop.test_kafka_configs_cli capture``)
CAPTURED = Path(__file__).resolve().parents[1] / "data" / "configs" / f"kafka-{KAFKA_VERSION}-describe-topic.json"


@pytest.fixture(scope="module", autouse=True)
def _need_jdk():
    need_jdk()


def configs(*args: str, check: bool = True):
    return run_tool("kafka-configs", *args, timeout=120, check=check)


def prepare(broker: str) -> None:
    run_tool("kafka-topics", "--bootstrap-server", broker, "--create", "--topic", TOPIC,
             "--partitions", "2", "--replication-factor", "1", timeout=120)


def entries(text: str) -> dict[str, str]:
    """``name -> the rest of its line`` from kafka-configs --describe output."""
    return dict(re.findall(r"^  (\S+?)=(.*)$", text, re.M))


@contextmanager
def one_broker(tmp, controller, start, stop):
    """``start()`` the controller, then one broker on it with the topic made; yields
    (controller bootstrap, broker bootstrap); stops both."""
    brokers = []
    try:
        start()
        brokers = start_brokers(tmp, 1, CLUSTER, controller.bootstrap)
        prepare(brokers[0].bootstrap)
        yield controller.bootstrap, brokers[0].bootstrap
    finally:
        for b in brokers:
            b.close()
        stop()


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ours")
    (tmp / "node").mkdir()
    node = OurNode(tmp / "node", node_id=1)
    node.format_with_ours(CLUSTER)

    def start():
        node.start()
        node.wait_leader()
    with one_broker(tmp, node, start, node.stop) as addresses:
        yield addresses


@contextmanager
def kafka_cluster(tmp: Path):
    ctl = KafkaController(tmp / "kafka", node_id=1, cluster_id=CLUSTER)
    with one_broker(tmp, ctl, lambda: ctl.start_ready(timeout=120), ctl.close) as addresses:
        yield addresses


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    with kafka_cluster(tmp_path_factory.mktemp("theirs")) as addresses:
        yield addresses


def describe_raw(controller: str, resource_type: int, name: str) -> list[tuple]:
    from wire.messages import DescribeConfigsRequest
    from wire.messages.describe_configs_request import DescribeConfigsResource
    body = _roundtrip(int(controller.rpartition(":")[2]), DescribeConfigsRequest(
        include_synonyms=True, include_documentation=False, resources=[DescribeConfigsResource(
            resource_type=resource_type, resource_name=name, configuration_keys=None)]), 4)
    (result,) = body.results
    assert result.error_code == 0, result
    return sorted((c.name, c.value, c.read_only, c.config_source, c.is_sensitive, c.config_type,
                   tuple((s.name, s.value, s.source) for s in c.synonyms)) for c in result.configs)


def alter_and_describe_topic(controller: str, broker: str) -> str:
    out = configs("--bootstrap-server", broker, "--alter", "--entity-type", "topics", "--entity-name", TOPIC,
                  "--add-config", "retention.ms=123456,leader.replication.throttled.replicas=[0:100,1:100]")
    assert f"Completed updating config for topic {TOPIC}." in out.stdout
    want = "retention.ms=123456 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=123456}"

    def broker_sees_it():  # the broker replayed the ConfigRecord into its own log config
        text = configs("--bootstrap-server", broker, "--describe", "--entity-type", "topics",
                       "--entity-name", TOPIC).stdout
        return want in text and text
    return wait_for(broker_sees_it, 60, "the broker's view of the topic config")


def test_topic_config_through_the_broker_is_replayed_by_it(ours):
    controller, broker = ours
    by_broker = alter_and_describe_topic(controller, broker)
    assert "leader.replication.throttled.replicas=0:100,1:100" in by_broker
    ours = describe_raw(controller, 2, TOPIC)
    assert {c[0]: c for c in ours}["retention.ms"][1:4] == ("123456", False, 1)
    # as Kafka's controller answered it (captured; the slow test compares live)
    assert ours == [tuple(tuple(map(tuple, x)) if isinstance(x, list) else x for x in row)
                    for row in json.loads(CAPTURED.read_text())]
    out = configs("--bootstrap-server", broker, "--alter", "--entity-type", "topics", "--entity-name", TOPIC,
                  "--delete-config", "retention.ms")
    assert out.returncode == 0
    wait_for(lambda: "retention.ms=" not in configs("--bootstrap-server", broker, "--describe", "--entity-type",
                                                     "topics", "--entity-name", TOPIC).stdout, 60, "deleted")
    # a legacy AlterConfigs v2 sent to the broker (forwarded in an Envelope) replaces the
    # topic's whole set (the admin tools only send IncrementalAlterConfigs)
    from wire.messages import AlterConfigsRequest
    from wire.messages.alter_configs_request import AlterableConfig, AlterConfigsResource
    def legacy(**values):
        answer = _roundtrip(int(broker.rpartition(":")[2]), AlterConfigsRequest(validate_only=False, resources=[
            AlterConfigsResource(resource_type=2, resource_name=TOPIC, configs=[
                AlterableConfig(name=k.replace("_", "."), value=v) for k, v in values.items()])]), 2)
        assert [(r.resource_name, r.error_code) for r in answer.responses] == [(TOPIC, 0)]
        wait_for(lambda: {k: v.split(" ")[0] for k, v in entries(configs(
            "--bootstrap-server", broker, "--describe", "--entity-type", "topics", "--entity-name",
            TOPIC).stdout).items()} == {k.replace("_", "."): v for k, v in values.items()}, 60, f"only {values}")
    legacy(segment_ms="3600000")
    legacy()  # none left: the next test starts from a topic without configs


def test_invalid_value_gets_kafkas_error_text(ours):
    controller, broker = ours
    bad = configs("--bootstrap-server", broker, "--alter", "--entity-type", "topics", "--entity-name", TOPIC,
                  "--add-config", "retention.ms=abc", check=False)
    assert bad.returncode != 0
    assert "InvalidConfigurationException: Invalid value abc for configuration retention.ms: " \
           "Not a number of type LONG" in bad.stdout + bad.stderr
    unknown = configs("--bootstrap-controller", controller, "--alter", "--entity-type", "topics",
                      "--entity-name", TOPIC, "--add-config", "retention.msec=1", check=False)
    assert "Unknown topic config name: retention.msec" in unknown.stdout + unknown.stderr


@pytest.mark.slow  # a variant of the topic config through a broker
def test_cluster_default_and_broker_throttle_rate(ours):
    controller, broker = ours
    out = configs("--bootstrap-server", broker, "--alter", "--entity-type", "brokers", "--entity-default",
                  "--add-config", "log.cleaner.threads=2")
    assert "Completed updating default config for brokers in the cluster." in out.stdout
    wait_for(lambda: "log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
             "log.cleaner.threads=2}" in configs("--bootstrap-server", broker, "--describe", "--entity-type",
                                                  "brokers", "--entity-default").stdout, 60, "the default")
    by_controller = configs("--bootstrap-controller", controller, "--describe", "--entity-type", "brokers",
                            "--entity-default").stdout
    assert "log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=2}" \
        in by_controller
    own = configs("--bootstrap-controller", controller, "--describe", "--entity-type", "brokers",
                  "--entity-name", "1", "--all").stdout
    assert own.startswith("All configs for broker 1 are:") and "  node.id=1 sensitive=false " \
        "synonyms={STATIC_BROKER_CONFIG:node.id=1}" in own
    assert "log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.threads=2, " \
        "DEFAULT_CONFIG:log.cleaner.threads=1}" in own
    # what kafka-reassign-partitions --throttle sets on each broker
    out = configs("--bootstrap-server", broker, "--alter", "--entity-type", "brokers", "--entity-name", "100",
                  "--add-config", "leader.replication.throttled.rate=1000000,"
                                  "follower.replication.throttled.rate=1000000")
    assert "Completed updating config for broker 100." in out.stdout
    wait_for(lambda: "leader.replication.throttled.rate=1000000" in configs(
        "--bootstrap-server", broker, "--describe", "--entity-type", "brokers", "--entity-name", "100").stdout,
        60, "the broker's throttle")


@pytest.mark.slow  # starts Kafka's controller and a second broker (~75 s)
def test_describe_through_the_controller_matches_kafkas_controller(ours, theirs):
    for cluster in (ours, theirs):
        alter_and_describe_topic(*cluster)
    assert describe_raw(ours[0], 2, TOPIC) == describe_raw(theirs[0], 2, TOPIC)
    printed = []
    for controller, broker in (ours, theirs):
        configs("--bootstrap-server", broker, "--alter", "--entity-type", "brokers", "--entity-default",
                "--add-config", "log.cleaner.delete.retention.ms=100000")
        printed.append(entries(wait_for(lambda: "log.cleaner.delete.retention.ms=100000" in (text := configs(
            "--bootstrap-controller", controller, "--describe", "--entity-type", "brokers",
            "--entity-default").stdout) and text, 60, "the default through the controller")))
    assert {k: printed[0][k] for k in printed[1]} == printed[1]  # ours may hold more (earlier tests)
    own = [entries(configs("--bootstrap-controller", controller, "--describe", "--entity-type", "brokers",
                           "--entity-name", "1", "--all").stdout) for controller, _ in (ours, theirs)]
    assert own[0].keys() == own[1].keys(), sorted(set(own[0]) ^ set(own[1]))
    # equal but where the two property files differ (ports, paths, thread counts) and for
    # the default only ours holds (an earlier test); the dynamic default set above on both shows
    static = {k for side in own for k, line in side.items() if "STATIC_BROKER_CONFIG:" in line}
    static.add("log.cleaner.threads")
    assert "DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.delete.retention.ms=100000" in own[1]["log.cleaner.delete.retention.ms"]
    assert {k: v for k, v in own[0].items() if k not in static} == \
        {k: v for k, v in own[1].items() if k not in static}
    assert own[0]["broker.id"] == "1 sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.id=1, " \
        "DEFAULT_CONFIG:broker.id=-1}"


def test_config_definitions_match_the_pinned_jars():
    """``kafka_config_defs.json`` is what ``python -m tools.kafka_configdefs`` reads from
    the default release's jars today."""
    from tools.kafka_configdefs.__main__ import TARGET, dump
    assert dump() == TARGET.read_text(encoding="utf-8")


def capture() -> None:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp, kafka_cluster(Path(tmp)) as (controller, broker):
        alter_and_describe_topic(controller, broker)
        rows = describe_raw(controller, 2, TOPIC)
    CAPTURED.parent.mkdir(parents=True, exist_ok=True)
    CAPTURED.write_text("[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n")
    print(f"wrote {CAPTURED}")


if __name__ == "__main__" and sys.argv[1:] == ["capture"]:
    capture()
