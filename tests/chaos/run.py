"""One chaos run: a quorum of our processes behind the proxies, the monitor, the
stand-in broker and the writer; then ``cycles`` times: the cycle's faults one after
another, heal everything, wait for a leader and a new acknowledged write, read every
node's log from disk and check it (``check.py``)."""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tools.kafka_dist.controller import random_cluster_id
from tools.kafka_dist.probe import describe_quorum

from tests.support.kraft_nodes import committed_batches

from .check import check, read_node
from .cluster import ChaosCluster
from .faults import run_fault
from .monitor import Monitor
from .schedule import Schedule
from .writer import StandInBroker, Writer

log = logging.getLogger(__name__)

RECOVERY_S = 60.0  # a leader and a new ack after healing, and every log at the HWM


@dataclass
class Report:
    seed: int
    nodes: int
    kafka: int = 0  # of which Apache Kafka controllers
    cycles: int = 0
    faults: Counter = field(default_factory=Counter)
    acked: int = 0
    in_doubt: int = 0
    lost: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    longest_gap_s: float = 0.0
    longest_gap_cause: str = ""
    high_watermark: int = 0
    seconds: float = 0.0
    writer_answers: dict = field(default_factory=dict)
    done: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.lost and not self.problems

    def format(self) -> str:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "none"
        lines = [
            f"chaos run: seed {self.seed}, {self.nodes} voters ({self.kafka} of them Apache Kafka 4.3.1), "
            f"{self.cycles} cycles in {self.seconds:.1f} s",
            f"faults injected: {sum(self.faults.values())} ({faults})",
            f"records acknowledged: {self.acked} (in doubt, not counted: {self.in_doubt}); "
            f"high watermark at the last check: {self.high_watermark}",
            f"records lost: {len(self.lost)}" + (f" {self.lost[:10]}" if self.lost else ""),
            f"longest time without a leader (no commit): {self.longest_gap_s:.2f} s"
            f" (faults then: {self.longest_gap_cause or '-'})",
            f"writer answers: {dict(sorted(self.writer_answers.items()))}",
            f"problems: {len(self.problems)}",
        ]
        lines += [f"  - {p}" for p in self.problems[:20]]
        lines += [f"replay: --seed {self.seed} --nodes {self.nodes} --kafka {self.kafka} --cycles {self.cycles}"]
        return "\n".join(lines)


def _wait(condition, timeout: float, what: str, halt: threading.Event):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = condition()
        if result:
            return result
        halt.wait(0.1)  # poll interval
    raise TimeoutError(f"no {what} within {timeout:.0f} s")


def _leader_hwm(cluster, monitor) -> int | None:
    agreed = monitor.leader()
    if agreed is None:
        return None
    try:
        q = describe_quorum("127.0.0.1", cluster.nodes[agreed[0]].port, timeout=2.0)
    except (OSError, ValueError):
        return None
    return q.high_watermark if q.error_code == 0 and q.leader_id == agreed[0] and q.high_watermark > 0 else None


def check_cycle(cluster, monitor, writer, halt) -> tuple:
    """Heal, wait for a leader and one new ack, then read and check every log."""
    before = writer.acked_count()
    _wait(monitor.leader, RECOVERY_S, "agreed leader after healing", halt)
    _wait(lambda: writer.acked_count() > before, RECOVERY_S, "acknowledged write after healing", halt)
    with writer.lock:
        acked = [name for name, _ in writer.acked]
        in_doubt = list(writer.in_doubt)
    hwm = _wait(lambda: _leader_hwm(cluster, monitor), RECOVERY_S, "leader high watermark", halt)

    last: dict = {}

    def caught_up():
        # at the high watermark, and holding the same batches below it: a node that led
        # alone while cut off keeps its uncommitted tail until it fetches from the new
        # leader and truncates (legal), so that tail is not yet a disagreement
        logs = last["logs"] = {i: read_node(n.data) for i, n in cluster.nodes.items()}
        if any(l.end_offset < hwm for l in logs.values()):
            return None
        below = [committed_batches(l.batches, hwm) for l in logs.values()]
        return logs if all(b == below[0] for b in below) else None
    try:
        logs = _wait(caught_up, RECOVERY_S, f"every log at the high watermark {hwm}, alike below it", halt)
    except TimeoutError:
        if not last or any(l.end_offset < hwm for l in last["logs"].values()):
            raise
        logs = last["logs"]  # still different below it: the check says where
    return check(logs, hwm, acked, in_doubt, monitor.take_violations() + cluster.doors.strangers()), len(in_doubt)


