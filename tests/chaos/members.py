"""The two kinds of quorum member the harness drives alike: our process (``OurNode``)
and an Apache Kafka 4.3.1 controller (``KafkaController``, a JVM). Each is formatted
for a static quorum with its own view of the voters' addresses (``configure``), and
offers ``port``, ``data``, ``proc``, ``start``, ``stop`` (SIGTERM), ``kill`` (SIGKILL)
and ``log_tail``."""
from __future__ import annotations

import signal
from pathlib import Path

from tests.support.kraft_nodes import FAST_QUORUM, OurNode, set_property, storage_format
from tools.kafka_dist.controller import KafkaController


SIGTERM_EXITS = (0, -signal.SIGTERM, 128 + signal.SIGTERM, None)  # a JVM exits 143

# Apache Kafka 4.3.1's controller, SIGTERMed while still starting (before its metadata
# publishers are installed), fails its own shutdown with this fault and exits 1: the
# peer's bug, not the quorum's. Only this exact fault is excused.
KAFKA_STARTUP_SHUTDOWN_FAULT = "Encountered fatal fault: Attempted to remove publisher"


def kafka_stopped_cleanly(rc, log: str) -> bool:
    """A Kafka controller's exit on SIGTERM was clean, or was its known start-up fault."""
    return rc in SIGTERM_EXITS or (rc == 1 and KAFKA_STARTUP_SHUTDOWN_FAULT in log)


class OurMember(OurNode):
    def __init__(self, workdir: Path, node_id: int, cluster_id: str):
        super().__init__(workdir, node_id=node_id, extra=FAST_QUORUM)
        self.cluster_id = cluster_id
        self.advertised_port: int | None = None  # its door (ChaosCluster.start)

    def configure(self, voters: str) -> None:
        set_property(self.config, "controller.quorum.voters", voters)
        set_property(self.config, "controller.quorum.bootstrap.servers", "")
        if self.advertised_port is not None:
            set_property(self.config, "advertised.listeners", f"CONTROLLER://127.0.0.1:{self.advertised_port}")
        storage_format(self.config, self.cluster_id)

    def stopped_cleanly(self, rc) -> bool:
        return rc in SIGTERM_EXITS


class KafkaMember:
    def __init__(self, workdir: Path, node_id: int, cluster_id: str):
        self.ctl = KafkaController(workdir, node_id=node_id, cluster_id=cluster_id, format_mode="static")
        self.node_id, self.port = node_id, self.ctl.port
        self.advertised_port: int | None = None  # its door (ChaosCluster.start)

    @property
    def data(self) -> Path:
        return self.ctl.data_dir

    @property
    def proc(self):
        return self.ctl.proc

    def configure(self, voters: str) -> None:
        self.ctl.overrides.update(dict(p.split("=", 1) for p in FAST_QUORUM))
        self.ctl.overrides.update({"controller.quorum.voters": voters, "controller.quorum.bootstrap.servers": ""})
        if self.advertised_port is not None:
            self.ctl.overrides["advertised.listeners"] = f"CONTROLLER://127.0.0.1:{self.advertised_port}"
        self.ctl.format()

    def start(self) -> None:
        self.ctl.start()

    def stop(self, timeout: float = 15.0):
        return self.ctl.stop(graceful=True, timeout=timeout)

    def kill(self) -> None:
        self.ctl.stop(graceful=False)

    def stopped_cleanly(self, rc) -> bool:
        return kafka_stopped_cleanly(rc, self.ctl.log_text() or "")

    def log_tail(self, n: int = 60) -> str:
        return self.ctl.log_tail(n)
