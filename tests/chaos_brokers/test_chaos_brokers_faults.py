"""The broker chaos harness's fault kinds of issue 40 (``schedule.py``, ``faults.py``, the
broker helpers of ``cluster.py``, ``small_disk.py``), without a JVM: the schedule drawn
from a seed (replayable, every kind reached early, each parameter in its range), the
recovery deadline per kind, and each fault carried out on a played cluster whose
brokers are small real processes (SIGTERM, exit codes, a tmpfs filled until a writer
stops) and whose proxies and monitor record what they are told."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import pytest

from tests.chaos.schedule import Cycle, Fault
from tests.chaos_brokers import faults as flt
from tests.chaos_brokers.cluster import BrokerCluster
from tests.chaos_brokers.run import TOPICS
from tests.chaos_brokers.schedule import (HEARTBEAT_S, KINDS, RECOVERY_DEFAULT_S, RECOVERY_S, REPLICA_LAG_S,
                                          SESSION_S, Schedule, recovery_s)
from tests.chaos_brokers.small_disk import FILLER, SmallDisk

NEW_KINDS = ("isolate_active_controller", "flap", "delay", "controlled_shutdown", "disk_full")


def faults_of(seed: int, cycles: int) -> list[tuple[Cycle, Fault]]:
    s = Schedule(seed, TOPICS)
    return [(c, f) for i in range(cycles) for c in [s.cycle(i)] for f in c.faults]


# -- the schedule ---------------------------------------------------------------------------

def test_the_same_seed_gives_the_same_faults_and_parameters():
    def drawn(seed):
        return [(f.describe(), c.together) for c, f in faults_of(seed, 30)]
    assert drawn(11) == drawn(11)
    assert drawn(11) != drawn(12)
    assert {d.split("(")[0] for d, _ in drawn(11)} >= set(NEW_KINDS)


@pytest.mark.parametrize("seed", [0, 1, 2, 7, 12345])
def test_the_first_cycles_go_through_every_kind_pauses_included(seed):
    kinds = [f.kind for _, f in faults_of(seed, len(KINDS))]
    assert kinds[:len(KINDS)] and set(kinds[:len(KINDS)]) == set(KINDS)
    assert {"pause_short", "pause_long"} <= set(kinds) and set(NEW_KINDS) <= set(kinds)


def test_every_parameter_is_in_its_range():
    seen = Counter()
    for seed in range(200):
        for cycle, f in faults_of(seed, 25):
            seen[f.kind] += 1
            if f.kind == "pause_short":
                assert f.seconds < SESSION_S
            elif f.kind == "pause_long":
                assert f.seconds > SESSION_S
            elif f.kind == "isolate_active_controller":
                assert f.on_leader and 4.0 <= f.seconds <= 1.6 * SESSION_S and f.params["cut"] in ("held", "refused")
            elif f.kind == "flap":
                periods = f.params["periods"]
                assert 3 <= len(periods) <= 6 and f.seconds == round(sum(periods), 1)
                assert all(p < HEARTBEAT_S or p > REPLICA_LAG_S for p in periods)
                assert min(periods) < HEARTBEAT_S and max(periods) > REPLICA_LAG_S  # both in every flap
                assert f.params["link"] in ("controllers", "broker")
                assert ("peer" in f.params) == (f.params["link"] == "broker")
                seen[f"flap {f.params['link']}"] += 1
            elif f.kind == "delay":
                one_way = f.params["latency_ms"] / 1000
                if f.params["session"] == "below":  # a round trip within half the broker's request timeout
                    assert 2 * one_way < 1.0
                else:
                    assert one_way > SESSION_S and f.seconds > one_way
                seen[f"delay {f.params['session']}"] += 1
            if "after_s" in f.params:
                assert f.kind == "controlled_shutdown" and cycle.together and len(cycle.faults) == 2
                other = next(o for o in cycle.faults if o is not f)
                assert 0 < f.params["after_s"] < other.seconds
                seen["shutdown in the middle of another fault"] += 1
    for what in (*KINDS, "flap controllers", "flap broker", "delay below", "delay above",
                 "shutdown in the middle of another fault"):
        assert seen[what] > 0, what


def test_the_recovery_deadline_is_the_slowest_kind_of_the_cycle():
    def cycle(*kinds):
        return Cycle([Fault(k, 1.0) for k in kinds], False)
    assert recovery_s(cycle("flap")) == RECOVERY_DEFAULT_S
    assert recovery_s(cycle("flap", "disk_full")) == RECOVERY_S["disk_full"] > RECOVERY_DEFAULT_S
    assert recovery_s(cycle("isolate_active_controller")) == RECOVERY_S["isolate_active_controller"]


# -- the small disk ---------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    disk = SmallDisk(tmp_path / "disk", 4)
    if not disk.mount():
        pytest.skip(f"disk_full needs a tmpfs: {disk.why_not}")
    try:
        yield disk
    finally:
        disk.unmount()


def test_a_small_disk_fills_until_nothing_fits_then_frees_and_unmounts(small_disk):
    (small_disk.path / "before").write_bytes(b"x" * 100_000)
    written = small_disk.fill()
    assert 3 << 20 < written < 4 << 20
    with pytest.raises(OSError, match="No space left"):
        with open(small_disk.path / "more", "wb", buffering=0) as f:
            f.write(b"y" * 8192)
    assert small_disk.free() and not (small_disk.path / FILLER).exists()
    (small_disk.path / "more").write_bytes(b"y" * 8192)
    assert os.path.ismount(small_disk.path)
    small_disk.unmount()
    assert not os.path.ismount(small_disk.path) and not small_disk.mounted


# -- a played cluster: fake proxies, doors and monitor; brokers as small processes ------------

READY = "open(sys.argv[1] + '/ready', 'w').close()"  # its handlers are in place
WRITER = f"""
import errno, os, sys, time
d = sys.argv[1]
{READY}
n = 0
while True:  # as a broker appends to its logs, exiting 1 on a full disk as Kafka halts
    n += 1
    try:
        with open(os.path.join(d, "log"), "ab") as f:
            f.write(b"r" * 4096)
    except OSError as exc:
        sys.exit(1 if exc.errno == errno.ENOSPC else 2)
    time.sleep(0.02)  # the broker's pace, not a synchronisation
