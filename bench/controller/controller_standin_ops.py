"""The operation rows at scale (issue 26): one controller holding the snapshot part's
partitions (1,000 x 100, RF 3 on the three broker stand-ins 100-102), a fourth
stand-in (103) registered for the reassignment. The stand-ins host nothing, so where a
real broker would act (a leader adding a caught-up replica to the ISR) the bench sends
the broker's request itself, from the partition state it reads in the controller's
log files (``LogTail``); that reading is never timed. In order:

* ``reassign a tenth``: partitions 0, 10, 20... of every topic move their last
  follower to 103 (AlterPartitionReassignments, 5,000 partitions a request); then each
  leader sends AlterPartition adding 103 to the ISR, which completes the move; the row
  is the time of both sets of requests plus a ListPartitionReassignments listing none.
* ``controlled shutdown``: the stand-in leading most partitions (about a third)
  heartbeats with WantShutDown every 20 ms; the row runs until an answer says
  ShouldShutDown (the controller moved every leadership off it).
* it registers again and rejoins every ISR (AlterPartition from the leaders).
* ``preferred election of all``: ElectLeaders v2 PREFERRED of every partition, 5,000
  a request (it moves its third back).
* ``session expiry``: its heartbeats stop; the row runs from its last heartbeat answer
  to the timestamp of the last batch of PartitionChangeRecords once no partition names
  it leader (the session timeout, 9 s, is most of it).
* ``DescribeConfigs of every topic``: one request; ``IncrementalAlterConfigs``: one
  request setting retention.ms on 1,000 topics (every topic if fewer).
"""
from __future__ import annotations

import sys
import threading
import time
from collections import Counter

from bench.controller.controller_client import BrokerStandIns, Connection
from bench.controller.controller_log_tail import LogTail
from bench.controller.controller_ops_client import (
    MAX_PARTITIONS_A_REQUEST, alter_isr, chunks, config_rows, elect_preferred, heartbeat, measured, reassign,
    reassignments_in_flight,
)
from tests.support.kraft_nodes import wait_for

NEW_BROKER = 103


class OpsStandIns(BrokerStandIns):
    """The snapshot part's stand-ins, already registered (``epochs``), heartbeating
    again, plus ``new`` ones registered now. Each broker heartbeats on its own
    connection, as a real broker does: one whose answer waits in a busy controller's
    queue does not hold the others' heartbeats back."""

    def __init__(self, port: int, cluster_id: str, epochs: dict[int, int], new) -> None:
        super().__init__(port, cluster_id, new, interval=1.0)
        self.epochs = dict(epochs)
        self.beating: dict[int, threading.Thread] = {}

    def run(self) -> None:
        while not self.stop.is_set():
            for i in list(self.epochs):
                if i not in self.beating:
                    self.beating[i] = threading.Thread(target=self._beat, args=(i,), daemon=True)
                    self.beating[i].start()
            self.stop.wait(0.1)
        for t in self.beating.values():
            t.join(10)

    def _beat(self, broker: int) -> None:
        try:
            conn = Connection("127.0.0.1", self.port, timeout=300)
            while not self.stop.is_set():
                if broker not in self.held:
                    r = heartbeat(conn, broker, self.epochs[broker], 1 << 62)
                    if r.error_code == 0 and not r.is_fenced:
                        self.unfenced.add(broker)
                self.stop.wait(self.interval)
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the bench
            if not self.stop.is_set():
                self.error = exc


def _ms(t0: float) -> float:
    return (time.monotonic() - t0) * 1000


def _by_leader(changes):
    out: dict[int, list] = {}
    for topic_id, p, isr in changes:
        out.setdefault(p.leader, []).append((topic_id, p, isr))
    return out


def _send_isr(conn, changes, epochs) -> None:
    for leader, mine in _by_leader(changes).items():
        for part in chunks(mine, MAX_PARTITIONS_A_REQUEST):
            alter_isr(conn, leader, part, epochs)


def _all_partitions(tail: LogTail) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, p in tail.partitions():
        out.setdefault(topic.name, []).append(p.partition_id)
    return out


def _requests_of(partitions: dict[str, list[int]]):
    """``partitions`` in groups of at most MAX_PARTITIONS_A_REQUEST (whole topics)."""
    group, size = {}, 0
    for name, ps in partitions.items():
        if group and size + len(ps) > MAX_PARTITIONS_A_REQUEST:
            yield group
            group, size = {}, 0
        group[name] = ps
        size += len(ps)
    if group:
        yield group


def _wait_tail(tail: LogTail, done, what: str, timeout: float = 300):
    return wait_for(lambda: done(tail.poll()), timeout, what, interval=0.2)


def reassign_tenth(conn, tail: LogTail, epochs) -> float:
    moves, picked = {}, []
    for topic, p in tail.partitions():
        if p.partition_id % 10:
            continue
        out = next(r for r in reversed(p.replicas) if r != p.leader)
        moves.setdefault(topic.name, {})[p.partition_id] = [NEW_BROKER if r == out else r for r in p.replicas]
        picked.append((topic.name, p.partition_id))
    t0 = time.monotonic()
    for group in _requests_of({t: list(ps) for t, ps in moves.items()}):
        reassign(conn, {t: {i: moves[t][i] for i in ps} for t, ps in group.items()})
    submit_ms = _ms(t0)
    parts = lambda img: [img.topics.by_name[t].partitions[i] for t, i in picked]  # noqa: E731
    _wait_tail(tail, lambda img: all(NEW_BROKER in (p.adding_replicas or ()) for p in parts(img)),
               "the moves in the log")
    changes = [(p.topic_id, p, [*p.isr, NEW_BROKER]) for p in parts(tail.image)]
    t0 = time.monotonic()
    _send_isr(conn, changes, epochs)
    left = reassignments_in_flight(conn)
    isr_ms = _ms(t0)
    assert left == 0, f"{left} reassignments still in flight"
    return submit_ms + isr_ms


