"""Controller bench (issue 11): our controllers against Apache Kafka 4.3.1's with the
same Apache Kafka 4.3.1 brokers, in one run, fresh directories for every side.

    python bench/controller/controller.py                 # every row at the issue's sizes
    python bench/controller/controller.py --quick         # tiny sizes (the smoke test)
    python bench/controller/controller.py --only failover # or: snapshot
    python bench/controller/controller.py --fast-kafka-jvm  # Kafka with the test JVM flags

Both sides get the same properties: Kafka's defaults (election timeout 1 s, fetch
timeout 2 s, broker.session.timeout.ms 9 s, heartbeat interval 2 s, 500 ms NoOps)
except where a row says. Kafka's controllers run with the distribution's production
JVM flags (G1, full JIT; ``--fast-kafka-jvm`` switches to the tests' C1-only serial
GC) and -Xmx512m; ours with ``python -m kraft_server`` at INFO. Brokers are Kafka
4.3.1 with the tests' JVM flags on both sides.

**Failover part**: three controllers (a 3-voter quorum of ours, or of Kafka's,
formatted with ``--initial-controllers``) and three brokers.

1. ``create topics (s)``: kafka-python's admin client sends CreateTopics of
   ``--batch`` topics (``--topics`` x ``--partitions``, RF ``--replication-factor``)
   to a broker, which forwards each in an Envelope to the active controller; the clock
   runs from the first request to the last answer.
2. ``controller RSS, create topics (MiB)``: VmRSS of the active controller then.
3. ``broker kill -9 -> re-led (ms)``: a topic ``failover`` (60 partitions, RF 3) is
   created, the brokers have created every partition's log directory (they do it long
   after the controller answered) and every partition has a leader in every broker's
   Metadata; the broker
   leading most of them gets SIGKILL (clock starts just before the signal) right after
   it logged a heartbeat answer (polled every 10 ms; see row 5), so its session is
   equally fresh on both sides. Every
   50 ms a Metadata v12 request (our codecs) goes to each surviving broker; the clock
   stops when neither names the killed broker leader of any partition. On Kafka's
   controllers dominated by the session timeout (9 s) after which the controller
   fences it; ours fences at once on evidence of the crash (the broker's heartbeat
   connection closed, its listener refusing a probe: issue 29,
   ``kraft_server/controller/cluster/broker_liveness.py``). A partition whose
   ISR had shrunk to the killed broker (followers lagging on a loaded machine) is left
   leaderless, as Kafka's rules say; ``partitions left leaderless (count)`` counts them.
4. ``broker SIGSTOP -> re-led (ms)``: once the killed broker is restarted and
   unfenced and every broker had a heartbeat answered, the broker now leading the
   most ``failover`` partitions gets SIGSTOP right after it logged a heartbeat answer,
   measured as row 3, then SIGCONT. A paused process is no evidence of a crash (its
   connections stay open, its listening socket still accepts), so both sides wait
   for the session timeout.
5. ``controller kill -9 -> heartbeat (ms)``: once the paused broker is resumed and
   unfenced again (DescribeCluster v2 of a broker) and every broker had a heartbeat answered
   in state RUNNING, the active controller gets SIGKILL (wall clock read just before).
   Each broker logs a successful heartbeat answer in state RUNNING at DEBUG
   (``org.apache.kafka.server.BrokerLifecycleManager``: "The broker is RUNNING. Processing
   heartbeat response.", millisecond timestamps); the row is the latest of the three
   brokers' first such line after the kill, minus the kill time. The new active
   controller is checked to be another node.

**Snapshot part**: one controller (``--standalone``) per side, three broker stand-ins
(``controller_client.BrokerStandIns``: BrokerRegistration v4 then a heartbeat a
second each, hosting nothing, so 100,000 partitions need no broker JVM), both sides
with ``metadata.log.max.snapshot.interval.ms=5000``.

6. ``create topics direct (s)``: CreateTopics v7 sent straight to the controller,
   ``--big-topics`` x ``--big-partitions`` (1,000 x 100 = 100,000 partitions, RF 3),
   50 topics a request (Kafka's limit is 10,000 records per operation).
7. ``controller RSS, created direct (MiB)``: VmRSS of the controller then.
8. ``snapshot load (ms)``: once a snapshot file (``__cluster_metadata-0/*.checkpoint``)
   covers the high watermark read after the last CreateTopics, the controller is
   stopped (SIGTERM) and started again; the clock runs from just before the process
   is spawned until a validate-only CreateTopics for an existing topic is answered
   TOPIC_ALREADY_EXISTS (a controller answers it only once it is active, i.e. the
   snapshot is loaded and the log after it replayed; before, NOT_CONTROLLER or a
   refused connection), polled every 20 ms.
9. ``controller RSS, snapshot loaded (MiB)``: VmRSS right after that answer. (Our
   image keeps a partition as its record's bytes until something reads it, so rows 7
   and 9 are its low end.)
10. ``controller RSS, every partition read (MiB)``: VmRSS after an ElectLeaders v2
   (PREFERRED, every partition) sent to the controller is answered: both read every
   partition to decide (nothing needs electing, nothing is written).

**Operation rows** (issue 26), each side's figure with the ratio ours/kafka:

10. ``brokers: ...``: after row 4, on the controller that took over, with the three
    brokers: ``--ops-topics`` (100) topics of 10 partitions, RF 2 (1,000 partitions);
    controlled shutdown, session expiry, reassignment of a tenth, preferred election,
    DescribeConfigs of every topic, IncrementalAlterConfigs of 1,000 topics and the
    controller's RSS after them (``controller_broker_ops``).
11. ``stand-ins: ...``: after row 9, the same operations on the snapshot part's
    100,000 partitions, the stand-ins heartbeating again from the restart on and a
    fourth one registered; what a broker would send (AlterPartition) the bench sends
    from the state it reads in the controller's log files (``controller_standin_ops``).

The machine is shared (2 cores, other jobs): the 1-minute load average is printed
with each table; compare rows of one run only.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.controller.controller_client import (  # noqa: E402
    BrokerStandIns, Connection, create_topics, elect_preferred_everywhere, partition_leaders,
    unfenced_brokers,
)
from bench.controller.controller_sides import Side, heartbeat_answers, start_brokers  # noqa: E402
from bench.controller.controller_broker_ops import broker_ops  # noqa: E402
from bench.controller.controller_standin_ops import resume_standins, standin_ops  # noqa: E402
from tests.support.kraft_nodes import wait_for  # noqa: E402
from tools.kafka_dist.broker import BROKER_ID_BASE, bootstrap_servers  # noqa: E402
from tools.kafka_dist.controller import random_cluster_id  # noqa: E402
from tools.kafka_dist.probe import describe_quorum  # noqa: E402

TOPIC_ALREADY_EXISTS = 36
FAILOVER_PARTITIONS = 60
DIRECT_BATCH = 50


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _unfenced(brokers) -> bool:
    from kafka import KafkaAdminClient
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(brokers), request_timeout_ms=5000)
    except Exception:  # noqa: BLE001 - not up yet
        return False
    try:
        return len(admin.describe_cluster()["brokers"]) == len(brokers)
    except Exception:  # noqa: BLE001 - a broker not listening yet
        return False
    finally:
        admin.close()


def admin_create(brokers, names, partitions: int, rf: int, batch: int) -> float:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(brokers), request_timeout_ms=120000)
    try:
        t0 = time.monotonic()
        for i in range(0, len(names), batch):
            admin.create_topics([NewTopic(n, partitions, rf) for n in names[i:i + batch]], timeout_ms=120000)
        return time.monotonic() - t0
    finally:
        admin.close()


def _connect(port: int) -> Connection | None:
    try:
        return Connection("127.0.0.1", port)
    except OSError:
        return None


def _leaders(port: int) -> dict[int, int] | None:
    """{partition: leader} of ``failover`` in the Metadata of the broker at ``port``
    (a fresh connection each time: a broker under load may drop one)."""
    conn = _connect(port)
    if conn is None:
        return None
    try:
        return partition_leaders(conn, "failover")
    except (OSError, ValueError):
        return None
    finally:
        conn.close()


def _all_led(ports) -> bool:
    for port in ports:
        leaders = _leaders(port)
        if leaders is None or len(leaders) != FAILOVER_PARTITIONS or min(leaders.values()) < 0:
            return False
    return True


def _moved_off(ports, victim: int):
    """The survivors' views once none names ``victim`` leader (else None)."""
    views = [_leaders(port) for port in ports]
    if any(v is None or len(v) != FAILOVER_PARTITIONS or victim in v.values() for v in views):
        return None
    return views