"""
CONTROLLED = f"""
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: (time.sleep(0.3), sys.exit(143)))  # a shutdown takes a moment
{READY}
while True:
    time.sleep(1)
"""
DEAF = f"""
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a shutdown the controller never lets finish
{READY}
while True:
    time.sleep(1)
"""


class StubBroker:
    def __init__(self, data_dir, script: str) -> None:
        self.data_dir, self.script = data_dir, script
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.proc = None
        self.starts = 0

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        ready = self.data_dir / "ready"
        ready.unlink(missing_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", self.script, str(self.data_dir)], start_new_session=True)
        self.starts += 1
        deadline = time.monotonic() + 20
        while not ready.exists():
            assert time.monotonic() < deadline and self.proc.poll() is None, "the stub broker did not start"
            time.sleep(0.01)  # poll interval

    def stop(self, graceful: bool = True) -> None:
        if self.running:
            os.killpg(self.proc.pid, signal.SIGTERM if graceful else signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(10)

    def close(self) -> None:
        self.stop(graceful=False)


class Recorder:
    def __init__(self) -> None:
        self.calls: list = []
        self.lock = threading.Lock()

    def record(self, *call) -> None:
        with self.lock:
            self.calls.append(call)


class FakeProxies(Recorder):
    def cut(self, pairs, state) -> None:
        self.record("cut", frozenset(pairs), state)

    def restore(self, pairs) -> None:
        self.record("restore", frozenset(pairs))

    def delay(self, seconds, pairs=None) -> None:
        self.record("delay", frozenset(pairs), seconds)


class FakeDoors(Recorder):
    def shut(self, b) -> None:
        self.record("shut", b)

    def open(self, b) -> None:
        self.record("open", b)


class FakeController:
    def __init__(self, node_id: int) -> None:
        self.node_id = node_id

    def log_tail(self, n: int = 60) -> str:
        return f"fetching from 1\nCompleted transition to ProspectiveState(epoch=5) (node {self.node_id})\nfetching"


class FakeControllers:
    ids = [1, 2, 3]

    def __init__(self) -> None:
        self.nodes = {i: FakeController(i) for i in self.ids}

    def crashed(self) -> dict:
        return {}


def played(tmp_path, script: str = CONTROLLED, disk_mb: int = 0) -> BrokerCluster:
    """A BrokerCluster's broker side over stub brokers (ids 100-103), no controllers."""
    c = BrokerCluster.__new__(BrokerCluster)
    c.broker_ids = [100, 101, 102, 103]
    c.brokers = {b: StubBroker(tmp_path / f"broker{b}" / "metadata", script) for b in c.broker_ids}
    c.controllers, c.proxies, c.doors = FakeControllers(), FakeProxies(), FakeDoors()
    c.stopped, c.down, c.leaving = set(), set(), set()
    c.locks = {b: threading.RLock() for b in c.broker_ids}
    c.disks = {b: SmallDisk(c.brokers[b].data_dir, disk_mb) for b in c.broker_ids}
    return c


