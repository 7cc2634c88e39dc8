"""The operation rows with the failover part's three real Kafka 4.3.1 brokers (issue
26), on ``--ops-topics`` topics of 10 partitions, RF 2 (1,000 partitions; RF 2 so
every partition has a broker to move to), created once the failover rows are done.
Requests go straight to the active controller; the brokers' Metadata (v12, every 20
ms, each survivor) tells when leadership moved. In order:

* ``reassign a tenth``: partition 0 of every ops topic moves its follower to the third
  broker; the row runs from the AlterPartitionReassignments until ListPartitionReassignments
  lists none (the new replica caught up, joined the ISR, the move completed).
* ``controlled shutdown``: SIGTERM to the broker leading most ops partitions (about a
  third); until no survivor names it leader of an ops partition.
* it restarts and rejoins every ISR.
* ``preferred election of all``: ElectLeaders v2 PREFERRED of every ops partition.
* ``session expiry``: the same broker gets SIGSTOP right after a heartbeat answer;
  until no survivor names it leader (the 9 s session timeout is most of it; a SIGKILL
  would be fenced at once by our controller, issue 29, which the failover rows measure),
  then SIGCONT.
* ``DescribeConfigs of every topic`` (every topic of the cluster) and
  ``IncrementalAlterConfigs`` of 1,000 of them, one request each.
"""
from __future__ import annotations

import os
import signal
import time
from collections import Counter

from bench.controller.controller_client import Connection, create_topics
from bench.controller.controller_ops_client import (
    config_rows, elect_preferred, measured, reassign, reassignments_in_flight,
)
from bench.controller.controller_sides import heartbeat_answers
from tests.support.kraft_nodes import wait_for
from wire.messages import MetadataRequest
from wire.messages.metadata_request import MetadataRequestTopic

OPS_PARTITIONS = 10
ROWS = {"shutdown": "brokers: controlled shutdown -> moved (ms)",
        "expiry": "brokers: session expiry -> re-led (ms)",
        "reassign": "brokers: reassign a tenth -> complete (ms)",
        "preferred": "brokers: preferred election of all (ms)",
        "describe": "brokers: DescribeConfigs every topic (ms)",
        "alter": "brokers: IncrementalAlterConfigs 1000 (ms)",
        "rss": "controller RSS, after broker ops (MiB)"}


def _metadata(port: int, topics) -> dict | None:
    """{(topic, partition): (leader, replicas, isr)} in one broker's Metadata, or None."""
    try:
        conn = Connection("127.0.0.1", port, timeout=10)
    except OSError:
        return None
    try:
        r = conn.request(MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in topics],
                                         allow_auto_topic_creation=False), 12)
    except (OSError, ValueError):
        return None
    finally:
        conn.close()
    return {(t.name, p.partition_index): (p.leader_id, list(p.replica_nodes), sorted(p.isr_nodes))
            for t in r.topics if t.error_code == 0 for p in t.partitions}


def _settled(ports, topics) -> dict | None:
    """The Metadata when every broker at ``ports`` sees every ops partition led with a full ISR."""
    want = len(topics) * OPS_PARTITIONS
    views = [_metadata(p, topics) for p in ports]
    if any(v is None or len(v) != want or any(l < 0 or sorted(r) != i for l, r, i in v.values()) for v in views):
        return None
    return views[0]


def _moved_off(ports, topics, victim: int) -> bool:
    views = [_metadata(p, topics) for p in ports]
    return all(v is not None and all(l not in (victim, -1) for l, _, _ in v.values()) for v in views)


def _ms(t0: float) -> float:
    return (time.monotonic() - t0) * 1000


def broker_ops(controller, brokers, all_topics, ops_topics: int, rss) -> dict:
    """The rows above with ``controller`` the active one; ``all_topics`` are the names the
    failover part created; ``rss()`` reads the controller's RSS."""
    names = [f"ops-{i:04d}" for i in range(ops_topics)]
    conn = Connection("127.0.0.1", controller.port, timeout=300)
    ports = {b.node_id: b.port for b in brokers}
    rows = {}
    try:
        def run(rows):
            r = create_topics(conn, names, OPS_PARTITIONS, 2)
            assert not [t.error_code for t in r.topics if t.error_code], "ops topics not created"
            view = wait_for(lambda: _settled(ports.values(), names), 300, "every ops partition led, ISR full")
            ids = sorted(ports)
            moves = {}
            for (t, i), (leader, replicas, _) in view.items():
                if i == 0:
                    spare = next(b for b in ids if b not in replicas)
                    moves[t] = {0: [spare if r != leader else r for r in replicas]}
            t0 = time.monotonic()
            reassign(conn, moves)
            wait_for(lambda: reassignments_in_flight(conn) == 0, 300, "the moves completed", interval=0.02)
            rows["reassign"] = _ms(t0)

            view = wait_for(lambda: _settled(ports.values(), names), 300, "ISRs full after the moves")
            victim_id = Counter(l for l, _, _ in view.values()).most_common(1)[0][0]
            victim = next(b for b in brokers if b.node_id == victim_id)
            survivors = [p for i, p in ports.items() if i != victim_id]
            t0 = time.monotonic()
            victim._signal(victim.proc, victim.proc.pid, 15)  # SIGTERM: a controlled shutdown
            wait_for(lambda: _moved_off(survivors, names, victim_id), 300, "ops partitions moved off", interval=0.02)
            rows["shutdown"] = _ms(t0)
            victim.stop()
            victim.start()
            wait_for(lambda: _settled(ports.values(), names), 300, "the victim back in every ISR", interval=0.5)

            t0 = time.monotonic()
            elected = elect_preferred(conn, {t: list(range(OPS_PARTITIONS)) for t in names})
            rows["preferred"] = _ms(t0)
            assert elected > 0, "the preferred election moved nothing"

            wait_for(lambda: _settled(ports.values(), names), 60, "the elected leaders in every broker's Metadata")
            mark = victim.log_path.stat().st_size
            wait_for(lambda: heartbeat_answers(victim, 0, mark), 30, "a heartbeat answer on the victim", interval=0.01)
            t0 = time.monotonic()
            os.killpg(victim.proc.pid, signal.SIGSTOP)  # silent, not dead: only its session ends
            try:
                wait_for(lambda: _moved_off(survivors, names, victim_id), 300, "ops partitions re-led",
                         interval=0.02)
                rows["expiry"] = _ms(t0)
            finally:
                os.killpg(victim.proc.pid, signal.SIGCONT)

            rows.update(config_rows(conn, sorted(set(all_topics) | set(names)), rss))
        return measured(run, rows, ROWS)
    finally:
        conn.close()
