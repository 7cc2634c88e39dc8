"""How long partitions went without a leader, seen as a client sees it: a thread asks one
running broker after another for the topics' Metadata (v12, our codecs, a fresh
connection each time) every ``POLL_S``. A partition is leaderless while the answer names
no leader (or an error), or a leader the harness has killed or stopped. Each such
stretch ends at the first answer naming a usable leader; the longest is reported. The
latest leaders also tell the faults which broker leads a partition."""
from __future__ import annotations

import threading
import time

from tests.chaos.client import call
from wire.messages import MetadataRequest
from wire.messages.metadata_request import MetadataRequestTopic

POLL_S = 0.2
TIMEOUT_S = 1.0


def leaders_from(resp, topics) -> dict[tuple[str, int], int]:
    """(topic, partition) -> leader (-1 for none or an error) of a Metadata answer."""
    out = {}
    for t in resp.topics:
        if t.name in topics:
            for p in t.partitions:
                out[(t.name, p.partition_index)] = p.leader_id if p.error_code == 0 else -1
    return out


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
            try:
                resp = self._ask(live[turn % len(live)])
            except (OSError, ValueError):
                continue
            leaders = leaders_from(resp, self.topics)
            with self.lock:
                self.leaders.update(leaders)
                self.stretches.observe(time.monotonic(), leaders, self.cluster.unavailable())

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