def controlled_shutdown(conn, standins: OpsStandIns, victim: int) -> float:
    standins.held.add(victim)
    epoch = standins.epochs[victim]
    t0 = time.monotonic()
    while not heartbeat(conn, victim, epoch, 1 << 62, want_shut_down=True).should_shut_down:
        if time.monotonic() - t0 > 300:
            raise AssertionError(f"broker {victim} never told to shut down")
        time.sleep(0.02)  # the stand-in's heartbeat period while it shuts down
    return _ms(t0)


def come_back(conn, tail: LogTail, standins: OpsStandIns, victim: int) -> None:
    """``victim`` registers again (a new incarnation) and is unfenced; then every
    stand-in rejoins every ISR it is out of (a busy controller may have fenced another
    one whose heartbeat answer came late, Kafka's as well as ours)."""
    standins.ids = [victim]
    standins.dirs = list(tail.image.brokers.get(victim).record.log_dirs)  # a restart keeps its log directory
    wait_for(lambda: _registered(standins, conn), 60, f"broker {victim} registered again", interval=0.2)
    standins.unfenced.discard(victim)
    standins.held.discard(victim)
    wait_for(lambda: victim in standins.unfenced, 60, f"broker {victim} unfenced")
    wait_for(lambda: all(b.active for b in tail.poll().brokers), 60, "every stand-in active")
    changes = [(p.topic_id, p, [*p.isr, *(r for r in p.replicas if r not in p.isr)])
               for _, p in tail.partitions() if set(p.replicas) - set(p.isr) and p.leader >= 0]
    _send_isr(conn, changes, standins.epochs)
    _wait_tail(tail, lambda img: all(set(p.isr) == set(p.replicas) for _, p in img.topics.partitions()),
               "every stand-in in every ISR")


def _registered(standins: OpsStandIns, conn) -> bool:
    try:
        standins.register(conn)
    except RuntimeError:  # DUPLICATE_BROKER_REGISTRATION until the old session is over
        return False
    return True


def session_expiry(conn, tail: LogTail, standins: OpsStandIns, victim: int) -> float:
    standins.held.add(victim)
    heartbeat(conn, victim, standins.epochs[victim], 1 << 62)
    last = time.time()
    tail.poll()
    _wait_tail(tail, lambda img: all(p.leader != victim for _, p in img.topics.partitions()),
               f"every partition of {victim} re-led", timeout=120)
    return (max(t for t in tail.change_times if t >= last) - last) * 1000


ROWS = {"shutdown": "stand-ins: controlled shutdown -> moved (ms)",
        "expiry": "stand-ins: session expiry -> re-led (ms)",
        "reassign": "stand-ins: reassign a tenth -> new ISR (ms)",
        "preferred": "stand-ins: preferred election of all (ms)",
        "describe": "stand-ins: DescribeConfigs every topic (ms)",
        "alter": "stand-ins: IncrementalAlterConfigs 1000 (ms)",
        "rss": "controller RSS, after stand-in ops (MiB)"}


def resume_standins(port: int, cluster_id: str, old: BrokerStandIns) -> OpsStandIns:
    """The stand-ins of ``old`` heartbeating again (a restarted controller gives them a
    session timeout to come back before it fences them)."""
    standins = OpsStandIns(port, cluster_id, old.epochs, [])
    standins.start()
    return standins


def standin_ops(node, data_dir, standins: OpsStandIns, rss) -> dict:
    """The rows above (``ROWS``' names) on the controller ``node``; ``rss()`` reads its RSS."""
    conn = Connection("127.0.0.1", node.port, timeout=300)
    rows = {}
    try:
        def run(rows):
            standins.ids = [NEW_BROKER]
            wait_for(lambda: _registered(standins, conn), 60, f"broker {NEW_BROKER} registered", interval=0.2)
            wait_for(lambda: standins.error or len(standins.unfenced) == len(standins.epochs), 120,
                     "four stand-ins unfenced")
            if standins.error:
                raise standins.error
            tail = LogTail(data_dir)
            tail.poll()
            rows["reassign"] = reassign_tenth(conn, tail, standins.epochs)
            tail.poll()
            victim = Counter(p.leader for _, p in tail.partitions()).most_common(1)[0][0]
            rows["shutdown"] = controlled_shutdown(conn, standins, victim)
            come_back(conn, tail, standins, victim)
            everything = _all_partitions(tail)
            t0, wall, took = time.monotonic(), time.time(), []
            elected = 0
            for group in _requests_of(everything):
                t1 = time.monotonic()
                elected += elect_preferred(conn, group)
                took.append(round(_ms(t1)))
            rows["preferred"] = _ms(t0)
            print(f"stand-ins preferred election: wall {wall:.3f}-{time.time():.3f}, "
                  f"requests (ms) {took}", file=sys.stderr)
            assert elected > 0, "the preferred election moved nothing"
            rows["expiry"] = session_expiry(conn, tail, standins, victim)
            rows.update(config_rows(conn, sorted(everything), rss))
        return measured(run, rows, ROWS)
    finally:
        standins.stop.set()
        conn.close()
        standins.join(10)
