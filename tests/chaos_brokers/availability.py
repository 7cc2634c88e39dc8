"""How long partitions went without a leader, seen as a client sees it: a thread asks one
running broker after another for the topics' Metadata (v12, our codecs, a fresh
connection each time) every ``POLL_S``. A partition is leaderless while the answer names
no leader (or an error), or a leader the harness has killed or stopped. Each such
stretch ends at the first answer naming a usable leader; the longest is reported. The
latest leaders also tell the faults which broker leads a partition.

The same thread keeps, for the checks (``check.py``):

* every (leader, leader epoch, ISR) a broker showed for a partition (``shown``), which
  the controller's records must explain;
* the high watermark a consumer would be given: after each Metadata answer it asks the
  leader of each partition, as the freshest answer so far names it (highest leader
  epoch, as a client keeps), for ListOffsets LATEST at READ_UNCOMMITTED with that epoch
  as ``current_leader_epoch``: Kafka answers with the high watermark (the log end
  offset only to a request without an isolation level, the last stable offset at
  READ_COMMITTED), or OFFSET_NOT_AVAILABLE while a new leader's high watermark is below
  its epoch's start, and a fenced or unknown epoch error to a stale leader."""
from __future__ import annotations

import threading
import time

from tests.chaos.client import call
from dataclasses import dataclass

from wire.messages import ListOffsetsRequest, MetadataRequest
from wire.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from wire.messages.metadata_request import MetadataRequestTopic

POLL_S = 0.2
TIMEOUT_S = 1.0
LIST_OFFSETS_VERSION = 7  # current_leader_epoch since v4, isolation level since v2
LATEST = -1  # ListOffsets timestamp: the latest offset
READ_UNCOMMITTED = 0
LEADER_NOT_AVAILABLE = 5  # the partition's leader is fenced or has no listener here


def leaders_from(resp, topics) -> dict[tuple[str, int], int]:
    """(topic, partition) -> leader (-1 for none or an error) of a Metadata answer."""
    out = {}
    for t in resp.topics:
        if t.name in topics:
            for p in t.partitions:
                out[(t.name, p.partition_index)] = p.leader_id if p.error_code == 0 else -1
    return out


@dataclass(frozen=True)
class PartitionView:
    """One broker's Metadata answer for one partition; ``leader`` is None when it answered
    LEADER_NOT_AVAILABLE (it then names no leader, though its records hold one)."""
    leader: int | None
    epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


def views_from(resp, topics) -> dict[tuple[str, int], PartitionView]:
    """(topic, partition) -> what a Metadata answer shows, for the partitions answered
    without error (or with LEADER_NOT_AVAILABLE)."""
    out = {}
    for t in resp.topics:
        if t.name in topics and t.error_code == 0:
            for p in t.partitions:
                if p.error_code in (0, LEADER_NOT_AVAILABLE):
                    leader = p.leader_id if p.error_code == 0 else None
                    out[(t.name, p.partition_index)] = PartitionView(leader, p.leader_epoch, tuple(sorted(p.isr_nodes)),
                                                                     tuple(p.replica_nodes))
    return out


def list_offsets_latest(asked: dict[tuple[str, int], int]) -> ListOffsetsRequest:
    """ListOffsets LATEST at READ_UNCOMMITTED, as a consumer: ``asked`` partition -> its epoch."""
    topics = sorted({t for t, _ in asked})
    return ListOffsetsRequest(replica_id=-1, isolation_level=READ_UNCOMMITTED, topics=[
        ListOffsetsTopic(name=t, partitions=[ListOffsetsPartition(partition_index=p, current_leader_epoch=e,
                                                                  timestamp=LATEST)
                                             for (tt, p), e in sorted(asked.items()) if tt == t])
        for t in topics])


class HighWatermarks:
    """(leader epoch, high watermark) answers per partition in the order they came, each
    kept only when it differs from the one before."""

    def __init__(self) -> None:
        self.series: dict[tuple[str, int], list[tuple[int, int]]] = {}

    def observe(self, key, epoch: int, hwm: int) -> None:
        answers = self.series.setdefault(key, [])
        if not answers or answers[-1] != (epoch, hwm):
            answers.append((epoch, hwm))

    def observe_answer(self, resp, asked: dict[tuple[str, int], int]) -> None:
        """A ListOffsets answer to ``list_offsets_latest(asked)``."""
        for t in resp.topics:
            for p in t.partitions:
                key = (t.name, p.partition_index)
                if p.error_code == 0 and p.offset >= 0 and key in asked:
                    self.observe(key, p.leader_epoch if p.leader_epoch >= 0 else asked[key], p.offset)


