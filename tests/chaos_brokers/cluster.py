"""Three controllers of ours and four Apache Kafka brokers of the default release, every
link between them through the chaos proxies, with the brokers' process faults.

* Controllers: ``tests/chaos/cluster.py``'s static quorum (each names the others at the
  proxy link from it), with the broker-facing settings below, ELR on or off (the
  ``eligible.leader.replicas.version`` feature at format) and fast fencing on or off
  (``kraft.broker.fast.fencing.enable``).
* Brokers: each names the controllers in its own ``controller.quorum.voters``, at the
  links from it to each controller, so its heartbeats, registration, metadata fetches
  and forwarded requests to controller ``c`` cross link ``(broker, c)``. A static quorum,
  not ``controller.quorum.bootstrap.servers``: with a dynamic quorum a broker learns the
  controllers' addresses from the voter set, one address per controller for every
  broker, and its links could not be cut one broker at a time.
* Each controller's advertised ``CONTROLLER`` address is a door (``tests/chaos/doors.py``,
  ``tests/chaos/cluster.py``): Kafka's nodes dial the leader at the endpoint it advertises
  (KIP-853) once they know it, and the door hands them to the pair's link.
* Inter-broker traffic goes over a ``REPLICATION`` listener advertised at the broker's
  door (``tests/chaos/doors.py``); clients use ``PLAINTEXT`` directly, so a broker cut
  off from the controllers or from the other brokers still serves clients.
* Each broker's log directory is its own tmpfs of ``DISK_MB`` (``small_disk.py``), for the
  ``disk_full`` fault; where none can be mounted it is a plain directory.
* A broker the harness expects to stop on its own (SIGTERM, a full disk) is ``leaving``
  until it has: its exit is then no crash, and its door shuts (``note_exit``).
* ``controllers="kafka"``: three Apache Kafka controllers in place of ours
  (``kafka_controllers.py``), with the same settings but fast fencing, which they lack.
"""
from __future__ import annotations

import os
import signal
import threading
import uuid
from functools import partial
from pathlib import Path

from kraft_server.log.meta_properties import MetaProperties, write_meta_properties
from tests.chaos.cluster import ChaosCluster
from tests.chaos.doors import Doors
from tests.chaos.members import OurMember
from tests.support.kafka_brokers import KafkaBroker
from tests.support.kraft_nodes import set_property, storage_format
from tools.kafka_dist.controller import free_port, random_cluster_id

from .kafka_controllers import KafkaControllerMember, kafka_settings
from .small_disk import SmallDisk

BROKER_IDS = (100, 101, 102, 103)
CONTROLLERS = ("ours", "kafka")  # whose controllers decide
SESSION_MS = 6000  # broker.session.timeout.ms
HEARTBEAT_MS = 1000  # broker.heartbeat.interval.ms
REPLICA_LAG_MS = 4000  # replica.lag.time.max.ms: a silent follower leaves the ISR after this
DISK_MB = 256  # a broker's tmpfs: a long run writes tens of MB; filling it costs only while full


class Controller(OurMember):
    """Our controller with ``extra`` properties, formatted with ``flags``."""

    def __init__(self, workdir: Path, node_id: int, cluster_id: str, extra=(), flags=()):
        super().__init__(workdir, node_id, cluster_id)
        for prop in extra:
            key, value = prop.split("=", 1)
            set_property(self.config, key, value)
        self.flags = tuple(flags)
        self.advertised_port: int | None = None  # its door (BrokerCluster.start)

    def configure(self, voters: str) -> None:
        set_property(self.config, "controller.quorum.voters", voters)
        set_property(self.config, "controller.quorum.bootstrap.servers", "")
        if self.advertised_port is not None:
            set_property(self.config, "advertised.listeners", f"CONTROLLER://127.0.0.1:{self.advertised_port}")
        storage_format(self.config, self.cluster_id, *self.flags)