def _partition_dirs(brokers) -> int:
    return sum(1 for b in brokers for p in b.data_dir.glob("*-*") if p.name.startswith(("bench-", "failover-")))


def _listening(brokers) -> bool:
    conns = [_connect(b.port) for b in brokers]
    for c in conns:
        if c is not None:
            c.close()
    return all(c is not None for c in conns)


def _unfenced_ids(port: int) -> list[int] | None:
    conn = _connect(port)
    if conn is None:
        return None
    try:
        return unfenced_brokers(conn)
    finally:
        conn.close()


def _all_running(brokers, port: int) -> None:
    """Every broker unfenced (DescribeCluster of the broker at ``port``), listening, and
    with a heartbeat answered in state RUNNING from now on."""
    marks = {b.node_id: b.log_path.stat().st_size for b in brokers}
    ids = sorted(b.node_id for b in brokers)
    wait_for(lambda: _unfenced_ids(port) == ids, 180, "every broker unfenced")
    wait_for(lambda: _listening(brokers), 60, "every broker listening")
    wait_for(lambda: all(heartbeat_answers(b, 0, marks[b.node_id]) for b in brokers), 60,
             "heartbeats answered in state RUNNING on every broker")


def _pause_row(brokers) -> int:
    """Row 4: SIGSTOP of the broker leading the most partitions until the others'
    Metadata no longer names it leader; SIGCONT after."""
    counts = Counter(_leaders(brokers[0].port).values())
    paused = next(b for b in brokers if b.node_id == counts.most_common(1)[0][0])
    others = [b.port for b in brokers if b is not paused]
    mark = paused.log_path.stat().st_size
    wait_for(lambda: heartbeat_answers(paused, 0, mark), 30, "a heartbeat answer on the paused broker",
             interval=0.01)
    t0 = time.monotonic()
    os.killpg(paused.proc.pid, signal.SIGSTOP)
    try:
        wait_for(lambda: _moved_off(others, paused.node_id), 300,
                 "no failover partition led by the paused broker", interval=0.05)
        return round((time.monotonic() - t0) * 1000)
    finally:
        os.killpg(paused.proc.pid, signal.SIGCONT)


