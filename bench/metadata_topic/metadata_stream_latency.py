"""Commit -> row latency of the Spark pipeline over our node, default trigger.

    python bench/metadata_topic/metadata_stream_latency.py [--seconds 60] [--bootstrap HOST:PORT]

Without ``--bootstrap`` it starts one standalone node of ours on free loopback ports
(a NoOpRecord every 200 ms gives a steady stream of commits). A stream with the default
trigger (next micro-batch as soon as the last one ends) writes to ``foreachBatch``,
which notes when each row reached the driver; latency = that time minus the record's
batch timestamp (the leader's append time, a little before the commit: so this is an
upper bound of commit -> row). The first micro-batches (the Python workers' and state
store's start-up) are not counted. Needs the node to serve ``__cluster_metadata`` (Metadata lists it).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

WARM_UP_BATCHES = 5


def measure(bootstrap: str, seconds: float) -> list[float]:
    from tools.metadata_stream import pipeline
    from tools.metadata_stream.session import spark_session
    spark = spark_session("local[2]")
    latencies: list[float] = []

    def sink(df, epoch):
        rows = df.select("timestamp").collect()
        now = time.time()
        if epoch >= WARM_UP_BATCHES:
            latencies.extend((now - r.timestamp.timestamp()) * 1000 for r in rows)

    raw = pipeline.read_stream(spark, pipeline.kafka_options(bootstrap, starting_offsets="latest"))
    query = raw.writeStream.foreachBatch(sink).start()
    try:
        query.awaitTermination(seconds)
    finally:
        query.stop()
        spark.stop()
    return latencies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--bootstrap", help="a node's client listener (default: start one)")
    args = ap.parse_args()
    node = None
    bootstrap = args.bootstrap
    workdir = tempfile.TemporaryDirectory(prefix="stream-latency-")
    if bootstrap is None:
        from tests.support.kraft_nodes import OurNode
        node = OurNode(Path(workdir.name), extra=("metadata.max.idle.interval.ms=200",))
        node.format_with_ours(uuid.uuid4().hex[:22])
        node.start()
        node.wait_leader(60)
        bootstrap = f"127.0.0.1:{node.client_port}"
    try:
        latencies = measure(bootstrap, args.seconds)
    finally:
        if node is not None:
            node.stop()
        workdir.cleanup()
    if not latencies:
        print("no rows arrived: does the node's Metadata list __cluster_metadata?", file=sys.stderr)
        return 1
    q = statistics.quantiles(latencies, n=100)
    print(f"rows {len(latencies)}  commit->row p50 {q[49]:.0f} ms  p99 {q[98]:.0f} ms  max {max(latencies):.0f} ms"
          f"  (default trigger, local[2])")
    return 0


if __name__ == "__main__":
    sys.exit(main())