@pytest.fixture
def cluster(tmp_path):
    made = []

    def make(script: str = CONTROLLED, disk_mb: int = 0, start=(101,)):
        c = played(tmp_path, script, disk_mb)
        made.append(c)
        if disk_mb:
            for b in start:
                if not c.disks[b].mount():
                    pytest.skip(f"disk_full needs a tmpfs: {c.disks[b].why_not}")
        for b in start:
            c.brokers[b].start()
        return c
    yield make
    for c in made:
        for b in c.broker_ids:
            c.brokers[b].close()
            c.disks[b].unmount()


class FakeWatch:
    def __init__(self, leaders=None) -> None:
        self.lock = threading.Lock()
        self.leaders = dict(leaders or {})

    def leader(self, topic, p) -> int:
        return self.leaders.get((topic, p), -1)


class FakeMonitor:
    """Controller 1 leads epoch 5 until ``taken`` is set, then controller 2 epoch 6, with
    controller 1 following it once ``rejoined`` is set."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.taken, self.rejoined = threading.Event(), threading.Event()
        self.latest: dict = {}

    def leader(self):
        with self.lock:
            self.latest[1] = (time.monotonic(), 2 if self.rejoined.is_set() else 1, -1 if self.taken.is_set() else 5, 0)
        return (2, 6) if self.taken.is_set() else (1, 5)


def fault(kind: str, seconds: float, follower: int = 1, **params) -> Fault:
    return Fault(kind, seconds, follower=follower, params=params)


def test_flap_cuts_and_restores_the_link_in_turn_and_ends_restored(cluster):
    c = cluster(start=())
    halt = threading.Event()
    what = flt.run_fault(c, fault("flap", 0.1, cut="refused", link="controllers", periods=[0.02, 0.02, 0.02]),
                         1, FakeWatch(), halt)
    to_controllers = frozenset({(101, 1), (101, 2), (101, 3), (1, 101), (2, 101), (3, 101)})
    assert c.proxies.calls == [("cut", to_controllers, "refused"), ("restore", to_controllers),
                               ("cut", to_controllers, "refused"), ("restore", to_controllers)]
    assert "broker 101 <-> the controllers" in what and "0.02/0.02/0.02" in what and "3 flips" in what
    c.proxies.calls.clear()
    what = flt.run_fault(c, fault("flap", 0.1, cut="held", link="broker", peer=1, periods=[0.02, 0.02]),
                         1, FakeWatch(), halt)
    assert c.proxies.calls[0] == ("cut", frozenset({(101, 102), (102, 101)}), "held")
    assert c.proxies.calls[-1][0] == "restore" and "broker 101 <-> broker 102" in what


def test_delay_covers_every_link_of_the_broker_then_is_taken_off(cluster):
    c = cluster(start=())
    what = flt.run_fault(c, fault("delay", 0.05, follower=2, latency_ms=7000, session="above"), 1, FakeWatch(),
                         threading.Event())
    links = {(102, x) for x in (1, 2, 3, 100, 101, 103)} | {(x, 102) for x in (1, 2, 3, 100, 101, 103)}
    assert c.proxies.calls == [("delay", frozenset(links), 7.0), ("delay", frozenset(links), 0.0)]
    assert "7000 ms each way on every link of broker 102 (above its session)" in what


def test_isolating_the_active_controller_waits_for_the_takeover_and_the_rejoin(cluster):
    c = cluster(start=())
    monitor, problems = FakeMonitor(), []
    threading.Timer(0.2, monitor.taken.set).start()
    threading.Timer(0.5, monitor.rejoined.set).start()
    what = flt.run_fault(c, fault("isolate_active_controller", 0.3, cut="held"), 1, FakeWatch(), threading.Event(),
                         monitor=monitor, problems=problems)
    isolated = frozenset({(1, x) for x in (2, 3, 100, 101, 102, 103)} | {(x, 1) for x in (2, 3, 100, 101, 102, 103)})
    assert c.proxies.calls == [("cut", isolated, "held"), ("restore", isolated)]
    assert problems == [] and "controller 2 took over after" in what and "1 rejoined" in what


def test_no_takeover_from_the_isolated_controller_is_a_problem(cluster, monkeypatch):
    monkeypatch.setattr(flt, "TAKEOVER_S", 0.3)
    c = cluster(start=())
    problems = []
    what = flt.run_fault(c, fault("isolate_active_controller", 0.1, cut="refused"), 1, FakeWatch(), threading.Event(),
                         monitor=FakeMonitor(), problems=problems)
    assert what.endswith("no takeover") and c.proxies.calls[-1][0] == "restore"
    assert len(problems) == 1
    assert problems[0].startswith("isolate_active_controller: no other controller took over from 1 within 0 s; "
                                  "the monitor last saw 1 naming 1 (leading epoch 5)"), problems
    # the other controllers' lines on elections, nothing else
    assert "controller 2's log on elections:\n      Completed transition to ProspectiveState(epoch=5) (node 2)" \
        in problems[0] and "controller 3's log" in problems[0] and "fetching" not in problems[0]


def test_a_controlled_shutdown_stops_the_broker_then_starts_it_again(cluster):
    c = cluster(CONTROLLED)
    first = c.brokers[101].proc
    problems = []
    what = flt.run_fault(c, fault("controlled_shutdown", 0.6), 1, FakeWatch({("t", 0): 101, ("t", 1): 100}),
                         threading.Event(), problems=problems)
    assert first.returncode == 143 and c.brokers[101].starts == 2 and c.brokers[101].running
    assert c.doors.calls == [("shut", 101), ("open", 101)]  # refusing while down, as a dead broker does
    assert problems == [] and c.crashed() == {} and not (c.down | c.leaving)
    assert "SIGTERM broker 101 (leading 1 of the topics' partitions): controlled shutdown in" in what and "exit 143" in what


def test_a_broker_exiting_on_its_own_is_a_crash_unless_it_was_leaving(cluster):
    c = cluster(CONTROLLED)
    c.brokers[101].stop(graceful=False)
    assert c.crashed() == {"broker 101": -signal.SIGKILL}
    c.leaving.add(101)
    assert c.crashed() == {} and c.note_exit(101) == -signal.SIGKILL and 101 in c.down


def test_a_controlled_shutdown_that_never_ends_is_killed_and_reported(cluster, monkeypatch):
    monkeypatch.setattr(flt, "SHUTDOWN_S", 0.3)
    c = cluster(DEAF)
    problems = []
    what = flt.run_fault(c, fault("controlled_shutdown", 0.2), 1, FakeWatch(), threading.Event(), problems=problems)
    assert "NOT stopped" in what and c.brokers[101].starts == 2 and c.brokers[101].running
    assert problems == ["controlled_shutdown: broker 101 still running 0 s after SIGTERM (killed)"]


def test_a_controlled_shutdown_in_the_middle_of_another_fault_waits_its_turn(cluster):
    c = cluster(CONTROLLED)
    started = time.monotonic()
    what = flt.run_fault(c, fault("controlled_shutdown", 0.4, after_s=0.3), 1, FakeWatch(), threading.Event())
    assert time.monotonic() - started >= 0.7 and "0.3 s into the other fault" in what


def test_a_full_disk_stops_a_writing_broker_which_is_freed_and_started_again(cluster):
    c = cluster(WRITER, disk_mb=8)
    first = c.brokers[101].proc
    what = flt.run_fault(c, fault("disk_full", 0.5), 1, FakeWatch(), threading.Event())
    assert first.returncode == 1, what  # its write failed with ENOSPC
    assert "stopped after" in what and "with 1, freed and started again" in what
    assert not (c.disks[101].path / FILLER).exists() and c.brokers[101].starts == 2 and c.brokers[101].running
    assert c.doors.calls == [("shut", 101), ("open", 101)] and c.crashed() == {}


def test_disk_full_is_skipped_saying_why_without_a_tmpfs(cluster):
    c = cluster(WRITER)
    c.disks[101].why_not = "mounting a tmpfs needs root"
    what = flt.run_fault(c, fault("disk_full", 0.1), 1, FakeWatch(), threading.Event())
    assert what == "disk_full broker 101 skipped: mounting a tmpfs needs root"
    assert c.brokers[101].starts == 1 and c.brokers[101].running


def test_closing_unmounts_every_disk_even_when_stopping_fails(cluster):
    c = cluster(WRITER, disk_mb=4, start=(100, 101))

    def fails():
        raise RuntimeError("a broker would not stop")
    c.brokers[100].close = fails
    with pytest.raises(RuntimeError):
        c.close()
    del c.brokers[100].close
    assert not any(os.path.ismount(d.path) for d in c.disks.values())