class Leaderless:
    """Stretches without a usable leader, fed (time, leaders, unusable brokers) answers."""

    def __init__(self) -> None:
        self.since: dict[tuple[str, int], float] = {}  # partition -> start of its current stretch
        self.longest_s = 0.0
        self.longest_what = ""

    def observe(self, now: float, leaders: dict, unusable) -> None:
        for key, leader in leaders.items():
            if leader < 0 or leader in unusable:
                self.since.setdefault(key, now)
            elif key in self.since:
                self.end(key, now)

    def end(self, key, now: float) -> None:
        took = now - self.since.pop(key)
        if took > self.longest_s:
            self.longest_s, self.longest_what = took, f"{key[0]}-{key[1]}"

    def longest_ms(self, now: float | None = None) -> int:
        """The longest stretch, counting those still open at ``now``."""
        now = time.monotonic() if now is None else now
        still = max((now - t for t in self.since.values()), default=0.0)
        return int(max(self.longest_s, still) * 1000)


class Watch(threading.Thread):
    def __init__(self, cluster, topics) -> None:
        super().__init__(daemon=True, name="chaos-brokers-watch")
        self.cluster, self.topics = cluster, tuple(topics)
        self.halt = threading.Event()
        self.lock = threading.Lock()
        self.stretches = Leaderless()
        self.leaders: dict[tuple[str, int], int] = {}
        self.fresh: dict[tuple[str, int], PartitionView] = {}  # the highest epoch's view of each partition
        self.shown: dict[tuple, int] = {}  # (topic, partition, leader, epoch, ISR) -> first broker showing it
        self.listed: set[int] = set()  # the brokers (unfenced) in the latest Metadata answer
        self.hwms = HighWatermarks()

    def _ask(self, broker: int):
        body = MetadataRequest(topics=[MetadataRequestTopic(name=t) for t in self.topics],
                               allow_auto_topic_creation=False)
        return call(self.cluster.brokers[broker].port, body, 12, TIMEOUT_S)

    def run(self) -> None:
        turn = 0
        while not self.halt.wait(POLL_S):
            unusable = self.cluster.unavailable()
            live = [b for b in self.cluster.broker_ids if b not in unusable]
            if not live:
                continue
            turn += 1
            broker = live[turn % len(live)]
            try:
                resp = self._ask(broker)
            except (OSError, ValueError):
                continue
            leaders = leaders_from(resp, self.topics)
            with self.lock:
                self.leaders.update(leaders)
                self.stretches.observe(time.monotonic(), leaders, self.cluster.unavailable())
                self.note_views(broker, resp)
            self.ask_high_watermarks()

    def note_views(self, broker: int, resp) -> None:
        self.listed = {b.node_id for b in resp.brokers}
        for key, v in views_from(resp, self.topics).items():
            self.shown.setdefault((*key, v.leader, v.epoch, v.isr), broker)
            if key not in self.fresh or v.epoch >= self.fresh[key].epoch:
                self.fresh[key] = v

    def ask_high_watermarks(self) -> None:
        """Each partition's leader (as the freshest view names it) for its high watermark."""
        unusable = self.cluster.unavailable()
        by_leader: dict[int, dict[tuple[str, int], int]] = {}
        with self.lock:
            for key, v in self.fresh.items():
                if v.leader is not None and v.leader in self.cluster.brokers and v.leader not in unusable:
                    by_leader.setdefault(v.leader, {})[key] = v.epoch
        for leader, asked in sorted(by_leader.items()):
            try:
                resp = call(self.cluster.brokers[leader].port, list_offsets_latest(asked), LIST_OFFSETS_VERSION,
                            TIMEOUT_S)
            except (OSError, ValueError):
                continue
            with self.lock:
                self.hwms.observe_answer(resp, asked)

    def view(self, topic: str, partition: int) -> PartitionView | None:
        """The freshest view of a partition (highest leader epoch; the latest of that epoch)."""
        with self.lock:
            return self.fresh.get((topic, partition))

    def snapshot(self) -> tuple[dict, dict]:
        """(states shown, high watermark series) so far, copied."""
        with self.lock:
            return dict(self.shown), {k: list(v) for k, v in self.hwms.series.items()}

    def leader(self, topic: str, partition: int) -> int:
        with self.lock:
            return self.leaders.get((topic, partition), -1)

    def longest_ms(self) -> tuple[int, str]:
        with self.lock:
            return self.stretches.longest_ms(), self.stretches.longest_what

    def stop(self) -> None:
        self.halt.set()
        if self.is_alive():
            self.join(5)