def failover_part(kind: str, workdir: Path, args) -> dict:
    cluster = random_cluster_id()
    side = Side(kind, workdir / "controllers", cluster, 3, {}, production_jvm=not args.fast_kafka_jvm)
    brokers, rows = [], {}
    try:
        side.start()
        side.leader()
        brokers = start_brokers(workdir / "brokers", 3, cluster, side.quorum)
        wait_for(lambda: _unfenced(brokers), 180, "three brokers", interval=1.0)
        wait_for(lambda: _listening(brokers), 60, "every broker listening")  # opened once unfenced
        names = [f"bench-{i:05d}" for i in range(args.topics)]
        rows["create topics (s)"] = round(admin_create(brokers, names, args.partitions,
                                                       args.replication_factor, args.batch), 2)
        leader = side.leader()
        rows["controller RSS, create topics (MiB)"] = rss_mib(leader.proc.pid)

        admin_create(brokers, ["failover"], FAILOVER_PARTITIONS, 3, 1)
        # The brokers create the partitions' logs long after the controller answered:
        # the next rows start once they are done, so no backlog of theirs is measured.
        replicas = args.topics * args.partitions * args.replication_factor + FAILOVER_PARTITIONS * 3
        wait_for(lambda: _partition_dirs(brokers) >= replicas, 600, f"{replicas} partition logs on the brokers",
                 interval=0.5)
        ports = {b.node_id: b.port for b in brokers}
        wait_for(lambda: _all_led(ports.values()), 60, "every failover partition led")
        counts = Counter(_leaders(brokers[0].port).values())
        victim = next(b for b in brokers if b.node_id == counts.most_common(1)[0][0])
        survivors = [p for i, p in ports.items() if i != victim.node_id]
        mark = victim.log_path.stat().st_size
        wait_for(lambda: heartbeat_answers(victim, 0, mark), 30, "a heartbeat answer on the victim",
                 interval=0.01)  # killed just after one: its session has the same age on both sides
        t0 = time.monotonic()
        victim.stop(graceful=False)  # SIGKILL
        views = wait_for(lambda: _moved_off(survivors, victim.node_id), 300,
                         "no failover partition led by the killed broker", interval=0.05)
        rows["broker kill -9 -> re-led (ms)"] = round((time.monotonic() - t0) * 1000)
        rows["partitions left leaderless (count)"] = max(sum(1 for l in v.values() if l < 0) for v in views)
        victim.start()
        _all_running(brokers, survivors[0])
        rows["broker SIGSTOP -> re-led (ms)"] = _pause_row(brokers)
        _all_running(brokers, survivors[0])
        marks = {b.node_id: b.log_path.stat().st_size for b in brokers}
        leader = side.leader()
        killed_at = time.time()
        side.kill(leader)
        def firsts():
            got = [heartbeat_answers(b, killed_at, marks[b.node_id])[:1] for b in brokers]
            return [t[0] for t in got] if all(got) else None
        first = wait_for(firsts, 120, "a heartbeat answer from the new controller on every broker",
                         interval=0.05)
        rows["controller kill -9 -> heartbeat (ms)"] = round((max(first) - killed_at) * 1000)
        assert side.leader(exclude=(leader.node_id,)).node_id != leader.node_id
        rows.update(_broker_ops(side, leader, brokers, names + ["failover"], args))
        return rows
    finally:
        for b in brokers:
            b.close()
        side.close()


