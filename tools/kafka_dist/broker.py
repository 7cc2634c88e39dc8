"""An Apache Kafka broker-only process (``process.roles=broker``) attached to a
controller quorum (ours or Kafka's) through ``controller.quorum.bootstrap.servers``;
the default release unless ``version`` names another.

It is a ``KafkaController`` (same work directory layout, start/stop, log handling and
clean-up) with broker properties: one PLAINTEXT listener on a free loopback port,
internal topics at ``replication`` replicas, a small heap (-Xmx512m by default)."""
from __future__ import annotations

from pathlib import Path

from .controller import KafkaController

BROKER_ID_BASE = 100  # clear of the controllers' node ids


class KafkaBroker(KafkaController):
    def __init__(self, workdir: Path, node_id: int, cluster_id: str, controllers: str,
                 replication: int = 1, overrides: dict | None = None, version: str | None = None) -> None:
        super().__init__(workdir, node_id=node_id, cluster_id=cluster_id, format_mode="static",
                         overrides=overrides, version=version)
        self.controllers = controllers
        self.replication = replication

    def properties(self) -> dict[str, str]:
        rf = str(self.replication)
        props = {
            "process.roles": "broker",
            "node.id": str(self.node_id),
            "controller.listener.names": "CONTROLLER",
            "listeners": f"PLAINTEXT://{self.bootstrap}",
            "advertised.listeners": f"PLAINTEXT://{self.bootstrap}",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.quorum.bootstrap.servers": self.controllers,
            "log.dirs": str(self.data_dir),
            "offsets.topic.replication.factor": rf,
            "offsets.topic.num.partitions": "5",
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.io.threads": "2",
            "num.network.threads": "2",
            "background.threads": "2",
        }
        props.update(self.overrides)
        return props


def start_brokers(workdir: Path, n: int, cluster_id: str, controllers: str,
                  overrides: dict | None = None, version: str | None = None) -> list[KafkaBroker]:
    """``n`` started brokers (ids 100, 101, ...) of release ``version`` (default: the
    default release); the caller closes each one."""
    brokers = []
    try:
        for i in range(n):
            b = KafkaBroker(Path(workdir) / f"broker{i}", BROKER_ID_BASE + i, cluster_id, controllers,
                            replication=min(3, n), overrides=overrides, version=version)
            brokers.append(b)
            b.start()
    except BaseException:
        for b in brokers:
            b.close()
        raise
    return brokers


def bootstrap_servers(brokers) -> str:
    return ",".join(b.bootstrap for b in brokers)
