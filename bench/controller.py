"""Controller bench (issue 11): the same three Apache Kafka 4.3.1 brokers on a
controller of ours and on Kafka 4.3.1's own controller, in one run.

    python bench/controller.py             # 1,000 topics x 10 partitions, RF 1
    python bench/controller.py --quick     # 100 topics
    python bench/controller.py --topics 1000 --partitions 10 --replication-factor 3

Rows (per implementation, fresh directories each):

1. ``create topics (s)``: kafka-python's admin client sends CreateTopics in requests of
   ``--batch`` topics to a broker, which forwards each in an Envelope to the active
   controller; the time from the first request to the last answer (every topic created).
2. ``controller RSS (MiB)``: VmRSS of the controller process after the topics exist
   (Kafka's is the JVM with the distribution's server heap settings, -Xmx512m here).

Not measured yet (the issue's other rows): broker kill -9 -> re-led, controller
failover -> first heartbeat, snapshot load time at 100,000 partitions.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.kraft_nodes import OurNode, wait_for  # noqa: E402
from tools.kafka_dist.broker import bootstrap_servers, start_brokers  # noqa: E402
from tools.kafka_dist.controller import KafkaController, random_cluster_id  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _unfenced(brokers) -> bool:
    from kafka import KafkaAdminClient
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(brokers), request_timeout_ms=5000)
    except Exception:  # noqa: BLE001 - not up yet
        return False
    try:
        return len(admin.describe_cluster()["brokers"]) == len(brokers)
    finally:
        admin.close()


def create_topics(brokers, topics: int, partitions: int, rf: int, batch: int) -> float:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers(brokers), request_timeout_ms=120000)
    try:
        names = [f"bench-{i:05d}" for i in range(topics)]
        t0 = time.monotonic()
        for i in range(0, topics, batch):
            admin.create_topics([NewTopic(n, partitions, rf) for n in names[i:i + batch]], timeout_ms=120000)
        return time.monotonic() - t0
    finally:
        admin.close()


def run_side(kind: str, workdir: Path, args) -> dict:
    cluster = random_cluster_id()
    brokers = []
    if kind == "ours":
        (workdir / "ours").mkdir(parents=True)
        node = OurNode(workdir / "ours", node_id=1)
        node.format_with_ours(cluster)
        node.start()
        stop, pid, bootstrap = node.stop, (lambda: node.proc.pid), node.bootstrap
        node.wait_leader()
    else:
        ctl = KafkaController(workdir / "kafka", cluster_id=cluster)
        ctl.start_ready(120)
        stop, pid, bootstrap = ctl.close, (lambda: ctl.proc.pid), ctl.bootstrap
    try:
        brokers = start_brokers(workdir, 3, cluster, bootstrap)
        wait_for(lambda: _unfenced(brokers), 180, "three brokers", interval=1.0)
        seconds = create_topics(brokers, args.topics, args.partitions, args.replication_factor, args.batch)
        return {"create topics (s)": round(seconds, 2), "controller RSS (MiB)": round(rss_mib(pid()), 1)}
    finally:
        for b in brokers:
            b.close()
        stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--replication-factor", type=int, default=1)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.topics = 100
    rows = {}
    with tempfile.TemporaryDirectory(prefix="bench-controller-") as tmp:
        for kind in ("ours", "kafka"):
            rows[kind] = run_side(kind, Path(tmp) / kind, args)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{args.topics} topics x {args.partitions} partitions, RF {args.replication_factor}, "
          f"{args.batch} topics per request, 3 Kafka 4.3.1 brokers")
    print(f"{'row':<24}{'ours':>10}{'Kafka':>10}")
    for row in rows["ours"]:
        print(f"{row:<24}{rows['ours'][row]:>10}{rows['kafka'][row]:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