def snapshot_ids(data_dir: Path) -> list[int]:
    part = data_dir / "__cluster_metadata-0"
    return [int(p.name.split("-")[0]) for p in part.glob("*.checkpoint")]


def topic_exists(port: int, topic: str = "bench-00000") -> bool:
    """The controller at ``port`` is active and knows ``topic`` (a validate-only
    CreateTopics answered TOPIC_ALREADY_EXISTS)."""
    try:
        conn = Connection("127.0.0.1", port, timeout=30)
    except OSError:
        return False
    try:
        r = create_topics(conn, [topic], 1, 1, validate_only=True)
        return r.topics[0].error_code == TOPIC_ALREADY_EXISTS
    except (OSError, ValueError):
        return False
    finally:
        conn.close()


def snapshot_part(kind: str, workdir: Path, args) -> dict:
    cluster = random_cluster_id()
    props = {"metadata.log.max.snapshot.interval.ms": "5000"}
    side = Side(kind, workdir / "controller", cluster, 1, props, production_jvm=not args.fast_kafka_jvm)
    node = side.nodes[0]
    data_dir = node.data if kind == "ours" else node.data_dir
    standins, rows = None, {}
    try:
        side.start()
        side.leader()
        standins = BrokerStandIns(node.port, cluster, [BROKER_ID_BASE + i for i in range(3)])
        standins.start()
        wait_for(lambda: standins.error or len(standins.unfenced) == 3, 120, "three broker stand-ins unfenced")
        if standins.error:
            raise standins.error
        names = [f"bench-{i:05d}" for i in range(args.big_topics)]
        conn = Connection("127.0.0.1", node.port, timeout=300)
        t0 = time.monotonic()
        for i in range(0, len(names), DIRECT_BATCH):
            r = create_topics(conn, names[i:i + DIRECT_BATCH], args.big_partitions, 3)
            bad = [(t.name, t.error_code) for t in r.topics if t.error_code]
            assert not bad, bad[:3]
        rows["create topics direct (s)"] = round(time.monotonic() - t0, 2)
        conn.close()
        rows["controller RSS, created direct (MiB)"] = rss_mib(node.proc.pid)
        hw = describe_quorum("127.0.0.1", node.port).high_watermark
        wait_for(lambda: max(snapshot_ids(data_dir)) >= hw, 180, f"a snapshot at or past {hw}", interval=0.2)
        standins.stop.set()
        standins.join(30)
        side.stop(node)
        t0 = side.start(node)
        wait_for(lambda: topic_exists(node.port), 300, "the restarted controller active", interval=0.02)
        rows["snapshot load (ms)"] = round((time.monotonic() - t0) * 1000)
        rows["controller RSS, snapshot loaded (MiB)"] = rss_mib(node.proc.pid)
        resumed = resume_standins(node.port, cluster, standins)  # before their sessions end
        conn = Connection("127.0.0.1", node.port, timeout=300)
        try:
            answered = elect_preferred_everywhere(conn).error_code == 0
        except (OSError, ValueError) as exc:
            print(f"{kind}: ElectLeaders failed: {exc!r}", file=sys.stderr)
            answered = False
        finally:
            conn.close()
        rows["controller RSS, every partition read (MiB)"] = rss_mib(node.proc.pid) if answered else float("nan")
        rows.update(standin_ops(node, data_dir, resumed, lambda: rss_mib(node.proc.pid)))
        return rows
    finally:
        if standins is not None:
            standins.stop.set()
        side.close()


