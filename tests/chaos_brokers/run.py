"""One broker chaos run: three controllers of ours and four Kafka brokers behind the proxies
(``cluster.py``), two topics (RF 3, ``min.insync.replicas=2``, one with
``unclean.leader.election.enable=true``), a VerifiableProducer and a VerifiableConsumer on
each; then ``cycles`` times: the cycle's faults, heal everything, wait until every broker
is unfenced, every partition led, both producers acknowledged again and both consumers
have every acknowledged message, then check (``check.py``). At the end the producers
stop (flushing what they hold) and the last check runs on everything they were told."""
from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from tests.chaos.client import call
from tests.chaos.monitor import Monitor
from tests.chaos.run import _leader_hwm, _wait
from wire.messages import CreateTopicsRequest
from wire.messages.create_topics_request import CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig

from . import check as chk
from .availability import Watch
from .clients import longest_gap_ms, start_clients
from .cluster import BrokerCluster
from .faults import run_fault
from .metadata import read_decisions
from .partition_logs import broker_batches
from .per_fault import CycleSpan, FaultStart, Stretches, per_kind
from .schedule import PARTITIONS, Schedule, recovery_s

log = logging.getLogger(__name__)

CLEAN, UNCLEAN = "chaos-clean", "chaos-unclean"
TOPICS = {CLEAN: False, UNCLEAN: True}  # name -> unclean.leader.election.enable
START_S = 180.0  # brokers registered, topics led, clients' first messages
RECOVERY_S = 90.0  # after healing: brokers unfenced, partitions led, new acks, consumers caught up
DECISIONS_S = 30.0  # an agreed active controller whose log the checks read


