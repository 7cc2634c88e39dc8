"""Three Apache Kafka controllers of the default release in place of ours (issue 40's side
by side): the same static quorum through the same proxies, the same broker-facing
settings, so that one seed's faults meet Kafka's decisions as they meet ours.

* Quorum: ``tests/chaos/cluster.py``'s ``ChaosCluster`` drives these members as it drives
  ours: each names itself at its real port and the others at the proxy link from it
  (``configure``), kill -9 is a SIGKILL of the JVM's process group, a restart starts
  the JVM again on its formatted log dir.
* Settings: the quorum timings of ``FAST_QUORUM`` and the broker-facing properties of
  ``controller_settings`` (session, heartbeat, the unclean election interval), the ELR
  feature at format through ``kafka-storage format --feature
  eligible.leader.replicas.version=N`` (Kafka 4.4 turns it on by default, so it is always
  given). Kafka has no fast fencing (``kraft.broker.fast.fencing.enable`` is ours): it
  is left out, and the report says "not applicable".
* Decisions: Kafka's controllers write the same ``__cluster_metadata`` record format in
  the same layout (``<log dir>/__cluster_metadata-0/*.log``), so ``metadata.py`` reads a
  Kafka controller's log dir as it reads ours.
"""
from __future__ import annotations

from pathlib import Path

from tests.chaos.members import KafkaMember
from tests.support.kraft_nodes import FAST_QUORUM

OURS_ONLY = ("kraft.broker.fast.fencing.enable",)  # properties Kafka's controllers do not have


def props(pairs) -> dict[str, str]:
    return dict(p.split("=", 1) for p in pairs)


def kafka_settings(extra, flags) -> tuple[dict[str, str], tuple[str, ...]]:
    """Our controllers' (properties, format flags) as Kafka's take them: the properties
    Kafka has, and the ``--feature`` flags (``kafka-storage`` spells them as ours does)."""
    return {k: v for k, v in props(extra).items() if k not in OURS_ONLY}, tuple(flags)


class KafkaControllerMember(KafkaMember):
    """A Kafka controller with ``extra`` properties (a dict), formatted with ``flags``."""

    def __init__(self, workdir: Path, node_id: int, cluster_id: str, extra=None, flags=()):
        super().__init__(workdir, node_id, cluster_id)
        self.extra, self.flags = dict(extra or {}), tuple(flags)
        self.advertised_port: int | None = None  # its door (BrokerCluster.start)

    def write_config(self, voters: str) -> Path:
        """server.properties for a static quorum with this view of the voters."""
        self.ctl.overrides.update(props(FAST_QUORUM))
        self.ctl.overrides.update(self.extra)
        self.ctl.overrides.update({"controller.quorum.voters": voters, "controller.quorum.bootstrap.servers": ""})
        if self.advertised_port is not None:
            self.ctl.overrides["advertised.listeners"] = f"CONTROLLER://127.0.0.1:{self.advertised_port}"
        return self.ctl.write_config()

    def configure(self, voters: str) -> None:
        self.write_config(voters)
        self.ctl.format(self.flags)
