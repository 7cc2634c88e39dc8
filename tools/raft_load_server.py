"""``python -m tools.raft_load_server --config <server.properties> --throughput N``:
our node with a load generator on the leader, for ``bench/raft/raft.py``.

The counterpart of Apache Kafka's ``kafka.tools.TestRaftServer`` (core, Scala): once
this node is the leader it appends ``--record-size``-byte records at ``--throughput``
records/s and measures, per record, the time from ``propose`` to the moment the high
watermark passes its offset (commit latency). Like Kafka's tool it only counts records
appended in the current epoch by this node (the local clock is then meaningful), resets
its rate throttle when it wins an election, and catches up after a stall (the target is
``records sent <= rate * time since the claim``).

Differences from Kafka's tool, on purpose:

* It is the real node (``kraft_server.shell.wiring.build_node``: the same log, core, listeners
  and Ready loop as ``python -m kraft_server``) plus the generator; the storage must be
  formatted as for the server. ``kraft_server`` itself is unchanged: the generator lives
  here and uses only ``RaftNode.propose``, ``high_watermark`` and ``Driver.wake`` (only
  when ``propose_needs_cycle`` says the leader's next deadline moved).
* Output for a program, one JSON object a line on stdout (``ev`` names the event; ``t``
  is Unix time in ms): ``listening``, ``leader`` (leader id or epoch changed), ``claim``
  (this node became leader), ``hwm_first`` (first commit of our epoch: the high
  watermark became known, which Kafka's LeaderState logs as "High watermark set ... for
  the first time for epoch"), and every ``--report-interval-ms`` a ``stats`` line with
  the records and bytes committed in the interval, the latency histogram (0.1 ms
  buckets) and the node's Readys so far (``readys``: turns of its loop). Every 5 s it
  also prints Kafka's human summary line
  ``Throughput (bytes/second): ..., Latency (ms): ... p75 ... p99 ... p999``.
  Each fsync of the log that took ``--slow-flush-ms`` or more (20) gives a
  ``slow_flush`` line with its ``ms``, on every node: the disk stalls a latency window met.
* It proposes no more than the leader accepts: ``RaftNode.append_room`` (the node's
  backpressure, ``QuorumConfig.max_backlog_bytes`` of uncommitted proposals) and at most
  ``--max-pending-batches`` full batches (8 MiB each, Kafka's limit); past them it skips
  sending until some commit (Kafka's generator thread dies with "number of batches 10
  reached 10" instead). ``stats`` counts the ticks refused (``refused_ticks``).

The generator runs on the node's event loop (a timer every ``max(1 ms, 1/rate)``), so
its cost is part of what is measured, as Kafka's generator thread shares its JVM. A
busy loop runs the timer late: ``propose`` is then told when the first record was due,
and the leader's linger counts from that time, as it would from the append of Kafka's
generator thread (otherwise each late timer would stretch the batch cadence).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from collections import Counter, deque

from kraft_server.raft.quorum_config import MAX_BATCH_BYTES
from kraft_server.raft import Backpressure, NotLeader
from kraft_server.raft.roles.base import Role

SUMMARY_INTERVAL_S = 5.0  # Kafka's WriteStats printIntervalMs


def emit(ev: str, **fields) -> None:
    fields = {"ev": ev, "t": round(time.time() * 1000, 1), **fields}
    sys.stdout.write(json.dumps(fields, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def percentile(hist: Counter, q: float) -> float:
    """The ``q`` quantile (0..1) of a histogram of 0.1 ms buckets, in ms."""
    total = sum(hist.values())
    if not total:
        return float("nan")
    rank = q * total
    seen = 0
    for bucket in sorted(hist):
        seen += hist[bucket]
        if seen >= rank:
            return bucket / 10.0
    return max(hist) / 10.0


def noop_record(size: int) -> bytes:
    """A ``size``-byte metadata record the controller accepts and ignores: a framed
    ``NoOpRecord`` v0 whose tagged-field section carries one unknown tag of random
    padding (our node replays ``__cluster_metadata``, unlike Kafka's tool which writes
    raw bytes to its own topic)."""
    from wire.messages import NoOpRecord
    from wire.records.metadata import frame_metadata_record
    from wire.varint import write_uvarint as _uvarint
    for tag in (10_000, 100):  # a 2- or 1-byte tag number: one of them fits every size
        for pad in range(0, size):
            body = _uvarint(1) + _uvarint(tag) + _uvarint(pad) + os.urandom(pad)
            framed = frame_metadata_record(NoOpRecord.API_KEY, 0, body)
            if len(framed) == size:
                NoOpRecord.decode(body, 0)  # well-formed
                return framed
            if len(framed) > size:
                break
    raise ValueError(f"cannot build a {size}-byte NoOpRecord (at least ~8 bytes)")


class LoadGenerator:
    """Proposes records at a fixed rate while this node leads; times their commit."""

    def __init__(self, driver, core, *, throughput: int, record_size: int,
                 report_interval_ms: int = 1000, max_pending_batches: int = 10):
        self.driver, self.core = driver, core
        self.rate = throughput
        self.payload = noop_record(record_size)
        self.tick_s = max(0.001, 1.0 / throughput) if throughput > 0 else None
        self.report_s = report_interval_ms / 1000.0
        self.max_pending = max(1, max_pending_batches * MAX_BATCH_BYTES // max(1, record_size))
        self.claimed_epoch: int | None = None
        self.claim_t = 0.0
        self.sent = 0
        self.refused = 0  # ticks with records due and no room in the leader's backlog
        self.pending: deque = deque()  # [first, last, append perf_counter]
        self.pending_count = 0
        self.hwm_known = False
        self.last_leader = None
        # interval stats
        self.hist: Counter = Counter()
        self.records = 0
        self.summary_hist: Counter = Counter()
        self.summary_records = 0
        self.last_report = self.last_summary = time.perf_counter()
        self.loop = None

    # -- on the loop ------------------------------------------------------------------
    def start(self, loop) -> None:
        self.loop = loop
        if self.tick_s is not None:
            loop.call_later(self.tick_s, self._tick)

    def _is_leader(self) -> bool:
        return self.core.role is Role.LEADER

    def _tick(self) -> None:
        try:
            self._send()
        finally:
            self.loop.call_later(self.tick_s, self._tick)

    def _send(self) -> None:
        if self.claimed_epoch is None or self.claimed_epoch != self.core.epoch or not self._is_leader():
            return
        now = time.perf_counter()
        due = int((now - self.claim_t) * self.rate) - self.sent
        room = self.core.append_room() // len(self.payload)
        n = min(due, self.max_pending - self.pending_count, room)
        if n <= 0:
            if due > 0:
                self.refused += 1
            return
        wall = time.time()
        due_at = self.claim_t + (self.sent + 1) / self.rate  # the first of these records
        try:
            first, last = self.core.propose([self.payload] * n, int(wall * 1000),
                                            int((wall - (now - due_at)) * 1000))
        except (NotLeader, Backpressure):
            return
        self.sent += n
        self.pending.append([first, last, now])
        self.pending_count += n
        if self.core.propose_needs_cycle:
            self.driver.wake()

    def after_cycle(self, now_ms: int) -> None:
        core = self.core
        leader = (core.leader_id, core.epoch)
        if leader != self.last_leader:
            self.last_leader = leader
            if core.leader_id >= 0:
                emit("leader", leader=core.leader_id, epoch=core.epoch)
        if self._is_leader():
            if self.claimed_epoch != core.epoch:
                self.claimed_epoch = core.epoch
                self.claim_t = time.perf_counter()
                self.sent = 0
                self.pending.clear()
                self.pending_count = 0
                self.hwm_known = False
                emit("claim", epoch=core.epoch)
            hwm = core.high_watermark
            if hwm is not None:
                if not self.hwm_known:
                    self.hwm_known = True
                    emit("hwm_first", epoch=core.epoch, high_watermark=hwm)
                self._committed(hwm)
        elif self.claimed_epoch is not None:
            self.claimed_epoch = None
            self.pending.clear()
            self.pending_count = 0
        self._maybe_report()

    def _committed(self, hwm: int) -> None:
        pending = self.pending
        if not pending or pending[0][0] >= hwm:
            return
        now = time.perf_counter()
        while pending and pending[0][0] < hwm:
            entry = pending[0]
            first, last, t = entry
            n = min(last, hwm - 1) - first + 1
            bucket = int((now - t) * 10000)  # 0.1 ms
            self.hist[bucket] += n
            self.summary_hist[bucket] += n
            self.records += n
            self.summary_records += n
            self.pending_count -= n
            if last < hwm:
                pending.popleft()
            else:
                entry[0] = hwm

    def _maybe_report(self) -> None:
        now = time.perf_counter()
        if now - self.last_report >= self.report_s:
            if self.records or self.claimed_epoch is not None:
                emit("stats", epoch=self.claimed_epoch, records=self.records,
                     bytes=self.records * len(self.payload), interval_s=round(now - self.last_report, 4),
                     pending=self.pending_count, refused_ticks=self.refused,
                     readys=self.core.ready_count,
                     hist={str(k): v for k, v in self.hist.items()})
            self.hist = Counter()
            self.records = 0
            self.last_report = now
        if now - self.last_summary >= SUMMARY_INTERVAL_S:
            if self.summary_records:
                h = self.summary_hist
                rate = self.summary_records * len(self.payload) / (now - self.last_summary)
                print(f"Throughput (bytes/second): {rate:.2f}, Latency (ms): {percentile(h, .75):.1f} p75 "
                      f"{percentile(h, .99):.1f} p99 {percentile(h, .999):.1f} p999", flush=True)
            self.summary_hist = Counter()
            self.summary_records = 0
            self.last_summary = now


class _Chain:
    def __init__(self, *hooks):
        self.hooks = [h for h in hooks if h is not None]

    def __call__(self, now_ms: int) -> None:
        for hook in self.hooks:
            hook(now_ms)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="test_raft_server", description=__doc__.splitlines()[0])
    p.add_argument("--config", required=True, help="server.properties (a formatted node)")
    p.add_argument("--throughput", type=int, default=5000,
                   help="records/s the leader appends (Kafka's default: 5000); 0: none")
    p.add_argument("--record-size", type=int, default=256, help="bytes per record (default 256)")
    p.add_argument("--report-interval-ms", type=int, default=1000)
    p.add_argument("--max-pending-batches", type=int, default=10)
    p.add_argument("--slow-flush-ms", type=float, default=20.0,
                   help="emit a slow_flush event for each fsync of the log this long or longer")
    p.add_argument("--max-backlog-bytes", type=int, default=None,
                   help="the leader's cap on uncommitted proposals (QuorumConfig.max_backlog_bytes)")
    args = p.parse_args(argv)

    logging.basicConfig(level=os.environ.get("KRAFT_LOG_LEVEL", "INFO").upper(), stream=sys.stderr,
                        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)")
    from kraft_server.config import KafkaConfig
    from kraft_server.shell.driver import run_forever
    from kraft_server.shell.wiring import build_node

    config = KafkaConfig.from_file(args.config)
    node = build_node(config, args.config)
    if args.max_backlog_bytes is not None:
        from dataclasses import replace
        node.core.config = replace(node.core.config, max_backlog_bytes=args.max_backlog_bytes)
    gen = LoadGenerator(node.driver, node.core, throughput=args.throughput,
                        record_size=args.record_size, report_interval_ms=args.report_interval_ms,
                        max_pending_batches=args.max_pending_batches)
    node.driver.after_cycle = _Chain(node.driver.after_cycle, gen.after_cycle)
    flushes = node.driver.shell.flush_times  # disk stalls, for the bench to set against latency
    flushes.slow_ms = args.slow_flush_ms
    flushes.on_slow = lambda ms: emit("slow_flush", ms=round(ms, 1))

    def started(bound):
        emit("listening", node=config.node_id, listeners={k: list(v) for k, v in bound.items()})
        gen.start(asyncio.get_running_loop())

    try:
        run_forever(node.driver, on_started=started)
    finally:
        close = getattr(node.raft_log, "close", None)
        if close is not None:
            close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
