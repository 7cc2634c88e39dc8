"""An Apache Kafka 4.3.1 broker (combined broker+controller) on free loopback ports: a
real Kafka source for the Spark pipeline's tests while our node does not serve
``__cluster_metadata`` itself."""
from __future__ import annotations

from tools.kafka_dist.controller import KafkaController, free_port


def kafka_broker(workdir) -> tuple[KafkaController, str]:
    """A started combined node and its PLAINTEXT bootstrap address; the caller closes it."""
    client_port = free_port()
    node = KafkaController(workdir, overrides={
        "process.roles": "broker,controller",
        "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:{port}" % client_port,
        "advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % client_port,
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
    })
    node.overrides["listeners"] = node.overrides["listeners"].format(port=node.port)
    try:
        node.start_ready(timeout=120)
    except BaseException:
        node.close()
        raise
    return node, f"127.0.0.1:{client_port}"