def run_cycle(cluster, cycle, monitor, halt, timeline) -> list[str]:
    """The cycle's faults in turn, or all at once (a thread each); ``timeline`` gets
    (start, end, what) of each, in the schedule's order. Returns what went wrong
    (a node that did not stop cleanly on SIGTERM)."""
    errors = []

    def one(fault, slot):
        began = time.monotonic()
        try:
            what = run_fault(cluster, fault, monitor.guess(), halt)
        except AssertionError as exc:
            what = f"{fault.describe()} failed"
            errors.append(str(exc))
        slot.append((began, time.monotonic(), what))
    slots = [[] for _ in cycle.faults]
    if cycle.together:
        threads = [threading.Thread(target=one, args=(f, s)) for f, s in zip(cycle.faults, slots)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        for fault, slot in zip(cycle.faults, slots):
            one(fault, slot)
            halt.wait(0.5)  # the writer gets a moment between faults
    timeline += [s[0] for s in slots]
    return errors


def run(workdir: Path, seed: int, nodes: int = 3, cycles: int = 3, scale: float = 1.0,
        on_cycle=print, kafka: int = 0) -> Report:
    """``kafka``: that many of the voters (the highest ids) are Apache Kafka controllers."""
    report = Report(seed, nodes, kafka)
    started = time.monotonic()
    cluster = ChaosCluster(workdir, random_cluster_id(), nodes, kafka_ids=range(nodes - kafka + 1, nodes + 1))
    schedule = Schedule(seed, nodes, scale=scale)
    timeline: list[tuple[float, float, str]] = []  # (start, end, what) of every fault
    monitor = Monitor({i: n.port for i, n in cluster.nodes.items()})
    broker = StandInBroker(cluster.cluster_id, {i: n.port for i, n in cluster.nodes.items()}, monitor)
    writer = Writer({i: n.port for i, n in cluster.nodes.items()}, monitor, prefix=f"chaos{seed % 100000}")
    halt = threading.Event()
    try:
        cluster.start()
        monitor.start()
        _wait(monitor.leader, RECOVERY_S, "first leader", halt)
        broker.start()
        writer.start()
        for c in range(cycles):
            cycle = schedule.cycle(c)
            report.problems += [f"cycle {c}: {e}" for e in run_cycle(cluster, cycle, monitor, halt, timeline)]
            for fault, (_, _, what) in zip(cycle.faults, timeline[-len(cycle.faults):]):
                report.faults[fault.kind] += 1
                report.done.append(what + (" [together]" if cycle.together else ""))
            for i, rc in cluster.crashed().items():
                tail = cluster.nodes[i].log_tail(5).replace("\n", "\n      ")
                report.problems.append(f"cycle {c}: node {i} exited on its own with {rc}:\n      {tail}")
            cluster.heal()
            try:
                verdict, report.in_doubt = check_cycle(cluster, monitor, writer, halt)
            except TimeoutError as exc:
                report.problems.append(f"cycle {c}: {exc}")
                break
            report.cycles = c + 1
            report.acked, report.high_watermark = verdict.acked, verdict.high_watermark
            report.lost = verdict.lost
            report.problems += [f"cycle {c}: {p}" for p in verdict.problems]
            on_cycle(f"cycle {c}: {'; '.join(report.done[-schedule.faults_per_cycle:])} -> "
                     f"acked {verdict.acked}, HWM {verdict.high_watermark}, "
                     f"{'ok' if verdict.ok else 'FAILED'}")
            if not verdict.ok:
                break
    finally:
        writer.stop()
        broker.stop()
        monitor.stop()
        gap = monitor.longest_gap()
        if gap is not None:
            report.longest_gap_s = gap.seconds
            report.longest_gap_cause = "; ".join(what for start, end, what in timeline
                                                 if start - 0.5 <= gap.start <= end + 0.5)
        report.writer_answers = dict(writer.answers)
        report.problems += [f"writer: topic {n} existed on its first attempt" for n in writer.errors]
        cluster.close()
        report.seconds = time.monotonic() - started
    return report
