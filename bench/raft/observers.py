"""Observers bench (issue 12 item 6): N fetch-only observers on the leader of a
3-voter quorum, ours vs Apache Kafka 4.3.1's ``TestRaftServer``, in one run.

    python bench/raft/observers.py            # N = 0, 10, 50, 100 (about 20 minutes)
    python bench/raft/observers.py --quick    # N = 0, 10; short windows
    python bench/raft/observers.py --json
    python bench/raft/observers.py --counts 0,100 --impls ours   # one side only (no ratios)

For each side and each N, a fresh quorum (``bench/raft/raft_cluster.py``, Kafka's quorum
defaults) whose leader appends ``--rate`` 256-byte records/s. Once the log holds
``--target`` records, ``bench/raft/observer_load.py`` (the same load tool for both sides)
opens N observers fetching from offset 0, as a broker or a new controller does:

* catch-up: spawn of the load tool -> every observer's fetch offset >= target (ms);
* once every observer has reached the high watermark (``all_tailing``), so they are
  tailing the log (long polls at its end), a window of
  ``--measure`` s after ``--warmup`` s: the leader's commit p99 (ours: exact, every
  record; Kafka: TestRaftServer's WriteStats line, windowed over its last ~60 s), the
  leader's CPU (utime+stime over the window, % of one core) and RSS at its end;
* the CPU per observer fetch: the load tool then pauses its observers (SIGUSR1:
  connected, sending nothing) and resumes them (SIGUSR2) in turns, ``--turns``
  windows fetching between ``--turns`` + 1 paused, ``--turn`` s each; the leader's CPU
  over the fetching windows minus its CPU over the paused ones, per fetch answered
  (the same process on both sides of the subtraction).

Goals: ours ahead of Kafka on every row, and our commit p99 with 100 observers within
1.2x of our p99 with none. The machine is shared: the header gives the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT),):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.raft.raft import _first_commit, _latency, _wait_until  # noqa: E402
from bench.raft.raft_cluster import KafkaCluster, OurCluster, now_ms, rss_kb  # noqa: E402
from wire.exceptions import DecodeError  # noqa: E402
from wire.records import iter_headers  # noqa: E402

IMPLS = {"ours": OurCluster, "kafka": KafkaCluster}
P99_FACTOR = 1.2
SETTLE_S = 2.0  # after pausing or resuming the observers, before a window
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


class Load:
    """``observer_load.py`` as a subprocess; its JSON lines are read by a thread."""

    def __init__(self, cluster, leader, count: int, target: int, out: Path):
        self.events: list[dict] = []
        self.spawn_ms = now_ms()
        self.err = open(out, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "raft" / "observer_load.py"), "--port", str(leader.port),
             "--count", str(count), "--cluster-id", cluster.cluster_id, "--topic", cluster.topic,
             "--topic-id", cluster.topic_id, "--target", str(target)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=self.err, text=True, start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass

    def find(self, ev: str, since_ms: float = 0):
        if self.proc.poll() is not None and self.proc.returncode:
            raise RuntimeError(f"observer_load exited {self.proc.returncode}: {Path(self.err.name).read_text()[-2000:]}")
        return next((e for e in self.events if e["ev"] == ev and e["t"] >= since_ms), None)

    def signal(self, sig) -> None:
        self.proc.send_signal(sig)

    def rate(self, t0: float, t1: float):
        """Fetches answered per second between the first and the last ``stats`` line
        stamped in [t0, t1] (None with fewer than two)."""
        marks = [e for e in self.events if e["ev"] == "stats" and t0 <= e["t"] <= t1]
        if len(marks) < 2:
            return None
        a, b = marks[0], marks[-1]
        return (b["fetches"] - a["fetches"]) / ((b["t"] - a["t"]) / 1000)

    def counts(self) -> tuple[int, int]:
        """(fetches answered, bytes received) so far: the tool's last ``stats`` line,
        at most 1 s old."""
        stats = [e for e in self.events if e["ev"] == "stats"]
        return (stats[-1]["fetches"], stats[-1]["bytes"]) if stats else (0, 0)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.err.close()


def batches_appended(partition_dir: Path, t0_ms: float, t1_ms: float) -> int:
    """Data batches in the leader's log whose base timestamp (the leader's clock when
    it built the batch) is in [t0, t1): how often the linger let a batch go."""
    count = 0
    for seg in sorted(Path(partition_dir).glob("*.log")):
        try:
            for _, header in iter_headers(seg.read_bytes()):
                count += not header.is_control and t0_ms <= header.base_timestamp < t1_ms
        except DecodeError:
            pass  # a batch still being written: the end
    return count


def run_one(impl: str, count: int, workdir: Path, args, log) -> dict:
    cluster = IMPLS[impl](workdir, throughput=args.rate, record_size=256)
    res: dict = {"observers": count}
    with cluster:
        cluster.prepare()
        cluster.start()
        fc = _first_commit(cluster)
        leader = cluster.node(fc.node)
        # the log holds ``target`` records (plus the start-up batches) once this has passed
        _wait_until(cluster, fc.t_ms + 1000 * args.target / args.rate + 1000, watch=cluster.nodes)
        load = None
        try:
            if count:
                load = Load(cluster, leader, count, args.target, workdir / "observer_load.err")
                ev = cluster.wait(lambda: load.find("all_caught_up"), 300, f"{count} observers caught up")
                res["catch_up_ms"] = ev["t"] - load.spawn_ms
                log(f"{impl}: {count} observers caught up {args.target:,} records in {res['catch_up_ms']:.0f} ms")
                # the window measures observers tailing the log, not still catching up
                try:
                    ev = cluster.wait(lambda: load.find("all_tailing"), 120, f"{count} observers at the log end")
                    res["tailing_ms"] = ev["t"] - load.spawn_ms
                except TimeoutError:
                    log(f"{impl}: {count} observers still behind the log end after 120 s: measured catching up")
            t0 = now_ms() + args.warmup * 1000
            _wait_until(cluster, t0, watch=cluster.nodes)
            cpu0 = cpu_seconds(leader.proc.pid)
            f0 = load.counts() if load is not None else None
            load_cpu0 = cpu_seconds(load.proc.pid) if load is not None else None
            t1 = t0 + args.measure * 1000
            _wait_until(cluster, t1, watch=cluster.nodes)
            cpu = cpu_seconds(leader.proc.pid) - cpu0
            res["leader_cpu_pct"] = 100 * cpu / args.measure
            if load is not None:
                res["load_tool_cpu_pct"] = 100 * (cpu_seconds(load.proc.pid) - load_cpu0) / args.measure
                f1 = load.counts()
                res["fetches"] = f1[0] - f0[0]
                res["fetch_rate"] = load.rate(t0, t1) or res["fetches"] / args.measure
                res["observer_mib_s"] = (f1[1] - f0[1]) / args.measure / 2**20
            res["leader_rss_mib"] = rss_kb(leader.proc.pid) / 1024
            res["batches_per_s"] = batches_appended(cluster.log_dir(leader), t0, t1) / args.measure
            res["readys_per_s"] = _readys_per_s(cluster, fc.node, t0, t1)
            if load is not None:
                load.find("stats")  # raises if the tool died during the window
            res["latency"] = _latency(cluster, fc, t0, t1)
            if load is not None:
                res["bracket"] = _paused_and_fetching(cluster, leader, load, args)
            moved = cluster.find("claim", after_ms=fc.t_ms + 1, min_epoch=fc.epoch + 1)
            if moved is not None:  # the figures above are of a node that stopped leading
                res["leader_changed"] = True
                log(f"{impl}: {count} observers: leadership moved to node {moved.node} in epoch {moved.epoch}")
        finally:
            if load is not None:
                load.close()
    rate = f", {res['fetch_rate']:,.0f} observer fetches/s" if "fetch_rate" in res else ""
    if res.get("readys_per_s"):
        rate += f", {res['readys_per_s']:,.0f} Readys/s"
    log(f"{impl}: {count} observers: p99 {res['latency']['p99']} ms, leader CPU {res['leader_cpu_pct']:.0f}%, "
        f"RSS {res['leader_rss_mib']:.0f} MiB, {res['batches_per_s']:.1f} batches/s{rate}")
    return res


def _paused_and_fetching(cluster, leader, load, args) -> dict:
    """The same leader with the observers paused (connected, sending nothing) and
    fetching, in turns: P F P F ... P (``--turns`` F windows of ``--turn`` s). The CPU
    per fetch is the leader's CPU over the F windows minus its CPU over the P windows.
    One quorum's CPU drifts over a run (a JVM's falls over its first minute, as the
    JIT settles) and wanders by a point or two over ten seconds on both sides; a
    separate quorum with no observers differed run to run by as much as 10 observers
    add. P and F windows alternate and share their middle in time, which cancels a
    steady drift, and the turns average the wander."""
    settle, win = 1000 * min(args.warmup, SETTLE_S), 1000 * args.turn
    paused, fetching, rates, paused_fetches = [], [], [], 0.0
    for k in range(2 * args.turns + 1):
        pause = k % 2 == 0
        sent = now_ms()
        load.signal(signal.SIGUSR1 if pause else signal.SIGUSR2)
        what = "paused" if pause else "retailing"
        cluster.wait(lambda: load.find(what, since_ms=sent), 120,
                     "observers paused" if pause else "observers back at the log end")
        _wait_until(cluster, now_ms() + settle, watch=cluster.nodes)
        t0 = now_ms()
        cpu, wall = _cpu_window(cluster, leader, t0 + win)
        rate = load.rate(t0, now_ms())
        if pause:
            paused.append((cpu, wall))
            paused_fetches += rate or 0.0
        else:
            fetching.append((cpu, wall))
            rates.append((rate, wall))
    load.signal(signal.SIGUSR2)
    load.find("stats")  # raises if the tool died
    out = {"idle_cpu_pct": _pct(paused), "fetching_cpu_pct": _pct(fetching), "paused_fetch_rate": paused_fetches,
           "turns": args.turns, "turn_s": args.turn,
           "paused_each": [100 * c / w for c, w in paused], "fetching_each": [100 * c / w for c, w in fetching]}
    if all(r is not None for r, _ in rates):
        out["fetch_rate"] = sum(r * w for r, w in rates) / sum(w for _, w in rates)
    return out


def _pct(windows) -> float:
    cpu, wall = map(sum, zip(*windows))
    return 100 * cpu / wall


def _cpu_window(cluster, node, t_end: float) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``node`` from now until wall time ``t_end``."""
    w0, c0 = now_ms(), cpu_seconds(node.proc.pid)
    _wait_until(cluster, t_end, watch=cluster.nodes)
    return cpu_seconds(node.proc.pid) - c0, (now_ms() - w0) / 1000


