"""bench/raft/raft.py: a window in which the quorum changed leader (ours or Kafka's) is measured
again, a bounded number of times, the report says how often, and a row that still fails
is reported as failed while the rows already measured stay (issue 37 item 2: Kafka's
TestRaftServer elected a new leader at epoch 2 in the middle of the linger-0 window)."""
import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT),):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.raft import raft as bench_raft  # noqa: E402
from bench.raft.raft_cluster import Event  # noqa: E402


def test_a_window_the_leader_changed_in_is_measured_again():
    calls, logged = [], []

    def attempt(n):
        calls.append(n)
        if n == 0:
            raise bench_raft.LeaderChanged("kafka: the leader changed during the window")
        return {"p99": 4.0}

    res = bench_raft.measure_with_repeats("kafka: linger 0", attempt, logged.append)
    assert res == {"p99": 4.0, "repeats": 1} and calls == [0, 1]
    assert len(logged) == 1 and "measuring it again (1 of at most 3)" in logged[0]


def test_repeats_are_bounded_and_the_failure_is_reported():
    calls = []

    def attempt(n):
        calls.append(n)
        raise bench_raft.LeaderChanged("ours: the leader changed during the window")

    res = bench_raft.measure_with_repeats("ours: linger 0", attempt, lambda msg: None, repeats=3)
    assert calls == [0, 1, 2, 3] and res["repeats"] == 3
    assert res["failed"].startswith("ours: the leader changed during the window")


def test_another_failure_is_reported_without_a_repeat():
    def attempt(n):
        assert n == 0
        raise TimeoutError("kafka: no first commit of a leader after 90s\n--- node tails ---")

    res = bench_raft.measure_with_repeats("kafka: main run", attempt, lambda msg: None)
    assert res == {"failed": "kafka: no first commit of a leader after 90s", "repeats": 0}


def fake_kafka(events):
    def wait(cond, timeout_s, what, interval_s=0.0):
        got = cond()
        if not got:
            raise TimeoutError(f"kafka: no {what} after {timeout_s}s")
        return got

    cluster = SimpleNamespace(name="kafka", events=events, poll=lambda: None, wait=wait)
    cluster.find = lambda kind, after_ms=0.0, node=None, min_epoch=-1: next(
        (e for e in events if e.kind == kind and e.t_ms >= after_ms and (node is None or e.node == node)), None)
    return cluster


def test_kafka_without_a_summary_because_a_new_leader_took_over_is_a_leader_change():
    fc = Event("hwm_first", 1000, node=1, epoch=1, leader=1)
    # the window [2000, 5000] passes quietly; node 2 is elected after it, so node 1
    # never prints its WriteStats line
    events = [fc, Event("claim", 5200, node=2, epoch=2, leader=2)]
    with pytest.raises(bench_raft.LeaderChanged, match="node 1 led epoch 1; node 2 leads epoch 2"):
        bench_raft._latency(fake_kafka(events), fc, 2000, 5000)


def test_kafka_without_a_summary_and_the_same_leader_is_a_timeout():
    fc = Event("hwm_first", 1000, node=1, epoch=1, leader=1)
    with pytest.raises(TimeoutError):
        bench_raft._latency(fake_kafka([fc]), fc, 2000, 5000)


def test_ours_with_a_new_leader_inside_the_window_is_a_leader_change():
    fc = Event("hwm_first", 1000, node=1, epoch=3, leader=1)
    events = [fc, Event("leader", 3000, node=3, epoch=4, leader=2)]
    cluster = SimpleNamespace(name="ours", events=events, poll=lambda: None)
    with pytest.raises(bench_raft.LeaderChanged):
        bench_raft._latency(cluster, fc, 2000, 5000)
    # a change after the window does not touch ours (its seconds inside it are complete)
    events[1] = Event("leader", 6000, node=3, epoch=4, leader=2)
    events.append(Event("stats", 2500, node=1, data={"records": 2, "hist": {"10": 2}}))
    assert bench_raft._latency(cluster, fc, 2000, 5000)["p99"] == 1.0


