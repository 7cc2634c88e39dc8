"""A static quorum of our processes (and Apache Kafka 4.3.1 controllers for the ids in
``kafka_ids``) whose peers dial each other through the proxies (``proxy.py``), with
the process faults: kill -9, SIGSTOP/SIGCONT, clean restart.

Each node's ``controller.quorum.voters`` names itself at its real port and every
other voter at the proxy link from it to that voter, and each node advertises a door
(``doors.py``) that hands a peer dialling the leader's advertised endpoint (as Kafka's
nodes do) to that pair's link. Clients of the harness (the writer, the monitor, the
checker) reach every node directly."""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from .doors import NODE_DIALLER, Doors
from .members import KafkaMember, OurMember
from .proxy import Proxies


class ChaosCluster:
    def __init__(self, workdir: Path, cluster_id: str, n: int, kafka_ids=(), member=OurMember, peers=None):
        """``member`` makes our nodes (``(workdir, id, cluster_id)``); ``peers`` (id -> port)
        are other processes the proxies link too (``tests/chaos_brokers``' brokers)."""
        self.cluster_id = cluster_id
        self.nodes: dict = {}
        for i in range(1, n + 1):
            (workdir / f"n{i}").mkdir(parents=True)
            kind = KafkaMember if i in kafka_ids else member
            self.nodes[i] = kind(workdir / f"n{i}", i, cluster_id)
        self.proxies = Proxies({**{i: node.port for i, node in self.nodes.items()}, **(peers or {})})
        self.doors = Doors(self.proxies, self.nodes, NODE_DIALLER)
        self.stopped: set[int] = set()  # SIGSTOPped
        self.down: set[int] = set()  # killed by the harness, not started again yet
        # one process fault at a time per node (a cycle's faults may run together: a
        # SIGSTOP landing inside a clean restart would turn its SIGTERM into a SIGKILL)
        self.locks = {i: threading.RLock() for i in self.nodes}

    @property
    def ids(self) -> list[int]:
        return sorted(self.nodes)

    @property
    def majority(self) -> int:
        return len(self.nodes) // 2 + 1

    def voters(self, i: int) -> str:
        """Node ``i``'s ``controller.quorum.voters``: itself at its port, the others at its
        links to them (the proxies started)."""
        return ",".join(f"{j}@127.0.0.1:{self.nodes[i].port if j == i else self.proxies.port(i, j)}"
                        for j in self.ids)

    def start(self) -> None:
        self.proxies.start()
        self.doors.start()
        for i, node in self.nodes.items():
            node.advertised_port = self.doors.port(i)
            node.configure(self.voters(i))
        for node in self.nodes.values():
            node.start()

    def running(self, i: int) -> bool:
        proc = self.nodes[i].proc
        return proc is not None and proc.poll() is None

    def kill9(self, i: int) -> None:
        with self.locks[i]:
            self.stopped.discard(i)
            self.down.add(i)
            self.doors.shut(i)  # refusing, as the dead listener behind it
            self.nodes[i].kill()

    def pause(self, i: int) -> None:
        with self.locks[i]:
            if self.running(i):
                os.killpg(self.nodes[i].proc.pid, signal.SIGSTOP)
                self.stopped.add(i)

    def resume(self, i: int) -> None:
        with self.locks[i]:
            if i in self.stopped and self.running(i):
                os.killpg(self.nodes[i].proc.pid, signal.SIGCONT)
            self.stopped.discard(i)

    def restart(self, i: int) -> None:
        """SIGTERM (a clean shutdown), then start again (a node down stays down)."""
        with self.locks[i]:
            if not self.running(i):
                return
            self.resume(i)
            self.doors.shut(i)
            rc = self.nodes[i].stop()
            if not self.nodes[i].stopped_cleanly(rc):
                raise AssertionError(f"node {i} exited with {rc} on SIGTERM\n{self.nodes[i].log_tail()}")
            self.doors.open(i)
            self.nodes[i].start()

    def ensure_running(self, i: int) -> None:
        with self.locks[i]:
            self.resume(i)
            if not self.running(i):
                self.doors.open(i)
                self.nodes[i].start()
            self.down.discard(i)

    def heal(self) -> None:
        """Every link up, every node running."""
        self.proxies.heal()
        for i in self.ids:
            self.ensure_running(i)

    def close(self) -> None:
        for i in self.ids:
            self.resume(i)
            self.nodes[i].stop(timeout=10)
        self.doors.close()
        self.proxies.close()

    def crashed(self) -> dict[int, int]:
        """Nodes that exited on their own (not killed by the harness): id -> return code."""
        return {i: n.proc.returncode for i, n in self.nodes.items()
                if i not in self.down and n.proc is not None and n.proc.poll() is not None}
