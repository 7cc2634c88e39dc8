"""Observers bench (issue 12 item 6): N fetch-only observers on the leader of a
3-voter quorum, ours vs Apache Kafka 4.3.1's ``TestRaftServer``, in one run.

    python bench/observers.py            # N = 0, 10, 50, 100 (about 10 minutes)
    python bench/observers.py --quick    # N = 0, 10; short windows
    python bench/observers.py --json
    python bench/observers.py --counts 0,100 --impls ours   # one side only (no ratios)

For each side and each N, a fresh quorum (``bench/raft_cluster.py``, Kafka's quorum
defaults) whose leader appends ``--rate`` 256-byte records/s. Once the log holds
``--target`` records, ``bench/observer_load.py`` (the same load tool for both sides)
opens N observers fetching from offset 0, as a broker or a new controller does:

* catch-up: spawn of the load tool -> every observer's fetch offset >= target (ms);
* once every observer has reached the high watermark (``all_tailing``), so they are
  tailing the log (long polls at its end), a window of
  ``--measure`` s after ``--warmup`` s: the leader's commit p99 (ours: exact, every
  record; Kafka: TestRaftServer's WriteStats line, windowed over its last ~60 s), the
  leader's CPU (utime+stime over the window, % of one core) and RSS at its end.

Goals: ours ahead of Kafka on every row, and our commit p99 with 100 observers within
1.2x of our p99 with none. The machine is shared: the header gives the load average.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT), str(ROOT / "bench")):
    if p not in sys.path:
        sys.path.insert(0, p)

from raft import _first_commit, _latency, _wait_until  # noqa: E402
from raft_cluster import KafkaCluster, OurCluster, now_ms, rss_kb  # noqa: E402
from wire.exceptions import DecodeError  # noqa: E402
from wire.records import iter_headers  # noqa: E402

IMPLS = {"ours": OurCluster, "kafka": KafkaCluster}
P99_FACTOR = 1.2
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
            [sys.executable, str(ROOT / "bench" / "observer_load.py"), "--port", str(leader.port),
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

    def find(self, ev: str):
        if self.proc.poll() is not None and self.proc.returncode:
            raise RuntimeError(f"observer_load exited {self.proc.returncode}: {Path(self.err.name).read_text()[-2000:]}")
        return next((e for e in self.events if e["ev"] == ev), None)

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
                res["fetch_rate"] = res["fetches"] / args.measure
                res["observer_mib_s"] = (f1[1] - f0[1]) / args.measure / 2**20
            res["leader_rss_mib"] = rss_kb(leader.proc.pid) / 1024
            res["batches_per_s"] = batches_appended(cluster.log_dir(leader), t0, t1) / args.measure
            res["readys_per_s"] = _readys_per_s(cluster, fc.node, t0, t1)
            if load is not None:
                load.find("stats")  # raises if the tool died during the window
            res["latency"] = _latency(cluster, fc.node, t0, t1)
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


def _readys_per_s(cluster, leader: int, t0: float, t1: float):
    """Turns of our leader's Ready loop per second over the window (its stats lines
    carry the running count); None for Kafka."""
    marks = [(ev.t_ms, ev.data["readys"]) for ev in cluster.events
             if ev.kind == "stats" and ev.node == leader and "readys" in ev.data and t0 <= ev.t_ms <= t1]
    if len(marks) < 2:
        return None
    (ta, ra), (tb, rb) = marks[0], marks[-1]
    return (rb - ra) / ((tb - ta) / 1000.0) if tb > ta else None


def _per_fetch_us(loaded: dict, idle: dict | None):
    """The leader's CPU above its CPU with no observers, per observer fetch answered
    (µs): the load-independent cost of serving one observer round."""
    if not loaded.get("fetch_rate") or not idle or "leader_cpu_pct" not in idle:
        return None
    return (loaded["leader_cpu_pct"] - idle["leader_cpu_pct"]) / 100 * 1e6 / loaded["fetch_rate"]


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
                                       ("load_tool_cpu_pct", "the load tool's CPU", "% of a core")):
                out.append({"metric": f"{name}, {n} observers ({unit})", "ours": o.get(metric),
                            "kafka": k.get(metric), "ratio": None, "target": "", "met": None})
            row(f"leader CPU per observer fetch, {n} observers (us)", _per_fetch_us(o, ours.get(0)),
                _per_fetch_us(k, kafka.get(0)))
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
    args = ap.parse_args(argv)
    args.counts = args.counts or ([0, 10] if args.quick else [0, 10, 50, 100])
    args.target = args.target or (20000 if args.quick else 100000)
    args.warmup = args.warmup if args.warmup is not None else (2.0 if args.quick else 5.0)
    args.measure = args.measure if args.measure is not None else (5.0 if args.quick else 30.0)

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
                       "counts": args.counts, "load_before": load_before,
                       "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()), "cpus": os.cpu_count()},
              "results": results, "rows": rows(results, args.counts)}
    if args.json:
        print(json.dumps(report, indent=2, default=str))
        return 0
    m = report["meta"]
    print(f"Observers bench: 3 voters + N observers on the leader, {args.rate:,} records/s of 256 bytes, "
          f"catch-up of {args.target:,} records; load average {m['load_before']} / {m['load_after']} on {m['cpus']} CPUs")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