def _broker_ops(side, killed, brokers, topics, args) -> dict:
    """The operation rows with real brokers (``controller_broker_ops``), on the controller
    that took over from ``killed``."""
    active = side.leader(exclude=(killed.node_id,))
    return broker_ops(active, brokers, topics, args.ops_topics, lambda: rss_mib(active.proc.pid))


def _ratio(ours, kafka) -> str:
    try:
        return f"{ours / kafka:.2f}"
    except (TypeError, ZeroDivisionError):
        return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--replication-factor", type=int, default=1)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--big-topics", type=int, default=1000)
    parser.add_argument("--big-partitions", type=int, default=100)
    parser.add_argument("--only", choices=("failover", "snapshot"))
    parser.add_argument("--sides", default="ours,kafka")
    parser.add_argument("--fast-kafka-jvm", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--ops-topics", type=int, default=100, help="topics of 10 partitions, RF 2, for the "
                        "operation rows with real brokers")
    parser.add_argument("--workdir", help="keep the run's directories here (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.quick:
        args.topics, args.big_topics, args.big_partitions = 20, 20, 10
        args.ops_topics = 10
    sides = args.sides.split(",")
    parts = [(n, f) for n, f in (("failover", failover_part), ("snapshot", snapshot_part))
             if args.only in (None, n)]
    rows: dict[str, dict] = {kind: {} for kind in sides}
    loads = []
    with tempfile.TemporaryDirectory(prefix="bench-controller-") as tmp:
        tmp = args.workdir or tmp
        for name, part in parts:
            for kind in sides:
                loads.append(f"{name}/{kind}: {load()}")
                rows[kind].update(part(kind, Path(tmp) / name / kind, args))
    loads.append(f"end: {load()}")
    if args.json:
        print(json.dumps({"rows": rows, "load": loads}, indent=2))
        return 0
    print(f"{args.topics} topics x {args.partitions} partitions RF {args.replication_factor} "
          f"({args.batch} a request) through 3 Kafka 4.3.1 brokers; {args.big_topics} x "
          f"{args.big_partitions} RF 3 direct for the snapshot rows")
    print(f"load average (1, 5, 15 min) at each start: {'; '.join(loads)}")
    ratio = sides == ["ours", "kafka"]
    print(f"{'row':<44}" + "".join(f"{k:>10}" for k in sides) + (f"{'ours/kafka':>11}" if ratio else ""))
    for row in rows[sides[0]]:
        print(f"{row:<44}" + "".join(f"{rows[k].get(row, ''):>10}" for k in sides)
              + (f"{_ratio(rows['ours'].get(row), rows['kafka'].get(row)):>11}" if ratio else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
