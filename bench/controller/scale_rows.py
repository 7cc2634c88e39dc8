"""The snapshot, observer and small-write rows of the scale bench (``scale.py``, issue
41); how each is measured is in that file's docstring."""
from __future__ import annotations

import re
import sys
import threading
import time
from pathlib import Path

from bench.controller.controller_client import Connection
from bench.controller.controller_sides import Side, log_time
from tests.support.kraft_nodes import our_describe_quorum, wait_for
from tools.kafka_dist.probe import describe_quorum
from wire.messages import CreateTopicsRequest
from wire.messages.create_topics_request import CreatableReplicaAssignment, CreatableTopic

OBSERVER_ID = 2  # the voter is node 1; the stand-ins are brokers from 100
# ours: kraft_server/controller/image/snapshot_generator.py's line once the file is in place
_OURS = re.compile(r"Created snapshot OffsetAndEpoch\(offset=(\d+), epoch=(\d+)\) \(\d+ bytes\): rendered in "
                   r"\d+ slice\(s\), (\d+) ms on the loop over \d+ ms, written in (\d+) ms")
# Kafka: SnapshotGenerator's line before it hands the image to SnapshotEmitter, then the emitter's
_KAFKA_BEGIN = re.compile(r"Creating new KRaft snapshot file snapshot (\d{20}-\d{10}) because")
_KAFKA_END = re.compile(r"Successfully wrote snapshot (\d{20}-\d{10})")


def newest_snapshot(data_dir: Path) -> Path | None:
    files = sorted((data_dir / "__cluster_metadata-0").glob("*.checkpoint"))
    return files[-1] if files else None


def ours_snapshot_ms(log_text: str, name: str) -> float | None:
    """Ms on the loop for snapshot ``name`` (``<offset>-<epoch>``) in our node's log."""
    offset, epoch = (int(x) for x in name.split("-"))
    for m in _OURS.finditer(log_text):
        if (int(m.group(1)), int(m.group(2))) == (offset, epoch):
            return float(int(m.group(3)) + int(m.group(4)))
    return None


def kafka_snapshot_ms(log_text: str, name: str) -> float | None:
    """Ms from Kafka's decision to write snapshot ``name`` to the file being written."""
    begin = end = None
    for line in log_text.splitlines():
        if (m := _KAFKA_BEGIN.search(line)) and m.group(1) == name:
            begin = log_time(line)
        elif (m := _KAFKA_END.search(line)) and m.group(1) == name:
            end = log_time(line)
    return (end - begin) * 1000 if begin is not None and end is not None else None


def snapshot_rows(kind: str, node, data_dir: Path, covering: int) -> dict:
    """Once a snapshot covers offset ``covering``: the newest one's bytes and the time
    writing it took (ours: on the event loop; Kafka: on its snapshot thread)."""
    wait_for(lambda: (f := newest_snapshot(data_dir)) and int(f.name.split("-")[0]) >= covering, 300,
             f"a snapshot up to {covering}", interval=0.2)
    path = newest_snapshot(data_dir)
    name = path.name.removesuffix(".checkpoint")
    parse = ours_snapshot_ms if kind == "ours" else kafka_snapshot_ms

    def logged():  # a tuple: 0 ms is a figure too
        took = parse(node.log_path.read_text(errors="replace"), name)
        return None if took is None else (took,)
    took, = wait_for(logged, 60, f"the log line of snapshot {name}", interval=0.2)
    return {"snapshot": took, "snapshot_bytes": path.stat().st_size}


def _observer_end(port: int, node_id: int) -> int:
    observers = our_describe_quorum(port).topics[0].partitions[0].observers
    return next((o.log_end_offset for o in observers if o.replica_id == node_id), -1)


def observer_row(side: Side, leader_port: int) -> float:
    """A new observer from its spawn until the leader's DescribeQuorum shows its log end
    at the high watermark of that moment (ms)."""
    node = side.observer(OBSERVER_ID)
    target = describe_quorum("127.0.0.1", leader_port, timeout=30).high_watermark
    t0 = side.start(node)
    try:
        wait_for(lambda: _observer_end(leader_port, OBSERVER_ID) >= target, 900,
                 f"observer {OBSERVER_ID} at {target}", interval=0.02)
        return (time.monotonic() - t0) * 1000
    finally:
        side.kill(node)


class SmallWrites(threading.Thread):
    """While in its ``with``: CreateTopics of one partition on ``replicas`` (a fresh name
    each, validate_only false), one at a time on its own connection; ``took`` gets each
    answer's latency (s), ``errors`` counts answers with an error."""

    def __init__(self, port: int, replicas: list[int], prefix: str, took: list[float]) -> None:
        super().__init__(daemon=True)
        self.port, self.replicas, self.prefix, self.took = port, replicas, prefix, took
        self.stop, self.errors, self.error = threading.Event(), 0, None

    def run(self) -> None:
        try:
            conn = Connection("127.0.0.1", self.port, timeout=300)
            i = 0
            while i == 0 or not self.stop.is_set():  # at least one, even in a row shorter than a write
                topic = CreatableTopic(name=f"{self.prefix}-{i:06d}", num_partitions=-1, replication_factor=-1,
                                       assignments=[CreatableReplicaAssignment(partition_index=0,
                                                                               broker_ids=self.replicas)])
                i += 1
                t0 = time.monotonic()
                r = conn.request(CreateTopicsRequest(topics=[topic], timeout_ms=120000, validate_only=False), 7)
                if r.topics[0].error_code:
                    self.errors += 1
                else:
                    self.took.append(time.monotonic() - t0)
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the bench
            self.error = exc

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> bool:
        self.stop.set()
        self.join(300)
        print(f"small writes {self.prefix}: {len(self.took)} in all, {self.errors} answered with an error"
              + (f", failed: {self.error!r}" if self.error else ""), file=sys.stderr)
        return False


def p99_max(samples) -> tuple[float, float] | None:
    """The p99 and the max of ``samples`` (None when there are none)."""
    took = sorted(samples)
    if not took:
        return None
    return took[min(len(took) - 1, int(len(took) * 0.99))], took[-1]