def side(p99_main: float, linger0: dict) -> dict:
    return {"rate": 1000, "repeats": 0, "latency": {"p50": 1.0, "p75": 2.0, "p99": p99_main, "p999": 9.0},
            "linger0": linger0, "throughput_held": 1000, "failovers": [{"failover_ms": 100, "election_ms": 50}],
            "pause_failover": {"failover_ms": 2000}, "startup": {"listening_ms": 10, "leader_known_ms": 20},
            "rss_leader_kb": 10240, "rss_kb": {1: 10240, 2: 9000, 3: 9000},
            "ladder": [{"rate": 1000, "committed_per_s": 1000.0, "held": True}], "throughput_top_of_ladder": True,
            "overload": {"rungs": [], "held_per_s": 1000, "worst_committed_per_s": None,
                         "best_committed_per_s": 1000.0, "max_p99_ms": None, "max_rss_leader_kb": None}}


def test_the_report_keeps_every_row_and_names_the_failed_one():
    ours = side(3.0, {1000: {"rate": 1000, "p99": 1.5, "repeats": 1},
                      10000: {"rate": 10000, "p99": 2.5, "repeats": 0}})
    kafka = side(6.0, {1000: {"rate": 1000, "p99": 5.0, "repeats": 2},
                       10000: {"rate": 10000, "failed": "kafka: the leader changed during the window "
                                                       "(after 3 repeats)", "repeats": 3}})
    rows = {r["metric"]: r for r in bench_raft._rows(ours, kafka)}
    first = rows["commit latency p99, linger 0, 1,000 records/s (ms)"]
    assert (first["ours"], first["kafka"], first["repeats"], first["failed"]) == (
        1.5, 5.0, {"ours": 1, "kafka": 2}, {})
    failed = rows["commit latency p99, linger 0, 10,000 records/s (ms)"]
    assert failed["kafka"] is None and failed["met"] is None and failed["repeats"] == {"ours": 0, "kafka": 3}
    assert failed["failed"] == {"kafka": "kafka: the leader changed during the window (after 3 repeats)"}
    assert rows["commit latency p99 (ms)"]["ratio"] == 0.5 and rows["commit latency p99 (ms)"]["met"] is True
    json.dumps(list(rows.values()))  # the JSON report carries them as they are
    out = io.StringIO()
    with redirect_stdout(out):
        bench_raft.print_rows(list(rows.values()))
    text = out.getvalue()
    assert "FAILED (kafka), from 'commit latency p99, linger 0, 10,000 records/s (ms)' on:" in text
    line = next(x for x in text.splitlines() if x.startswith("commit latency p99, linger 0, 1,000"))
    assert line.split()[-1] == "1/2"
    assert next(x for x in text.splitlines() if x.startswith("commit latency p99 (ms)")).split()[-1] == "yes"


def test_a_failed_main_run_leaves_the_other_rows():
    ours = side(3.0, {1000: {"rate": 1000, "p99": 1.5, "repeats": 0}})
    kafka = {"rate": 1000, "failed": "kafka: the leader changed during the window (after 3 repeats)",
             "repeats": 3, "linger0": {1000: {"rate": 1000, "p99": 5.0, "repeats": 0}},
             "ladder": [], "throughput_held": 0, "throughput_top_of_ladder": False,
             "overload": {"rungs": [], "held_per_s": None, "worst_committed_per_s": None,
                          "best_committed_per_s": None, "max_p99_ms": None, "max_rss_leader_kb": None}}
    rows = {r["metric"]: r for r in bench_raft._rows(ours, kafka)}
    assert rows["commit latency p99, linger 0, 1,000 records/s (ms)"]["ratio"] == 0.3
    main = rows["commit latency p99 (ms)"]
    assert (main["ours"], main["kafka"], main["met"]) == (3.0, None, None)
    assert main["failed"] == {"kafka": kafka["failed"]} and main["repeats"] == {"ours": 0, "kafka": 3}
    assert rows["RSS, largest of 3 (MiB)"]["ours"] == 10.0 and rows["RSS, largest of 3 (MiB)"]["kafka"] is None
