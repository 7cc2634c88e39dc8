"""Scale bench (issue 41): our controller against Kafka's at 100,000 to 2,000,000
partitions, RF 3, on 30 broker stand-ins, one standalone controller per side and
size, fresh directories each time.

    python bench/controller/scale.py --sizes 100000,500000 [--sides ours,kafka] [--json]

Kafka's controller (the default release of ``tools.kafka_dist``, production JVM flags)
gets ``-Xmx`` sized for the partitions (``kafka_heap``, printed with the table); ours
runs without a limit and its RSS is a row. Both sides:
``metadata.log.max.snapshot.interval.ms=5000``, Kafka's other defaults.

The stand-ins (``ScaleStandIns``) register, then heartbeat every second, each on its
own connection, timing every answer. Topics of 100 partitions are created with
explicit assignments (the same bytes to both sides): stand-in 0 leads a third of
the partitions, stand-in 1 another third, the other 28 the rest, followers spread
over stand-ins 2-29. In order:

* ``create all partitions (s)``: CreateTopics v7 straight to the controller, 50
  topics a request, the clock from the first request to the last answer.
* (untimed) both sides rest ``settle`` seconds (5 s, or one a 5,000 partitions).
* ``snapshot write, time on the loop (ms)`` and ``snapshot write, bytes``: once a
  snapshot covers the creation, the newest ``.checkpoint`` file's size, and the time
  writing it took. Ours: the time on the event loop, from its ``Created snapshot``
  log line (the rendering slices plus the write and fsync, both on the loop). Kafka
  writes snapshots on its own thread, not the controller's, so its figure is the
  nearest honest proxy: the time between SnapshotGenerator's ``Creating new KRaft
  snapshot file`` and SnapshotEmitter's ``Successfully wrote`` lines (ms stamps).
* ``a new observer catching up (ms)``: a second node of the same kind (node 2, the
  same properties, the quorum's bootstrap servers, formatted with
  ``--no-initial-controllers``: Kafka's with its production JVM flags) from its spawn
  until the leader's DescribeQuorum shows its log end at the high watermark read
  just before the spawn; then it is killed. Both leaders answer its first fetch with
  their newest snapshot (seen in the observers' directories at 10,000 and 50,000
  partitions): it fetches that, then the log after it.
* ``controlled shutdown of a third (ms)``: stand-in 0 heartbeats WantShutDown every
  20 ms until an answer says ShouldShutDown (``controller_standin_ops``).
* ``stand-in kill -9 -> a third re-led (ms)``: stand-in 1 closes its connection
  right after a heartbeat answer (its listener never answered: a dead broker);
  the row runs to the timestamp of the controller's last batch of
  PartitionChangeRecords once no partition names it leader (read from the log
  files, ``LogTail``). Kafka's controller waits for the session timeout (9 s); ours
  takes the closed connection and the refused probe as evidence of the crash.
* (untimed) both come back: a new registration, unfenced, and every leader sends
  AlterPartition putting them back into the ISRs.
* ``preferred election of all (ms)``: ElectLeaders v2 PREFERRED of every partition,
  5,000 a request (two thirds move back).
* ``controller restart -> caught up (ms)``: once a snapshot covers the high
  watermark, SIGTERM, then from the spawn until a validate-only CreateTopics of an
  existing topic is answered TOPIC_ALREADY_EXISTS.
* ``controller RSS at rest (MiB)``: 10 s after the restart, the stand-ins
  heartbeating again; ``controller RSS after create (MiB)`` is read after the first row.
* ``small write p99 / max in the big rows (ms)``: during the controlled shutdown and
  the preferred election, a thread on its own connection sends CreateTopics v7 of one
  partition (a fresh name each, validate_only false, replicas on stand-ins 2-4) one
  at a time, from the row's start until it ends; each answer (after the commit) is
  timed. ``small write p99 / max during the kill (ms)``: the same during the kill
  row (the fencing of a broker that leads a third).
* ``heartbeat p99 / max (ms)``: every heartbeat answer's latency during the timed
  rows above; ``stand-ins fenced while heartbeating (count)``: stand-ins answered
  fenced although they were heartbeating (a controller too busy to answer in time);
  ``heartbeats answered with an error (count)``: REQUEST_TIMED_OUT, say (a heartbeat
  that waited in the controller's queue past its deadline).

The curve prints each time row divided by the partitions (µs a partition) per size.
The machine is shared: the load average is printed with each table.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import socket
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.controller.controller import load, rss_mib, snapshot_ids, topic_exists  # noqa: E402
from bench.controller.controller_client import CAUGHT_UP, Connection, registration  # noqa: E402
from bench.controller.controller_log_tail import LogTail  # noqa: E402
from bench.controller.controller_ops_client import (  # noqa: E402
    elect_preferred, heartbeat, measured,
)
from bench.controller.controller_sides import Side  # noqa: E402
from bench.controller.scale_rows import SmallWrites, observer_row, p99_max, snapshot_rows  # noqa: E402
from bench.controller.controller_standin_ops import (  # noqa: E402
    OpsStandIns, _all_partitions, _registered, _requests_of, _send_isr, _wait_tail, controlled_shutdown,
)
from tests.support.kraft_nodes import wait_for  # noqa: E402
from tools.kafka_dist import DEFAULT_RELEASE  # noqa: E402
from tools.kafka_dist.broker import BROKER_ID_BASE  # noqa: E402
from tools.kafka_dist.controller import random_cluster_id  # noqa: E402
from tools.kafka_dist.probe import describe_quorum  # noqa: E402
from wire.messages import CreateTopicsRequest  # noqa: E402
from wire.messages.create_topics_request import CreatableReplicaAssignment, CreatableTopic  # noqa: E402

STANDINS = 30
PARTITIONS_A_TOPIC = 100
TOPICS_A_REQUEST = 50
SHUTDOWN, KILLED = BROKER_ID_BASE, BROKER_ID_BASE + 1  # each leads a third

ROWS = {"create": "create all partitions (s)",
        "rss_created": "controller RSS after create (MiB)",
        "snapshot": "snapshot write, time on the loop (ms)",
        "snapshot_bytes": "snapshot write, bytes",
        "observer": "a new observer catching up (ms)",
        "shutdown": "controlled shutdown of a third (ms)",
        "kill": "stand-in kill -9 -> a third re-led (ms)",
        "preferred": "preferred election of all (ms)",
        "restart": "controller restart -> caught up (ms)",
        "rss": "controller RSS at rest (MiB)",
        "hb_p99": "heartbeat p99 in the timed rows (ms)",
        "hb_max": "heartbeat max in the timed rows (ms)",
        "write_p99": "small write p99 in the big rows (ms)",
        "write_max": "small write max in the big rows (ms)",
        "kill_write_p99": "small write p99 during the kill (ms)",
        "kill_write_max": "small write max during the kill (ms)",
        "fenced": "stand-ins fenced while heartbeating (count)",
        "hb_errors": "heartbeats answered with an error (count)"}
TIME_ROWS = ("create", "snapshot", "observer", "shutdown", "kill", "preferred", "restart", "write_p99",
             "kill_write_p99")
LIVE = [BROKER_ID_BASE + 2, BROKER_ID_BASE + 3, BROKER_ID_BASE + 4]  # never shut down nor killed


def settle(partitions: int) -> float:
    """Seconds both controllers get after the creation before the next row: 5 s, or
    one a 5,000 partitions (ours decodes and indexes them while idle)."""
    return max(5.0, partitions / 5_000)


def kafka_heap(partitions: int) -> str:
    """The -Xmx Kafka's controller gets: 2 GB up to 250,000 partitions, then 1 GB more
    each 125,000, at most 12 GB."""
    return f"{min(12, max(2, math.ceil(partitions / 125_000)))}g"


def replicas(g: int) -> list[int]:
    """The replicas of the ``g``-th partition: a third led by SHUTDOWN, a third by
    KILLED, followers on stand-ins 2-29."""
    base = g % (STANDINS - 2)
    a = BROKER_ID_BASE + 2 + base
    b = BROKER_ID_BASE + 2 + (base + 1) % (STANDINS - 2)
    c = BROKER_ID_BASE + 2 + (base + 2) % (STANDINS - 2)
    return [(SHUTDOWN, KILLED, a)[g % 3], *((a, b) if g % 3 < 2 else (b, c))]


def create_assigned(conn, names, first: int):
    """CreateTopics v7 of ``names`` with explicit assignments; ``first`` is the global
    index of the first topic."""
    topics = []
    for i, name in enumerate(names):
        g0 = (first + i) * PARTITIONS_A_TOPIC
        topics.append(CreatableTopic(name=name, num_partitions=-1, replication_factor=-1, assignments=[
            CreatableReplicaAssignment(partition_index=p, broker_ids=replicas(g0 + p))
            for p in range(PARTITIONS_A_TOPIC)]))
    return conn.request(CreateTopicsRequest(topics=topics, timeout_ms=120000), 7)


class Listener(threading.Thread):
    """A stand-in's listening socket (what our controller's crash evidence probes,
    ``broker_liveness``): accepts and closes until ``close``."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.start()

    def run(self) -> None:
        while True:
            try:
                self.sock.accept()[0].close()
            except OSError:
                return

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class ScaleStandIns(OpsStandIns):
    """Stand-ins heartbeating on their own connections, each answer timed
    (``samples``: (monotonic send time, seconds)), each with a listening socket it
    registers. A broker in ``dead`` closes its connection and its listener after its
    next answer and stops (``died``: wall time of the close), as a killed broker."""

    def __init__(self, port: int, cluster_id: str, epochs: dict[int, int], listeners=None) -> None:
        super().__init__(port, cluster_id, epochs, [])
        self.samples: list[tuple[float, float]] = []
        self.dead: set[int] = set()
        self.died: dict[int, float] = {}
        self.fenced_while_beating: set[int] = set()
        self.errors: dict[int, int] = {}  # error code -> heartbeat answers carrying it
        self.listeners: dict[int, Listener] = dict(listeners or {})

    def register(self, conn) -> None:
        for i in self.ids:
            if i in self.listeners:
                self.listeners.pop(i).close()
            self.listeners[i] = Listener()
            req = registration(i, self.cluster_id, self.dirs or [uuid.uuid4()])
            req.listeners[0].port = self.listeners[i].port
            r = conn.request(req, 4)
            if r.error_code:
                raise RuntimeError(f"BrokerRegistration of {i}: error {r.error_code}")
            self.epochs[i] = r.broker_epoch

    def close_listeners(self) -> None:
        for listener in self.listeners.values():
            listener.close()

    def _beat(self, broker: int) -> None:
        try:
            conn = Connection("127.0.0.1", self.port, timeout=300)
            while not self.stop.is_set():
                if broker not in self.held:
                    t0 = time.monotonic()
                    r = heartbeat(conn, broker, self.epochs[broker], CAUGHT_UP)
                    self.samples.append((t0, time.monotonic() - t0))
                    if r.error_code == 0 and not r.is_fenced:
                        self.unfenced.add(broker)
                    elif r.error_code:
                        self.errors[r.error_code] = self.errors.get(r.error_code, 0) + 1
                    elif broker in self.unfenced and broker not in self.held:
                        self.fenced_while_beating.add(broker)
                if broker in self.dead:
                    died = time.time()
                    conn.close()
                    self.listeners[broker].close()
                    self.died[broker] = died
                    return
                self.stop.wait(self.interval)
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the bench
            if not self.stop.is_set():
                self.error = exc

    def revive(self, broker: int) -> None:
        """A dead broker's heartbeats start again (after it registered anew)."""
        self.dead.discard(broker)
        self.died.pop(broker, None)
        self.beating.pop(broker, None)