@dataclass
class Report:
    seed: int
    elr: bool
    fast_fencing: bool | None  # None: not applicable (Kafka's controllers have no fast fencing)
    controllers: str = "ours"
    cycles: int = 0
    faults: Counter = field(default_factory=Counter)
    done: list[str] = field(default_factory=list)
    acked: dict = field(default_factory=dict)  # topic -> acknowledged messages
    lost: dict = field(default_factory=dict)  # topic -> [(partition, offset)]
    unexplained: list = field(default_factory=list)  # losses on the unclean topic without an unclean election
    duplicated: dict = field(default_factory=dict)  # topic -> [value]
    unclean_elections: list[str] = field(default_factory=list)
    decided: Counter = field(default_factory=Counter)  # elections, unclean, isr changes, fencings
    problems: list[str] = field(default_factory=list)
    hwm_explained: list[str] = field(default_factory=list)  # high watermark drops after unclean elections
    covered: dict = field(default_factory=dict)  # check name -> what its last run read
    leaderless_ms: int = 0
    leaderless_what: str = ""
    ack_gap_ms: int = 0
    seconds: float = 0.0
    per_kind: dict = field(default_factory=dict)  # fault kind -> per_fault.KindFigures

    @property
    def fencing(self) -> str:
        return "n/a" if self.fast_fencing is None else "on" if self.fast_fencing else "off"

    @property
    def ok(self) -> bool:
        return (not self.problems and not self.lost.get(CLEAN) and not self.unexplained
                and not any(self.duplicated.values()))

    def fired(self) -> dict[str, int]:
        """Check name -> the violations it found."""
        out = {name: sum(f"{name}:" in p for p in self.problems) for name in chk.CHECKS}
        out["AcknowledgedConsumed"] += len(self.lost.get(CLEAN, ())) + sum(len(v) for v in self.duplicated.values())
        out["UncleanExplained"] += len(self.unexplained)
        return out

    def unexplained_lost(self) -> int:
        """Acknowledged messages lost with no unclean election to explain them: on the
        clean topic any, on the unclean one those on a partition never elected uncleanly."""
        return len(self.lost.get(CLEAN, ())) + len(self.unexplained)

    def totals(self) -> tuple[int, int, int]:
        return (sum(self.acked.values()), sum(len(v) for v in self.lost.values()),
                sum(len(v) for v in self.duplicated.values()))

    def format(self) -> str:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults.items())) or "none"
        lines = [f"broker chaos run: seed {self.seed}, controllers {self.controllers}, ELR "
                 f"{'on' if self.elr else 'off'}, fast fencing {self.fencing}"
                 f"{' (not applicable: Kafka has none)' if self.fast_fencing is None else ''}, "
                 f"{self.cycles} cycles in {self.seconds:.1f} s",
                 f"faults injected: {sum(self.faults.values())} ({faults})"]
        for topic in TOPICS:
            lost = self.lost.get(topic, [])
            lines.append(f"{topic}: acknowledged {self.acked.get(topic, 0)}, lost {len(lost)}"
                         f"{f' (partition, offset) {lost[:5]}' if lost else ''}, "
                         f"duplicated {len(self.duplicated.get(topic, ()))}")
        lines.append(f"unclean elections: {len(self.unclean_elections)}"
                     f"{f' {self.unclean_elections[:5]}' if self.unclean_elections else ''}; "
                     f"losses they do not explain: {len(self.unexplained)}")
        lines.append("controller decisions: " + (", ".join(f"{k} {v}" for k, v in self.decided.items()) or "none"))
        lines.append("checks fired (what the last check read): " + ", ".join(
            f"{name} {n}" + (f" ({self.covered[name]})" if name in self.covered else "")
            for name, n in self.fired().items()))
        lines += [f"  high watermark back after an unclean election: {e}" for e in self.hwm_explained[:5]]
        lines.append(f"the longest leaderless stretch: {self.leaderless_what or '-'}")
        if self.per_kind:
            lines.append("per fault class: faults, elections, ISR changes, unclean, lost, longest leaderless ms, "
                         "longest without an ack ms")
            lines += [f"  {kind}: {k.count}, {k.elections}, {k.isr_changes}, {k.unclean}, {k.lost}, "
                      f"{k.leaderless_ms}, {k.ack_gap_ms}" for kind, k in sorted(self.per_kind.items())]
        lines.append(f"problems: {len(self.problems)}")
        lines += [f"  - {p}" for p in self.problems[:20]]
        lines.append(f"replay: CHAOS_SEED={self.seed} --controllers {self.controllers} --elr "
                     f"{'on' if self.elr else 'off'}" + ("" if self.fast_fencing is None else
                                                         f" --fast-fencing {self.fencing}"))
        n, lost, dup = self.totals()
        lines.append(f"acknowledged {n}, lost {lost}, duplicated {dup}, longest leaderless {self.leaderless_ms} ms, "
                     f"longest without an ack {self.ack_gap_ms} ms")
        return "\n".join(lines)

    def summary(self) -> dict:
        """The figures ``side_by_side.py`` compares, as plain JSON values."""
        n, _, dup = self.totals()
        return {"controllers": self.controllers, "seed": self.seed, "cycles": self.cycles, "elr": self.elr,
                "fast_fencing": self.fast_fencing, "ok": self.ok, "acked": n,
                "lost": {t: len(self.lost.get(t, ())) for t in TOPICS}, "unexplained": len(self.unexplained),
                "duplicated": dup, "leaderless_ms": self.leaderless_ms, "ack_gap_ms": self.ack_gap_ms,
                "per_kind": {kind: k.to_dict() for kind, k in sorted(self.per_kind.items())},
                "problems": len(self.problems), "seconds": round(self.seconds, 1)}


def placement(seed: int, brokers) -> dict[str, list[list[int]]]:
    """Each topic's replicas, partition by partition (the first leads), drawn from the
    seed: both sides of a comparison start with the same leaders, so a fault on "the
    broker that leads X" hits the same partitions (the controllers' own placement is
    random). Leaders go round a shuffled order of the brokers."""
    rng = random.Random(f"placement {seed}")
    order = rng.sample(list(brokers), len(brokers))
    out, i = {}, 0
    for name in TOPICS:
        out[name] = []
        for _ in range(PARTITIONS):
            leader = order[i % len(order)]
            i += 1
            out[name].append([leader, *rng.sample([b for b in brokers if b != leader], 2)])
    return out


def create_topics(cluster: BrokerCluster, seed: int, halt) -> None:
    replicas = placement(seed, cluster.broker_ids)

    def created(name: str, unclean: bool) -> bool:
        configs = [CreatableTopicConfig(name="min.insync.replicas", value="2"),
                   CreatableTopicConfig(name="unclean.leader.election.enable", value=str(unclean).lower())]
        assignments = [CreatableReplicaAssignment(partition_index=i, broker_ids=ids)
                       for i, ids in enumerate(replicas[name])]
        body = CreateTopicsRequest(topics=[CreatableTopic(name=name, num_partitions=-1, replication_factor=-1,
                                                          assignments=assignments, configs=configs)],
                                   timeout_ms=20000)
        try:
            code = call(cluster.brokers[cluster.broker_ids[0]].port, body, 7, 30.0).topics[0].error_code
        except (OSError, ValueError):
            return False
        return code in (0, 36)  # created, or TOPIC_ALREADY_EXISTS from an earlier try
    for name, unclean in TOPICS.items():
        _wait(lambda: created(name, unclean), START_S, f"topic {name} created", halt)


