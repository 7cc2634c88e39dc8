"""The two sides of the controller bench: a quorum of our controllers or of Kafka
4.3.1's, each node with the same properties (Kafka's defaults unless a row needs
otherwise), and Kafka 4.3.1 brokers attached to either, logging their heartbeat
answers (``BrokerLifecycleManager`` at DEBUG) for the failover row."""
from __future__ import annotations

import os
import re
import time
from datetime import datetime
from pathlib import Path

from wire.uuids import random_directory_id, uuid_to_str
from tests.support.kraft_nodes import OurNode, agreed_leader, set_property, storage_format
from tools.kafka_dist import ensure_dist
from tools.kafka_dist.broker import BROKER_ID_BASE, KafkaBroker
from tools.kafka_dist.controller import KafkaController, free_port

HEARTBEAT_OK = "The broker is RUNNING. Processing heartbeat response."
_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


class BenchNode(OurNode):
    """Our node at INFO (``OurNode`` runs at DEBUG for the tests)."""

    def start(self) -> None:
        import subprocess
        import sys
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "kraft_server", str(self.config)],
                                     cwd=Path(__file__).resolve().parents[2], stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True, env=dict(os.environ, KRAFT_LOG_LEVEL="INFO"))
        log.close()


class Side:
    """``n`` controllers of one kind (formatted, not started); ``props`` are set on each."""

    def __init__(self, kind: str, workdir: Path, cluster_id: str, n: int, props: dict[str, str],
                 production_jvm: bool = True) -> None:
        self.kind, self.workdir, self.cluster_id = kind, workdir, cluster_id
        self.props, self.production_jvm = props, production_jvm
        workdir.mkdir(parents=True, exist_ok=True)
        if kind == "ours":
            self.nodes = [BenchNode(_mkdir(workdir / f"c{i}"), node_id=i,
                                    extra=tuple(f"{k}={v}" for k, v in props.items()))
                          for i in range(1, n + 1)]
            ports = {node.node_id: node.port for node in self.nodes}
        else:
            ports = {i: free_port() for i in range(1, n + 1)}
        quorum = ",".join(f"127.0.0.1:{p}" for p in ports.values())
        voters = ",".join(f"{i}@127.0.0.1:{p}:{uuid_to_str(random_directory_id())}" for i, p in ports.items())
        self.quorum = quorum
        if kind == "ours":
            for node in self.nodes:
                set_property(node.config, "controller.quorum.bootstrap.servers", quorum)
                storage_format(node.config, cluster_id, "--initial-controllers", voters)
        else:
            self.nodes = [KafkaController(workdir / f"c{i}", node_id=i, port=p, cluster_id=cluster_id,
                                          format_mode="initial-controllers", initial_controllers=voters,
                                          bootstrap_servers=quorum, overrides=props,
                                          fast_jvm=not production_jvm)
                          for i, p in ports.items()]
            for node in self.nodes:
                node.format()

    def observer(self, node_id: int):
        """A node of this kind with the same properties, formatted with
        ``--no-initial-controllers`` and the quorum's bootstrap servers (not started)."""
        workdir = _mkdir(self.workdir / f"observer{node_id}")
        if self.kind == "ours":
            node = BenchNode(workdir, node_id=node_id, extra=tuple(f"{k}={v}" for k, v in self.props.items()))
            set_property(node.config, "controller.quorum.bootstrap.servers", self.quorum)
            storage_format(node.config, self.cluster_id, "--no-initial-controllers")
            return node
        node = KafkaController(workdir, node_id=node_id, port=free_port(), cluster_id=self.cluster_id,
                               format_mode="no-initial-controllers", bootstrap_servers=self.quorum,
                               overrides=self.props, fast_jvm=not self.production_jvm)
        node.format()
        return node

    def start(self, node=None) -> float:
        """Start every node (or one); returns the monotonic time just before."""
        t0 = time.monotonic()
        for n in ([node] if node is not None else self.nodes):
            n.start()
        return t0

    def leader(self, exclude=(), timeout: float = 120.0):
        return agreed_leader(self.nodes, timeout=timeout, exclude=exclude)[0]

    def kill(self, node) -> None:
        if self.kind == "ours":
            node.kill()
        else:
            node.stop(graceful=False)

    def stop(self, node) -> None:
        node.stop()

    def close(self) -> None:
        for n in self.nodes:
            if self.kind == "ours":
                n.stop()
            else:
                n.close()


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def broker_log4j(workdir: Path) -> Path:
    """The distribution's server logging plus heartbeat answers at DEBUG."""
    base = (ensure_dist() / "config" / "log4j2.yaml").read_text()
    extra = ("      - name: org.apache.kafka.server.BrokerLifecycleManager\n"
             "        level: DEBUG\n")
    path = workdir / "broker-log4j2.yaml"
    path.write_text(base.rstrip("\n") + "\n" + extra)
    return path


def start_brokers(workdir: Path, n: int, cluster_id: str, quorum: str) -> list[KafkaBroker]:
    log4j = broker_log4j(_mkdir(workdir))
    brokers = []
    try:
        for i in range(n):
            b = KafkaBroker(workdir / f"broker{i}", BROKER_ID_BASE + i, cluster_id, quorum, replication=min(3, n))
            b.env["KAFKA_LOG4J_OPTS"] = f"-Dlog4j2.configurationFile={log4j}"
            brokers.append(b)
            b.start()
    except BaseException:
        for b in brokers:
            b.close()
        raise
    return brokers


def log_time(line: str) -> float | None:
    """The wall time (s) a Kafka log line starts with, or None."""
    m = _STAMP.match(line)
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() if m else None


def heartbeat_answers(broker, since_wall: float, from_byte: int = 0) -> list[float]:
    """Wall-clock times (s) of the heartbeat answers ``broker`` logged after ``since_wall``."""
    try:
        with open(broker.log_path, "rb") as f:
            f.seek(from_byte)
            text = f.read().decode(errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        if HEARTBEAT_OK in line and (t := log_time(line)) is not None and t >= since_wall:
            out.append(t)
    return out