def controller_settings(elr: bool, fast_fencing: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(properties, format flags) of our controllers for one configuration."""
    extra = (f"broker.session.timeout.ms={SESSION_MS}", f"broker.heartbeat.interval.ms={HEARTBEAT_MS}",
             f"kraft.broker.fast.fencing.enable={str(fast_fencing).lower()}",
             "unclean.leader.election.interval.ms=2000")
    return extra, ("--feature", f"eligible.leader.replicas.version={1 if elr else 0}")


def controller_member(controllers: str, elr: bool, fast_fencing: bool):
    """The quorum member factory ``(workdir, id, cluster_id)`` of ``controllers``."""
    extra, flags = controller_settings(elr, fast_fencing)
    if controllers == "ours":
        return partial(Controller, extra=extra, flags=flags)
    if controllers == "kafka":
        extra, flags = kafka_settings(extra, flags)
        return partial(KafkaControllerMember, extra=extra, flags=flags)
    raise ValueError(f"controllers must be one of {CONTROLLERS}, not {controllers!r}")


class BrokerCluster:
    def __init__(self, workdir: Path, elr: bool = True, fast_fencing: bool = True, disk_mb: int = DISK_MB,
                 controllers: str = "ours") -> None:
        self.workdir = Path(workdir)
        self.cluster_id = random_cluster_id()
        self.broker_ids = list(BROKER_IDS)
        self.inter_ports = {b: free_port() for b in self.broker_ids}  # each broker's real REPLICATION port
        self.controllers = ChaosCluster(self.workdir / "controllers", self.cluster_id, 3,
                                        member=controller_member(controllers, elr, fast_fencing),
                                        peers=self.inter_ports)
        self.proxies = self.controllers.proxies
        self.doors = Doors(self.proxies, self.broker_ids)
        self.brokers: dict[int, KafkaBroker] = {}
        for b in self.broker_ids:
            self.brokers[b] = KafkaBroker(self.workdir / f"broker{b}", b, self.cluster_id, "", replication=3)
        self.stopped: set[int] = set()  # brokers SIGSTOPped
        self.down: set[int] = set()  # brokers killed, not started again yet
        self.leaving: set[int] = set()  # brokers expected to stop on their own (SIGTERM, a full disk)
        self.locks = {b: threading.RLock() for b in self.broker_ids}
        self.disks = {b: SmallDisk(self.brokers[b].data_dir, disk_mb) for b in self.broker_ids}

    @property
    def controller_ids(self) -> list[int]:
        return self.controllers.ids

    def bootstrap(self) -> str:
        return ",".join(self.brokers[b].bootstrap for b in self.broker_ids)

    def _configure(self, b: int) -> None:
        broker = self.brokers[b]
        voters = ",".join(f"{c}@127.0.0.1:{self.proxies.port(b, c)}" for c in self.controller_ids)
        broker.overrides.update({
            "controller.quorum.voters": voters,
            "controller.quorum.bootstrap.servers": "",
            "listeners": f"PLAINTEXT://{broker.bootstrap},REPLICATION://127.0.0.1:{self.inter_ports[b]}",
            "advertised.listeners": f"PLAINTEXT://{broker.bootstrap},REPLICATION://127.0.0.1:{self.doors.port(b)}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "REPLICATION",
            "broker.heartbeat.interval.ms": str(HEARTBEAT_MS),
            "replica.lag.time.max.ms": str(REPLICA_LAG_MS),
            "replica.socket.timeout.ms": "5000",
            "initial.broker.registration.timeout.ms": "180000",
            "auto.create.topics.enable": "false",
        })
        # formatted as kafka-storage would a broker's log dir, without a JVM for it
        broker.data_dir.mkdir(parents=True, exist_ok=True)
        write_meta_properties(broker.data_dir, MetaProperties(self.cluster_id, b, directory_id=uuid.uuid4()))
        broker.formatted = True

    def start(self) -> None:
        self.controllers.start()
        self.doors.start()
        for b in self.broker_ids:
            self.disks[b].mount()
            self._configure(b)
            self.brokers[b].start()

    # -- the brokers' process faults (one at a time per broker)
    def running(self, b: int) -> bool:
        return self.brokers[b].running

    def kill9(self, b: int) -> None:
        with self.locks[b]:
            self.stopped.discard(b)
            self.down.add(b)
            self.doors.shut(b)
            self.brokers[b].stop(graceful=False)

    def pause(self, b: int) -> None:
        with self.locks[b]:
            if self.running(b):
                os.killpg(self.brokers[b].proc.pid, signal.SIGSTOP)
                self.stopped.add(b)

    def resume(self, b: int) -> None:
        with self.locks[b]:
            if b in self.stopped and self.running(b):
                os.killpg(self.brokers[b].proc.pid, signal.SIGCONT)
            self.stopped.discard(b)

    def terminate(self, b: int) -> bool:
        """SIGTERM, not waiting: Kafka's controlled shutdown (the controller moves the
        broker's leaderships away, then lets it stop). False if it was not running."""
        with self.locks[b]:
            if not self.running(b):
                return False
            self.leaving.add(b)
            os.killpg(self.brokers[b].proc.pid, signal.SIGTERM)
            return True

    def note_exit(self, b: int) -> int | None:
        """The return code of a leaving broker that has stopped (now down, its door
        shut), else None."""
        with self.locks[b]:
            if b not in self.leaving or self.running(b) or self.brokers[b].proc is None:
                return None
            self.down.add(b)
            self.doors.shut(b)
            return self.brokers[b].proc.returncode

    def fill_disk(self, b: int) -> int:
        """Fill the broker's log directory (its exit is expected from now); bytes written."""
        with self.locks[b]:
            self.leaving.add(b)
        return self.disks[b].fill()

    def free_disk(self, b: int) -> None:
        self.disks[b].free()

    def ensure_running(self, b: int) -> None:
        with self.locks[b]:
            self.resume(b)
            if not self.running(b):
                self.doors.open(b)
                self.brokers[b].start()
            self.down.discard(b)
            self.leaving.discard(b)

    def unavailable(self) -> set[int]:
        """Brokers the harness has killed or stopped."""
        return set(self.down) | set(self.stopped)

    def unknown_diallers(self) -> list[str]:
        return self.doors.strangers() + self.controllers.doors.strangers()

    def heal(self) -> None:
        """Every link up, every disk freed, every controller and broker running."""
        self.controllers.heal()
        for b in self.broker_ids:
            self.free_disk(b)
            self.ensure_running(b)

    def crashed(self) -> dict[str, int]:
        """Processes that exited on their own: name -> return code."""
        out = {f"controller {i}": rc for i, rc in self.controllers.crashed().items()}
        for b, broker in self.brokers.items():
            if b not in self.down | self.leaving and broker.proc is not None and broker.proc.poll() is not None:
                out[f"broker {b}"] = broker.proc.returncode
        return out

    def close(self) -> None:
        try:
            for b in self.broker_ids:
                self.resume(b)
                self.brokers[b].close()
            self.doors.close()
            self.controllers.close()
        finally:
            for disk in self.disks.values():
                disk.unmount()