class Harness:
    """The run's moving parts and the reads the checks need."""

    def __init__(self, workdir: Path, seed: int, elr: bool, fast_fencing: bool, controllers: str = "ours") -> None:
        self.workdir = Path(workdir)
        self.cluster = BrokerCluster(self.workdir, elr, bool(fast_fencing), controllers=controllers)
        ports = {i: n.port for i, n in self.cluster.controllers.nodes.items()}
        self.monitor = Monitor(ports)
        self.watch = Watch(self.cluster, TOPICS)
        self.watch.stretches = Stretches()  # every stretch, for the per-fault figures
        self.spans: list[CycleSpan] = []  # when each cycle's faults began and it ended
        self.latest = None  # the decisions the last check read
        self.schedule = Schedule(seed, TOPICS)
        self.clients: dict = {}
        self.halt = threading.Event()
        self.mark = 0  # the controller's log end at the last check
        self.decided: dict = {}  # what the controller decided since the check before
        self.fault_problems: list[str] = []  # what the faults saw go wrong (no takeover, a shutdown hanging)
        self.recovered_s = 0.0  # the last recovery: from healing to new acks on both topics

    def decisions(self):
        """What the active controller committed, or None while there is none."""
        agreed = self.monitor.leader()
        hwm = _leader_hwm(self.cluster.controllers, self.monitor)
        if agreed is None or hwm is None:
            return None
        return read_decisions(self.cluster.controllers.nodes[agreed[0]].data, hwm)

    def settled(self, full_isr: bool):
        """The decisions once every broker is unfenced and every partition led (with a full
        ISR if ``full_isr``), else None."""
        d = self.decisions()
        if d is None or any(d.fenced.get(b, True) for b in self.cluster.broker_ids):
            return None
        for topic in TOPICS:
            parts = d.partitions(topic)
            if len(parts) != PARTITIONS:
                return None
            for p in parts:
                s = d.latest(topic, p)
                if s.leader < 0 or (full_isr and len(s.isr) < 3):
                    return None
        return d

    def checkpoints(self) -> dict:
        return {b: chk.broker_checkpoints(self.cluster.brokers[b].data_dir, TOPICS) for b in self.cluster.broker_ids}

    def start(self) -> None:
        h = self.halt
        self.cluster.start()
        self.monitor.start()
        _wait(self.monitor.leader, START_S, "first active controller", h)
        _wait(lambda: (d := self.decisions()) is not None and len(d.fenced) == 4 and not any(d.fenced.values()),
              START_S, "four unfenced brokers", h)
        create_topics(self.cluster, self.schedule.seed, h)
        _wait(lambda: self.settled(full_isr=True), START_S, "cluster with every partition led by a full ISR", h)
        self.watch.start()
        for topic in TOPICS:
            self.clients[topic] = start_clients(self.workdir / "clients", self.cluster.bootstrap(), topic)

        def flowing():
            for c in self.clients.values():
                c.poll()
                c.alive()
            return all(c.producer.acked and c.consumer.consumed for c in self.clients.values())
        _wait(flowing, START_S, "both producers' first acks and both consumers' first messages", h)

    def fault_start(self, kind: str) -> FaultStart:
        return FaultStart(kind, time.monotonic(), int(time.time() * 1000),
                          _leader_hwm(self.cluster.controllers, self.monitor))

    def run_cycle(self, cycle) -> list[str]:
        """The cycle's faults in turn, or together (a thread each); what was done."""
        done: list = [None] * len(cycle.faults)
        span = CycleSpan(len(self.spans), cycle.together, [None] * len(cycle.faults))
        self.spans.append(span)

        def one(i, fault):
            span.faults[i] = self.fault_start(fault.kind)
            done[i] = run_fault(self.cluster, fault, self.monitor.guess(), self.watch, self.halt,
                                monitor=self.monitor, problems=self.fault_problems)
        if cycle.together:
            threads = [threading.Thread(target=one, args=(i, f)) for i, f in enumerate(cycle.faults)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            for i, fault in enumerate(cycle.faults):
                one(i, fault)
                self.halt.wait(1.0)  # the clients get a moment between faults
        return [w or f"{f.describe()} not done" for w, f in zip(done, cycle.faults)]

    def recover(self, deadline_s: float = RECOVERY_S) -> tuple[list[str], dict | None]:
        """After healing: wait for a settled cluster, new acks and consumers caught up
        (each within ``deadline_s``); what did not come, and the acknowledged messages the
        consumers were waited for."""
        problems = []
        h = self.halt
        started = time.monotonic()
        before = {t: len(c.producer.acked) for t, c in self.clients.items()}
        try:
            _wait(self.monitor.leader, deadline_s, "active controller after healing", h)
            _wait(lambda: self.settled(full_isr=False), deadline_s,
                  "settled cluster (every broker unfenced, every partition led)", h)
        except TimeoutError as exc:
            d = self.decisions()
            problems.append(str(exc))
            if d is not None:
                problems += chk.offline_with_live_member(d, TOPICS, self.cluster.broker_ids)
            return problems, None

        def acked_again():
            for c in self.clients.values():
                c.poll()
                c.alive()
            return all(len(c.producer.acked) > before[t] for t, c in self.clients.items())
        try:
            _wait(acked_again, deadline_s, "a new ack on both topics after healing", h)
        except TimeoutError as exc:
            problems.append(str(exc))
        self.recovered_s = time.monotonic() - started
        return problems, self.catch_up(deadline_s)

    def catch_up(self, deadline_s: float = RECOVERY_S) -> dict:
        """Until the consumers have every message acknowledged so far (or the deadline);
        those messages, by topic (the producers go on acknowledging meanwhile)."""
        for c in self.clients.values():
            c.producer.poll()
        wanted = {t: dict(c.producer.acked) for t, c in self.clients.items()}

        def caught_up():
            for c in self.clients.values():
                c.consumer.poll()
            return all(c.consumer.consumed.get(k) == v for t, c in self.clients.items()
                       for k, v in wanted[t].items())
        try:
            _wait(caught_up, deadline_s, "consumers caught up", self.halt)
        except TimeoutError:
            pass  # what they miss is counted as lost by the check
        return wanted

    def partition_logs(self) -> dict:
        return {b: broker_batches(self.cluster.brokers[b].data_dir, TOPICS) for b in self.cluster.broker_ids}

    def one_writer(self) -> tuple[list[str], int]:
        """OneWriterPerEpoch's problems, and the batches read. What it finds is read again
        and kept only if still there: a follower truncating while its files are read can
        show a mix of before and after."""
        logs = self.partition_logs()
        found = chk.one_writer_per_epoch(logs)
        if found:
            again = chk.one_writer_per_epoch(self.partition_logs())
            found = [p for p in found if p in again]
        return found, sum(len(v) for parts in logs.values() for v in parts.values())

    def check(self, report: Report, wanted: dict) -> list[str]:
        """``wanted``: topic -> the acknowledged messages the consumers were waited for."""
        problems = []
        # what the brokers showed and wrote, before the decisions: brokers only learn committed records
        shown, hwms = self.watch.snapshot()
        checkpoints = self.checkpoints()
        writers, batches = self.one_writer()
        try:  # the monitor's view of the leader can lapse for a moment on a loaded machine
            d = _wait(self.decisions, DECISIONS_S, "active controller to read the decisions from", self.halt)
        except TimeoutError as exc:
            return [str(exc)]
        self.latest = d
        for topic in TOPICS:
            c = self.clients[topic]
            c.consumer.poll()
            acks = chk.acknowledged_consumed(wanted[topic], c.consumer.consumed, c.producer.replaced)
            report.acked[topic], report.lost[topic], report.duplicated[topic] = acks.acked, acks.lost, acks.duplicated
        report.unexplained = chk.unexplained_losses(UNCLEAN, report.lost[UNCLEAN], d)
        report.unclean_elections = [f"{t}-{p} to {s.leader} in epoch {s.epoch} (offset {s.offset})"
                                    for (t, p), states in sorted(d.unclean_elections().items()) for s in states]
        self.decided, self.mark = d.since(self.mark), d.end
        report.decided.update(self.decided)
        problems += chk.epochs_grow(d)
        problems += chk.broker_epochs(checkpoints, d)
        problems += writers
        back, report.hwm_explained = chk.hwm_never_back(hwms, d)
        problems += back
        problems += chk.controller_explains_brokers(shown, d)
        problems += self.monitor.take_violations()
        problems += self.cluster.unknown_diallers()
        report.covered = {"AcknowledgedConsumed": f"{sum(report.acked.values())} acks",
                          "OneWriterPerEpoch": f"{batches} batches on {len(self.cluster.broker_ids)} brokers",
                          "HighWatermarkNeverBack": f"{sum(len(v) for v in hwms.values())} changes",
                          "ControllerExplainsBrokers": f"{len(shown)} states shown"}
        return problems

    def close(self) -> None:
        self.halt.set()
        for c in self.clients.values():
            c.close()
        self.watch.stop()
        self.monitor.stop()
        self.cluster.close()


def explained_offsets(lost, unexplained, decisions) -> list[int]:
    """For each loss on the unclean topic that an unclean election explains, the offset in
    the controller's log of the first unclean election of its partition (the per-fault
    figures give the loss to the fault whose window holds it, not to the cycle whose
    check first saw the acknowledged offset written over)."""
    if decisions is None:
        return []
    first = {p: min(s.offset for s in states) for (t, p), states in decisions.unclean_elections().items()
             if t == UNCLEAN}
    skip = set(unexplained)
    return [first[k[0]] for k in lost if k not in skip and k[0] in first]


def end_span(h: Harness, report: Report, lost_before: int) -> None:
    """The cycle's end for the per-fault figures: now, and what its check read and found."""
    if h.spans and h.spans[-1].ended == 0.0:
        span = h.spans[-1]
        span.faults = [f for f in span.faults if f is not None]  # a fault that never began (the run stopped)
        span.ended, span.ended_wall_ms = time.monotonic(), int(time.time() * 1000)
        span.end_offset = h.latest.end if h.latest is not None else None
        span.lost = max(0, report.unexplained_lost() - lost_before)


def run(workdir: Path, seed: int, cycles: int = 3, elr: bool = True, fast_fencing: bool | None = True,
        on_cycle=print, controllers: str = "ours") -> Report:
    """``controllers``: ``ours`` or ``kafka`` (then ``fast_fencing`` is None: Kafka's have none)."""
    if controllers == "kafka":
        fast_fencing = None
    report = Report(seed, elr, fast_fencing, controllers)
    started = time.monotonic()
    h = Harness(workdir, seed, elr, fast_fencing, controllers)
    try:
        h.start()
        on_cycle(f"started in {time.monotonic() - started:.1f} s")
        for c in range(cycles):
            cycle = h.schedule.cycle(c)
            done = h.run_cycle(cycle)
            for fault in cycle.faults:
                report.faults[fault.kind] += 1
            report.done += [w + (" [together]" if cycle.together else "") for w in done]
            problems = [f"{name} exited on its own with {rc}" for name, rc in h.cluster.crashed().items()]
            problems += h.fault_problems
            h.fault_problems.clear()
            h.cluster.heal()
            unhealed, wanted = h.recover(recovery_s(cycle))
            problems += unhealed
            lost_before = report.unexplained_lost()
            if wanted is not None:
                problems += h.check(report, wanted)
            end_span(h, report, lost_before)
            report.problems += [f"cycle {c}: {p}" for p in problems]
            report.cycles = c + 1
            n, lost, dup = report.totals()
            decided = ", ".join(f"{k} {v}" for k, v in h.decided.items() if v) or "no decisions"
            on_cycle(f"cycle {c}: {'; '.join(done)}{' [together]' if cycle.together else ''} -> {decided}; "
                     f"recovered in {h.recovered_s:.1f} s; acked {n}, lost {lost}, duplicated {dup}, "
                     f"{'ok' if report.ok else 'FAILED'}")
            if not report.ok:
                break
        if report.ok:  # the producers flush and stop; the last check covers all they were told
            for c in h.clients.values():
                c.producer.stop()
            report.problems += [f"end: {p}" for p in h.check(report, h.catch_up())]
    except Exception as exc:  # noqa: BLE001 (a harness step that failed fails the run, with its report)
        log.exception("broker chaos run stopped")
        report.problems.append(f"{type(exc).__name__}: {exc}")
    finally:
        report.leaderless_ms, report.leaderless_what = h.watch.longest_ms()
        report.ack_gap_ms = max((longest_gap_ms(c.producer.ack_times) for c in h.clients.values()), default=0)
        end_span(h, report, report.unexplained_lost())
        with h.watch.lock:
            stretches = h.watch.stretches.all(time.monotonic())
        explained = explained_offsets(report.lost.get(UNCLEAN, ()), report.unexplained, h.latest)
        report.per_kind = per_kind(h.spans, h.latest, stretches, [c.producer.ack_times for c in h.clients.values()],
                                   explained)
        h.close()
        report.seconds = time.monotonic() - started
    return report