def register_standins(port: int, cluster_id: str) -> ScaleStandIns:
    standins = ScaleStandIns(port, cluster_id, {})
    standins.ids = [BROKER_ID_BASE + i for i in range(STANDINS)]
    conn = Connection("127.0.0.1", port)
    try:
        standins.register(conn)
    finally:
        conn.close()
    return standins


class HighWatermarks(threading.Thread):
    """The controller's high watermark (DescribeQuorum) every 10 ms: ``seen`` holds
    (wall time, high watermark) pairs."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port, self.seen, self.stop = port, [], threading.Event()
        self.start()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                hw = describe_quorum("127.0.0.1", self.port, timeout=30).high_watermark
                self.seen.append((time.time(), hw))
            except OSError:
                pass
            self.stop.wait(0.01)

    def committed(self, offset: int) -> float:
        """The first wall time the high watermark was past ``offset``."""
        return next(t for t, hw in self.seen if hw > offset)


def kill_row(tail: LogTail, standins: ScaleStandIns, victim: int, port: int) -> float:
    """From the kill until the last batch re-leading its partitions committed (the
    high watermark past it; batch timestamps are the time a write started)."""
    watch = HighWatermarks(port)
    try:
        standins.dead.add(victim)
        wait_for(lambda: victim in standins.died, 30, f"stand-in {victim} dead", interval=0.01)
        killed = standins.died[victim]
        _wait_tail(tail, lambda img: all(p.leader != victim for _, p in img.topics.partitions()),
                   f"every partition of {victim} re-led", timeout=600)
        ends = [end for t, end in zip(tail.change_times, tail.change_ends) if t >= killed - 0.001]
        if not ends:  # fenced before the kill (its session expired while the controller was busy)
            print(f"stand-in {victim} led nothing when it was killed", file=sys.stderr)
            return math.nan
        last = max(ends)
        wait_for(lambda: watch.seen and watch.seen[-1][1] > last, 60, "the last change committed")
        return (watch.committed(last) - killed) * 1000
    finally:
        watch.stop.set()


def come_back(conn, tail: LogTail, standins: ScaleStandIns, victims) -> None:
    """``victims`` register again (new incarnations, the same log directories), are
    unfenced and rejoin every ISR (AlterPartition from the leaders)."""
    for v in victims:
        standins.ids = [v]
        standins.dirs = list(tail.poll().brokers.get(v).record.log_dirs)
        wait_for(lambda: _registered(standins, conn), 120, f"stand-in {v} registered again", interval=0.2)
        standins.unfenced.discard(v)
        standins.held.discard(v)
        standins.revive(v)
    wait_for(lambda: all(v in standins.unfenced for v in victims), 120, "the stand-ins unfenced again")
    wait_for(lambda: all(b.active for b in tail.poll().brokers), 120, "every stand-in active")
    changes = [(p.topic_id, p, [*p.isr, *(r for r in p.replicas if r not in p.isr)])
               for _, p in tail.partitions() if set(p.replicas) - set(p.isr) and p.leader >= 0]
    _send_isr(conn, changes, standins.epochs)
    _wait_tail(tail, lambda img: all(set(p.isr) == set(p.replicas) for _, p in img.topics.partitions()),
               "every stand-in in every ISR", timeout=600)


def heartbeat_rows(standins: ScaleStandIns, windows) -> dict:
    took = p99_max(s for t, s in list(standins.samples) if any(a <= t <= b for a, b in windows))
    if took is None:
        return {}
    return {"hb_p99": took[0] * 1000, "hb_max": took[1] * 1000,
            "fenced": len(standins.fenced_while_beating), "hb_errors": sum(standins.errors.values())}


def one_size(kind: str, workdir: Path, partitions: int, profile=None) -> dict:
    cluster = random_cluster_id()
    props = {"metadata.log.max.snapshot.interval.ms": "5000"}
    side = Side(kind, workdir / "controller", cluster, 1, props)
    node = side.nodes[0]
    data_dir = node.data if kind == "ours" else node.data_dir
    rows, windows = {}, []
    standins = None
    try:
        side.start()
        side.leader()
        standins = register_standins(node.port, cluster)
        standins.start()
        wait_for(lambda: standins.error or len(standins.unfenced) == STANDINS, 120, "the stand-ins unfenced")
        if standins.error:
            raise standins.error
        conn = Connection("127.0.0.1", node.port, timeout=600)

        def timed(key, fn, *args):
            t0 = time.monotonic()
            try:
                with (profile(kind, key, node) if profile else _nothing()):
                    rows[key] = fn(*args)
            finally:
                windows.append((t0, time.monotonic()))

        def run(rows):
            names = [f"scale-{i:06d}" for i in range(partitions // PARTITIONS_A_TOPIC)]

            def create():
                t0 = time.monotonic()
                for i in range(0, len(names), TOPICS_A_REQUEST):
                    r = create_assigned(conn, names[i:i + TOPICS_A_REQUEST], i)
                    bad = [(t.name, t.error_code) for t in r.topics if t.error_code]
                    assert not bad, bad[:3]
                return time.monotonic() - t0
            timed("create", create)
            rows["rss_created"] = rss_mib(node.proc.pid)
            tail = LogTail(data_dir)
            tail.poll()
            created = tail.next_offset
            time.sleep(settle(partitions))  # at rest before the next rows
            rows.update(snapshot_rows(kind, node, data_dir, created))
            rows["observer"] = observer_row(side, node.port)
            writes: list[float] = []
            with SmallWrites(node.port, LIVE, "small-shutdown", writes):
                timed("shutdown", controlled_shutdown, conn, standins, SHUTDOWN)
            tail.poll()
            killing: list[float] = []
            with SmallWrites(node.port, LIVE, "small-kill", killing):
                timed("kill", kill_row, tail, standins, KILLED, node.port)
            if (took := p99_max(killing)) is not None:
                rows["kill_write_p99"], rows["kill_write_max"] = took[0] * 1000, took[1] * 1000
            come_back(conn, tail, standins, [SHUTDOWN, KILLED])

            def preferred():
                t0, elected = time.monotonic(), 0
                for group in _requests_of(_all_partitions(tail)):
                    elected += elect_preferred(conn, group)
                assert elected > 0, "the preferred election moved nothing"
                return (time.monotonic() - t0) * 1000
            with SmallWrites(node.port, LIVE, "small-preferred", writes):
                timed("preferred", preferred)
            rows.update(heartbeat_rows(standins, windows))
            if (took := p99_max(writes)) is not None:
                rows["write_p99"], rows["write_max"] = took[0] * 1000, took[1] * 1000
            conn.close()
            hw = tail.next_offset
            wait_for(lambda: max(snapshot_ids(data_dir), default=-1) >= hw - 1, 300,
                     f"a snapshot at or past {hw}", interval=0.2)
            standins.stop.set()
            standins.join(30)
            side.stop(node)
            t0 = side.start(node)
            wait_for(lambda: topic_exists(node.port, "scale-000000"), 900, "the restarted controller active",
                     interval=0.02)
            rows["restart"] = (time.monotonic() - t0) * 1000
            again = ScaleStandIns(node.port, cluster, standins.epochs, standins.listeners)
            again.start()
            time.sleep(10)
            rows["rss"] = rss_mib(node.proc.pid)
            again.stop.set()
            again.join(10)
        return measured(run, rows, ROWS)
    finally:
        if standins is not None:
            standins.stop.set()
            standins.close_listeners()
        side.close()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def py_spy(out_dir: Path):
    """A profiler for ``one_size``: py-spy records our controller during each timed
    row into ``out_dir/<size>-<row>.txt`` (collapsed stacks)."""
    import shutil
    import subprocess
    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")

    class Recording:
        def __init__(self, kind, key, node):
            self.on = kind == "ours" and key in ("create", "shutdown", "kill", "preferred")
            self.path = out_dir / f"{os.environ.get('SCALE_SIZE', 'n')}-{key}.txt"
            self.pid = node.proc.pid

        def __enter__(self):
            if self.on:
                out_dir.mkdir(parents=True, exist_ok=True)
                self.proc = subprocess.Popen([exe, "record", "-p", str(self.pid), "-r", "50", "-f", "raw",
                                              "-o", str(self.path), "--nonblocking"],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)  # attached
            return self

        def __exit__(self, *exc):
            if self.on:
                self.proc.send_signal(2)  # SIGINT: py-spy writes its file
                self.proc.wait(60)
            return False
    return Recording


def per_partition(results: dict, sides) -> list[str]:
    """The curve: µs a partition of each time row, per size."""
    sizes = sorted(results, key=int)
    lines = [f"{'µs a partition':<40}" + "".join(f"{s + ' ' + n:>16}" for n in sizes for s in sides)]
    for key in TIME_ROWS:
        name = ROWS[key]
        unit = 1e6 if key == "create" else 1e3
        cells = []
        for n in sizes:
            for s in sides:
                v = results[n].get(s, {}).get(name)
                cells.append(f"{v * unit / int(n):>16.2f}" if isinstance(v, (int, float)) and v == v else f"{'':>16}")
        lines.append(f"{name:<40}" + "".join(cells))
    return lines


def table(n: str, result: dict, sides) -> list[str]:
    ratio = sides == ["ours", "kafka"]
    lines = [f"{int(n):,} partitions (Kafka {DEFAULT_RELEASE}, -Xmx{kafka_heap(int(n))}); load: {result.get('load')}",
             f"{'row':<44}" + "".join(f"{k:>10}" for k in sides) + (f"{'ours/kafka':>11}" if ratio else "")]
    for name in ROWS.values():
        vals = [result.get(k, {}).get(name, "") for k in sides]
        r = ""
        if ratio:
            try:
                r = f"{vals[0] / vals[1]:.2f}"
            except (TypeError, ZeroDivisionError):
                pass
        lines.append(f"{name:<44}" + "".join(f"{v:>10}" for v in vals) + f"{r:>11}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,500000")
    parser.add_argument("--sides", default="ours,kafka")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--table", help="print the tables of a --json report (a file) and exit")
    parser.add_argument("--profile", help="py-spy our controller during the shutdown, kill and preferred rows "
                        "into this directory")
    parser.add_argument("--workdir", help="keep the run's directories here (default: a temporary one)")
    args = parser.parse_args(argv)
    sides = args.sides.split(",")
    if args.table:
        results = json.loads(Path(args.table).read_text())
        return print_tables(results, sides)
    profile = py_spy(Path(args.profile)) if args.profile else None
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        root = Path(args.workdir or tmp)
        for size in (int(s) for s in args.sizes.split(",")):
            os.environ["SCALE_SIZE"] = str(size)
            result = results[str(size)] = {"load": load()}
            for kind in sides:
                old = os.environ.get("KAFKA_HEAP_OPTS")
                os.environ["KAFKA_HEAP_OPTS"] = f"-Xmx{kafka_heap(size)} -Xms1g"
                try:
                    result[kind] = one_size(kind, root / str(size) / kind, size, profile)
                finally:
                    if old is None:
                        os.environ.pop("KAFKA_HEAP_OPTS", None)
                    else:
                        os.environ["KAFKA_HEAP_OPTS"] = old
                print(f"{size} {kind}: {json.dumps(result[kind])}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({n: {k: r[k] for k in sides} | {"load": r["load"]} for n, r in results.items()},
                         indent=2))
        return 0
    return print_tables(results, sides)


def print_tables(results: dict, sides) -> int:
    for n, r in results.items():
        print("\n".join(table(n, r, sides)) + "\n")
    print("\n".join(per_partition(results, sides)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