def _readys_per_s(cluster, leader: int, t0: float, t1: float):
    """Turns of our leader's Ready loop per second over the window (its stats lines
    carry the running count); None for Kafka."""
    marks = [(ev.t_ms, ev.data["readys"]) for ev in cluster.events
             if ev.kind == "stats" and ev.node == leader and "readys" in ev.data and t0 <= ev.t_ms <= t1]
    if len(marks) < 2:
        return None
    (ta, ra), (tb, rb) = marks[0], marks[-1]
    return (rb - ra) / ((tb - ta) / 1000.0) if tb > ta else None


def _per_fetch_us(loaded: dict):
    """The leader's CPU with the observers fetching above its CPU with them paused
    (``_paused_and_fetching``), per observer fetch answered (µs): the load-independent
    cost of serving one observer round."""
    b = loaded.get("bracket") or {}
    if not b.get("fetch_rate"):
        return None
    return (b["fetching_cpu_pct"] - b["idle_cpu_pct"]) / 100 * 1e6 / b["fetch_rate"]


def rows(results: dict, counts: list[int]) -> list[dict]:
    out = []
    ours, kafka = results["ours"], results["kafka"]

    def row(metric, o, k, lower_better=True):
        ratio = o / k if isinstance(o, (int, float)) and isinstance(k, (int, float)) and k else None
        met = None if ratio is None else (ratio <= 1.0 if lower_better else ratio >= 1.0)
        out.append({"metric": metric, "ours": o, "kafka": k, "ratio": ratio, "target": "<= 1", "met": met})

    for n in counts:
        o, k = ours.get(n, {}), kafka.get(n, {})  # a side not run (--impls) shows n/a
        row(f"commit p99, {n} observers (ms)", o.get("latency", {}).get("p99"), k.get("latency", {}).get("p99"))
        row(f"leader CPU, {n} observers (% of a core)", o.get("leader_cpu_pct"), k.get("leader_cpu_pct"))
        row(f"leader RSS, {n} observers (MiB)", o.get("leader_rss_mib"), k.get("leader_rss_mib"))
        if n:
            row(f"catch-up of {n} observers (ms)", o.get("catch_up_ms"), k.get("catch_up_ms"))
            row(f"all {n} observers at the log end (ms)", o.get("tailing_ms"), k.get("tailing_ms"))
            for metric, name, unit in (("batches_per_s", "batches the leader appended", "/s"),
                                       ("readys_per_s", "turns of our leader's Ready loop", "/s"),
                                       ("fetch_rate", "observer fetches answered", "/s"),
                                       ("observer_mib_s", "bytes to observers", "MiB/s"),
                                       ("load_tool_cpu_pct", "the load tool's CPU", "% of a core"),
                                       ("idle_cpu_pct", "leader CPU, the observers paused", "% of a core"),
                                       ("fetching_cpu_pct", "leader CPU, the observers fetching, in turns with paused", "% of a core")):
                ob, kb = o.get("bracket") or {}, k.get("bracket") or {}
                out.append({"metric": f"{name}, {n} observers ({unit})", "ours": o.get(metric, ob.get(metric)),
                            "kafka": k.get(metric, kb.get(metric)), "ratio": None, "target": "", "met": None})
            row(f"leader CPU per observer fetch, {n} observers (us)", _per_fetch_us(o), _per_fetch_us(k))
    top = max(counts)
    if top and 0 in counts:
        for impl, r in (("ours", ours), ("kafka", kafka)):
            if top not in r or 0 not in r:
                continue
            base, loaded = r[0]["latency"]["p99"], r[top]["latency"]["p99"]
            ratio = loaded / base if base else None
            out.append({"metric": f"{impl}: p99 with {top} observers / p99 with none", "ours": ratio if impl == "ours" else None,
                        "kafka": ratio if impl == "kafka" else None, "ratio": None,
                        "target": f"ours <= {P99_FACTOR}" if impl == "ours" else "",
                        "met": (ratio is not None and ratio <= P99_FACTOR) if impl == "ours" else None})
    return out


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}"
    return f"{v:,}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--counts", type=lambda s: [int(x) for x in s.split(",") if x])
    ap.add_argument("--impls", default="ours,kafka", help="sides to run (ours,kafka)")
    ap.add_argument("--rate", type=int, default=5000, help="records/s the leader appends (5000)")
    ap.add_argument("--target", type=int, help="records the observers catch up (100000; quick 20000)")
    ap.add_argument("--warmup", type=float, help="s before the window (5; quick 2)")
    ap.add_argument("--measure", type=float, help="window, s (30; quick 5)")
    ap.add_argument("--turns", type=int, help="windows with the observers fetching, between paused ones, "
                                              "for the CPU per fetch (3; quick 1)")
    ap.add_argument("--turn", type=float, help="each of those windows, s (10; quick 2.5)")
    ap.add_argument("--table", type=Path, help="print the table of a saved --json report, run nothing")
    args = ap.parse_args(argv)
    if args.table is not None:
        print_report(json.loads(args.table.read_text()))
        return 0
    args.counts = args.counts or ([0, 10] if args.quick else [0, 10, 50, 100])
    args.target = args.target or (20000 if args.quick else 100000)
    args.warmup = args.warmup if args.warmup is not None else (2.0 if args.quick else 5.0)
    args.measure = args.measure if args.measure is not None else (5.0 if args.quick else 30.0)
    args.turns = args.turns if args.turns is not None else (1 if args.quick else 3)
    args.turn = args.turn if args.turn is not None else (2.5 if args.quick else 10.0)

    def log(msg):
        print(f"[bench/observers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    base = Path(tempfile.mkdtemp(prefix="bench-observers-"))
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    impls = [i for i in args.impls.split(",") if i]
    if not impls or any(i not in IMPLS for i in impls):
        ap.error(f"--impls: a list of {', '.join(IMPLS)}")
    results: dict = {"ours": {}, "kafka": {}}
    try:
        for n in args.counts:
            for impl in impls:
                results[impl][n] = run_one(impl, n, base / f"{impl}-{n}", args, log)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report = {"meta": {"rate": args.rate, "target": args.target, "warmup_s": args.warmup, "measure_s": args.measure,
                       "turns": args.turns, "turn_s": args.turn,
                       "counts": args.counts, "load_before": load_before,
                       "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()), "cpus": os.cpu_count()},
              "results": results, "rows": rows(results, args.counts)}
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    print_report(report)
    return 0


def print_report(report: dict) -> None:
    """The table of a report (``--json`` output: ``python bench/raft/observers.py --table FILE``)."""
    m, results = report["meta"], report["results"]
    print(f"Observers bench: 3 voters + N observers on the leader, {m['rate']:,} records/s of 256 bytes, "
          f"catch-up of {m['target']:,} records; load average {m['load_before']} / {m['load_after']} on {m['cpus']} CPUs")
    head = ("metric", "ours", "kafka", "ours/kafka", "target", "met")
    table = [[r["metric"], _fmt(r["ours"]), _fmt(r["kafka"]), "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}",
              r["target"], "" if r["met"] is None else ("yes" if r["met"] else "NO")] for r in report["rows"]]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *table)]
    print("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths))))
    for t in table:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(t, widths))))
    for impl, by_count in results.items():
        for n, r in by_count.items():
            if r.get("leader_changed"):
                print(f"NOTE: {impl} with {n} observers: the leader changed during the run; its row is of the first leader")
    print("Kafka's p99 is TestRaftServer's windowed histogram (1 ms buckets, last ~60 s); ours is exact over the window.")


if __name__ == "__main__":
    sys.exit(main())
