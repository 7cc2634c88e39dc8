"""Membership bench: how long a controller that starts empty takes to become a
committed voter, for leader logs of 10k, 100k (and, opt-in, 1M) records, ours vs
Apache Kafka 4.3.1's controller, in one run (issue "Dynamic quorum", item 8).

    python bench/membership/membership.py            # 10k and 100k records, 3 runs each (about 3 minutes)
    python bench/membership/membership.py --full     # adds 1M records (about 2 more minutes)
    python bench/membership/membership.py --sizes 10000,1000000
    python bench/membership/membership.py --quick    # smoke run: 10k only, one run (15-30 s)
    python bench/membership/membership.py --json     # the same figures as JSON

For each size and each implementation (the same steps, the same property files):

1. The leader's directory is built up front (``bench/membership/membership_log.py``): node 1
   formatted ``--standalone`` (kraft.version 1), then a Kafka-format log of N records
   in epoch 1 (start-of-epoch control batch with the VotersRecord, the bootstrap
   records, then NoOpRecords, one per batch as an idle leader writes them), a
   snapshot at 90% of the log (``--snapshot-at``), and quorum-state. Node 1 is started on it as ours or
   as a Kafka controller; the bench waits until it leads (DescribeQuorum names it,
   high watermark past the generated log, and DescribeCluster names it, as
   ``--bootstrap-controller`` needs). Informational row: spawn -> ready.
2. Node 2 (same implementation) is formatted ``--no-initial-controllers`` and started
   empty with ``controller.quorum.bootstrap.servers`` = node 1. **t0** = its spawn.
   The bench polls node 1 with DescribeQuorum v2 every ``--poll-ms`` (20 ms) over one
   open connection. **caught up** = the first poll listing node 2 as an observer with
   ``LastCaughtUpTimestamp`` > 0 (what AddRaftVoter requires,
   ``LeaderState.isReplicaCaughtUp``) and a log end offset at least the generated
   log's. ``listening`` (the first TCP connect to node 2's port that succeeds) is shown
   as a sub-row: start-up is part of catching up.
   "Caught up" is observed at the poll, on node 1; the check of node 2's directory for
   the leader's snapshot file (how it caught up) runs after it and is not timed.
3. At once the real ``bin/kafka-metadata-quorum --bootstrap-controller <node 1>
   --command-config <node 2's properties> add-controller`` is spawned (**t_add**; the
   tool's JVM start-up is in this figure on both sides). **listed** = the first poll
   with node 2 among the voters (the leader appended the VotersRecord; Kafka lists an
   uncommitted voter set). The VotersRecord's offset is then read from node 1's
   segment files; **committed** = the first poll with node 2 a voter and the high
   watermark past that offset. ``tool exit`` (AckWhenCommitted=true: the leader answers
   once the record is committed) is shown too. add -> committed is split at the
   arrival of AddRaftVoter at node 1, read from node 1's output: our node 1 runs
   ``kraft_server``'s main with its dispatcher's "received <Request>" DEBUG line on
   (``bench/membership/membership_ournode.py``), Kafka's node 1 with ``kafka.request.logger`` at
   DEBUG (arrival = completion - totalTimeMs). Before it: the tool's JVM start-up and
   its admin client (DescribeCluster, ApiVersions); after it: the leader's checks
   (ApiVersions to node 2), the VotersRecord and its commit.

Informational rows: node 1's spawn -> ready, VmRSS of node 1 when ready and of node 2
when caught up (Kafka's JVMs run with ``-Xmx1G -Xms1G``).

Rows per size: catch-up = caught up - t0; add -> committed = committed - t_add;
total = the two added (the bench spends no time between them). Each row is the median
of ``--repeat`` runs (3; quick 1), each metric on its own, fresh directories and
processes every run, the side that goes first alternating. Ratios are ours/Kafka;
lower is better. The machine is shared (load average in the header); the poll
interval bounds the resolution. Our rows read "n/a (AddRaftVoter unsupported)" when
our node does not list AddRaftVoter in ApiVersions.

The two sides do not move the same bytes: Kafka 4.3.1's leader answers an empty
replica's first Fetch (offset 0) with its latest snapshot id
(``KafkaRaftClient.tryCompleteFetchRequest``), so Kafka's node 2 takes FetchSnapshot and
then the log tail after the snapshot (10% of the records with the default
``--snapshot-at``); our leader serves the log from offset 0 (it answers with a snapshot
id only below the log start or when the fetcher's last epoch is older than its latest
snapshot's). ``--snapshot-at 0`` (no generated snapshot) makes both fetch the log. The
table says, per size, how node 2 caught up (read from the first segment and the
snapshot files in its directory after the run).
Kafka's controller may also fetch before it opens its listener, so ``listening`` is
not always a part of Kafka's catch-up.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT),):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.membership.membership_log import build_leader_dir, format_node  # noqa: E402
from bench.membership.membership_nodes import (  # noqa: E402
    ADD_RAFT_VOTER, KAFKA_HEAP, NodeProc, QuorumProbe, find_voters_record, free_port, now_ms,
    request_arrivals, write_properties)

IMPLS = ("ours", "kafka")
DEFAULT_SIZES = (10_000, 100_000)
FULL_SIZE = 1_000_000
UNSUPPORTED = "n/a (AddRaftVoter unsupported)"


class BenchError(RuntimeError):
    pass


def _props(node_id: int, port: int, leader_port: int, data: Path) -> dict[str, str]:
    return {
        "process.roles": "controller",
        "node.id": str(node_id),
        "listeners": f"CONTROLLER://127.0.0.1:{port}",
        "advertised.listeners": f"CONTROLLER://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{leader_port}",
        "log.dirs": str(data),
        "metadata.log.dir": str(data),
    }


def _random_cluster_id() -> str:
    from tools.kafka_dist.controller import random_cluster_id
    return random_cluster_id()


class Poller:
    """Polls until a condition holds, checking the nodes are alive (no fixed sleeps)."""

    def __init__(self, nodes: list[NodeProc], interval_ms: float):
        self.nodes, self.interval = nodes, interval_ms / 1000.0

    def until(self, cond, timeout_s: float, what: str):
        deadline = time.monotonic() + timeout_s
        last = None
        while True:
            for n in self.nodes:
                if n.proc is not None and not n.alive:
                    raise BenchError(f"{n.impl} node {n.node_id} exited with {n.proc.returncode} "
                                     f"while waiting for {what}\n{n.tail()}")
                n.check_listening()
            try:
                got = cond()
                if got:
                    return got
                last = got
            except (OSError, ValueError) as exc:
                last = exc
            if time.monotonic() >= deadline:
                tails = "\n".join(n.tail() for n in self.nodes)
                raise BenchError(f"no {what} after {timeout_s:g} s (last: {last!r})\n{tails}")
            time.sleep(self.interval)  # poll interval


def _leader_ready(probe: QuorumProbe, port: int, log_end: int):
    from tools.kafka_dist.probe import describe_cluster

    def ready():
        q = probe.describe_quorum()
        if q is None or q.leader_id != 1 or q.high_watermark <= log_end:
            return None
        if describe_cluster("127.0.0.1", port, timeout=2.0).controller_id != 1:
            return None
        return q
    return ready


def _snapshot_fetched(data: Path) -> list[int] | None:
    """The snapshot node 2 started from, ``[end offset, epoch]``, or None when it fetched
    the log from offset 0. A replica that took FetchSnapshot truncated its log fully to
    the snapshot's end offset, so its first segment starts there."""
    from kraft_server.log.segments import parse_segment_name
    from kraft_server.log.snapshots import parse_snapshot_name
    part = data / "__cluster_metadata-0"
    bases = [b for b in (parse_segment_name(p.name) for p in part.iterdir()) if b is not None]
    if not bases or min(bases) == 0:
        return None
    start = min(bases)
    for p in part.iterdir():
        parsed = parse_snapshot_name(p.name)
        if parsed and parsed[0].offset == start:
            return [start, parsed[0].epoch]
    return [start, -1]


def _spawn_add_controller(leader_port: int, node_config: Path) -> subprocess.Popen:
    """The real ``kafka-metadata-quorum add-controller`` for the node of ``node_config``."""
    from tools.kafka_dist import bin_path
    from tools.kafka_dist.controller import tool_env
    return subprocess.Popen(
        [str(bin_path("kafka-metadata-quorum")), "--bootstrap-controller", f"127.0.0.1:{leader_port}",
         "--command-config", str(node_config), "add-controller"],
        env=tool_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)


def _wait_committed(tool: subprocess.Popen, t_add: float, probe: QuorumProbe, poll: Poller, gen,
                    timeout: float) -> dict:
    """Poll from the tool's spawn (``t_add``) until node 2 is a voter whose VotersRecord is
    below the high watermark; then wait for the tool to exit (it must succeed)."""
    state: dict = {}

    def committed():
        if tool.poll() is not None and "tool_exit" not in state:
            state["tool_exit"] = now_ms()
            if tool.returncode != 0:
                raise BenchError(f"add-controller exited {tool.returncode}: {tool.stdout.read()}")
        q = probe.describe_quorum()
        if q is None or 2 not in q.voters:
            return None
        state.setdefault("listed", now_ms())
        if "offset" not in state:
            off = find_voters_record(gen.partition_dir, 2, gen.segment_bytes)
            if off is None:
                return None
            state["offset"] = off
        return q if q.high_watermark > state["offset"] else None
    q = poll.until(committed, timeout, "node 2 a committed voter")
    t_committed = now_ms()
    poll.until(lambda: tool.poll() is not None, 60, "add-controller to exit")
    state.setdefault("tool_exit", now_ms())
    out = tool.stdout.read()
    if tool.returncode != 0:
        raise BenchError(f"add-controller exited {tool.returncode}: {out}")
    return {
        "add_to_listed_ms": state["listed"] - t_add,
        "add_to_committed_ms": t_committed - t_add,
        "listed_to_committed_ms": t_committed - state["listed"],
        "add_tool_exit_ms": state["tool_exit"] - t_add,
        "voters_record_offset": state["offset"],
        "high_watermark": q.high_watermark,
        "tool_output": out.strip().splitlines()[-1:] if out.strip() else [],
    }


def run_one(impl: str, size: int, workdir: Path, args, log) -> dict:
    workdir.mkdir(parents=True)
    p1, p2 = free_port(), free_port()
    c1 = write_properties(workdir / "node1.properties", _props(1, p1, p1, workdir / "data1"))
    c2 = write_properties(workdir / "node2.properties", _props(2, p2, p1, workdir / "data2"))
    cluster_id = _random_cluster_id()
    t = time.monotonic()
    gen = build_leader_dir(c1, cluster_id, size, batch_records=args.batch_records,
                           snapshot_fraction=args.snapshot_at)
    format_node(c2, cluster_id, no_initial_controllers=True)
    res: dict = {"records": size, "log_end_offset": gen.log_end_offset, "log_bytes": gen.segment_bytes,
                 "snapshot": [gen.snapshot_id.offset, gen.snapshot_id.epoch] if gen.snapshot_id else None,
                 "generate_s": round(time.monotonic() - t, 2)}
    n1 = NodeProc(impl, 1, p1, c1, workdir / "node1.out", request_log=True)
    n2 = NodeProc(impl, 2, p2, c2, workdir / "node2.out")
    poll = Poller([n1, n2], args.poll_ms)
    probe = QuorumProbe(p1)
    tool = None
    try:
        n1.start()
        q = poll.until(_leader_ready(probe, p1, gen.log_end_offset), args.timeout, "leader ready")
        res["leader_ready_ms"] = now_ms() - n1.spawn_ms
        res["leader_epoch"] = q.leader_epoch
        res["leader_rss_mib"] = n1.rss_mib()
        if impl == "ours" and ADD_RAFT_VOTER not in probe.api_keys():
            res["unsupported"] = UNSUPPORTED
            log(f"{impl} {size:,}: {UNSUPPORTED}")
            return res

        # 2. the empty controller starts and catches up as an observer
        n2.start()
        t0 = n2.spawn_ms

        def caught_up():
            q = probe.describe_quorum()
            r = q and q.observers.get(2)
            return r if r and r.last_caught_up_timestamp > 0 and r.log_end_offset >= gen.log_end_offset else None
        obs = poll.until(caught_up, args.timeout, "node 2 caught up as an observer")
        t_caught = now_ms()
        res["node2_snapshot_fetched"] = _snapshot_fetched(workdir / "data2")
        res["listening_ms"] = (n2.listen_ms - t0) if n2.listen_ms else None
        res["catch_up_ms"] = t_caught - t0
        res["observer_leo"] = obs.log_end_offset
        res["node2_rss_mib"] = n2.rss_mib()

        # 3. add-controller with the real tool; node 2 listed, then committed
        t_add = now_ms()
        tool = _spawn_add_controller(p1, c2)
        res.update(_wait_committed(tool, t_add, probe, poll, gen, args.timeout))
        arrived = [t for t in request_arrivals(n1, ADD_RAFT_VOTER, "AddRaftVoter") if t >= t_add - 5]
        if arrived:  # the tool exited, so node 1 has logged the request
            res["add_to_request_ms"] = arrived[0] - t_add
            res["request_to_committed_ms"] = res["add_to_committed_ms"] - res["add_to_request_ms"]
        res["total_ms"] = res["catch_up_ms"] + res["add_to_committed_ms"]
        res["unix_ms"] = {"node2_spawn": t0, "caught_up": t_caught, "add": t_add}  # to read logs against
        log(f"{impl} {size:,}: catch-up {res['catch_up_ms']:.0f} ms, add -> committed "
            f"{res['add_to_committed_ms']:.0f} ms (VotersRecord at {res['voters_record_offset']})")
        return res
    finally:
        probe.close()
        if tool is not None and tool.poll() is None:
            os.killpg(tool.pid, signal.SIGKILL)
            tool.wait(10)
        for n in (n2, n1):
            n.kill()
        if not args.keep:
            shutil.rmtree(workdir / "data1", ignore_errors=True)
            shutil.rmtree(workdir / "data2", ignore_errors=True)


# -- report ---------------------------------------------------------------------------------

ROWS = (  # (label, key, main row?)
    ("catch-up: node 2 start -> caught-up observer (ms)", "catch_up_ms", True),
    ("  node 2 start -> listening (ms)", "listening_ms", False),
    ("add-controller -> committed voter (ms)", "add_to_committed_ms", True),
    ("  of which: tool spawn -> AddRaftVoter at node 1 (ms)", "add_to_request_ms", False),
    ("  of which: AddRaftVoter at node 1 -> committed (ms)", "request_to_committed_ms", False),
    ("  VotersRecord listed -> committed (ms)", "listed_to_committed_ms", False),
    ("total: catch-up + add -> committed (ms)", "total_ms", True),
    ("add-controller tool exit (ms after add)", "add_tool_exit_ms", False),
    ("leader restart on the log -> ready (ms, not in total)", "leader_ready_ms", False),
    ("leader RSS when ready (MiB)", "leader_rss_mib", False),
    ("node 2 RSS when caught up (MiB)", "node2_rss_mib", False),
)


def _median(runs: list[dict], key: str):
    vals = sorted(r[key] for r in runs if isinstance(r.get(key), (int, float)))
    if not vals:
        return None
    mid = len(vals) // 2
    return vals[mid] if len(vals) % 2 else (vals[mid - 1] + vals[mid]) / 2


def build_rows(results: dict, resolution_ms: float = 0.0) -> list[dict]:
    """One row per metric and size: the median over the repeats (each metric on its own).
    A ratio of timings below the poll interval (``resolution_ms``) would be noise: None,
    with ``below_resolution`` set."""
    rows = []
    for size in results:
        ours, kafka = results[size].get("ours", []), results[size].get("kafka", [])
        for label, key, main in ROWS:
            o, k = _median(ours, key), _median(kafka, key)
            if key not in ("leader_ready_ms", "leader_rss_mib") and any(r.get("unsupported") for r in ours):
                o = UNSUPPORTED
            num = isinstance(o, (int, float)) and isinstance(k, (int, float)) and k
            fine = num and key.endswith("_ms") and min(o, k) < resolution_ms
            rows.append({"records": size, "metric": label, "key": key, "main": main, "ours": o,
                         "kafka": k, "ratio": (o / k) if num and not fine else None,
                         "below_resolution": bool(fine)})
    return rows


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, str):
        return v
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    return f"{v:,.0f}"


def print_table(report: dict) -> None:
    meta = report["meta"]
    snap = f"snapshot at {meta['snapshot_at']:.0%}" if meta["snapshot_at"] > 0 else "no snapshot"
    print(f"Membership bench: an empty controller joins a 1-voter quorum (kraft.version 1) whose "
          f"log holds N records ({meta['batch_records']} NoOpRecord per batch, {snap}); "
          f"DescribeQuorum polled every {meta['poll_ms']} ms; load average before/after "
          f"{meta['loadavg_before']} / {meta['loadavg_after']} on {meta['cpus']} CPUs")
    print(f"Kafka: {meta['kafka']}; add-controller: {meta['tool']}")
    headers = ("records", "metric", "ours", "kafka", "ours/kafka")
    table = []
    for r in report["rows"]:
        ratio = "~" if r.get("below_resolution") else "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
        table.append([f"{r['records']:,}", r["metric"], _fmt(r["ours"]), _fmt(r["kafka"]), ratio])
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *table)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(headers))
    print("-" * len(line(headers)))
    last = None
    for row in table:
        if last is not None and row[0] != last:
            print()
        last = row[0]
        print(line(row))
    for size, per in report["results"].items():
        for impl, runs in per.items():
            hows = {}
            for r in runs:
                if "node2_snapshot_fetched" not in r:
                    continue
                leo = r["log_end_offset"]
                if r["node2_snapshot_fetched"]:
                    snap, epoch = r["node2_snapshot_fetched"]
                    how = f"FetchSnapshot {snap}-{epoch}, then Fetch of the tail after it"
                else:
                    how = f"Fetch of the whole log from offset 0 ({leo:,} records)"
                hows[how] = hows.get(how, 0) + 1
                size_mb = r["log_bytes"] / 1e6
            if hows:
                text = "; ".join(f"{h} ({n} of {len(runs)} runs)" if len(hows) > 1 else h for h, n in hows.items())
                print(f"{impl} {size:,}: node 2 caught up by {text}; leader log {size_mb:.1f} MB")
            for x in runs:
                if "error" in x:
                    print(f"{impl} {size:,}: ERROR {x['error'].splitlines()[0]}")
    if FULL_SIZE not in report["results"]:
        print(f"{FULL_SIZE:,} records: not run (opt-in, slow: --full or --sizes ...,{FULL_SIZE}).")
    print(f"Ratios: ours/Kafka, lower is better; ~ = a figure below the {meta['poll_ms']:g} ms poll "
          f"interval (no meaningful ratio). Each figure is the median of {meta['repeat']} run(s) "
          f"(each metric on its own) on a shared machine.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",") if x],
                    help="log sizes in records (default 10000,100000)")
    ap.add_argument("--full", action="store_true", help=f"add {FULL_SIZE:,} records (slow)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 10,000 records only")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--only", choices=IMPLS, help="run one side (no ratios)")
    ap.add_argument("--batch-records", type=int, default=1, help="NoOpRecords per batch (default 1)")
    ap.add_argument("--snapshot-at", type=float, default=0.9,
                    help="where the leader's snapshot is, as a fraction of the log (default 0.9; "
                         "0: no snapshot, both sides then fetch the whole log)")
    ap.add_argument("--repeat", type=int, help="runs per size and side; rows are medians (3; quick 1)")
    ap.add_argument("--poll-ms", type=float, default=20.0, help="DescribeQuorum poll interval")
    ap.add_argument("--timeout", type=float, default=600.0, help="deadline per wait, s")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([10_000] if args.quick else list(DEFAULT_SIZES))
    if args.full and FULL_SIZE not in sizes:
        sizes.append(FULL_SIZE)
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3

    def log(msg):
        print(f"[bench/membership {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    # SIGTERM unwinds like Ctrl-C, so every process is killed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from tools.kafka_dist import ensure_dist
    ensure_dist()
    base = Path(tempfile.mkdtemp(prefix="bench-membership-"))
    started = time.monotonic()
    report = {"meta": {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick, "sizes": sizes, "batch_records": args.batch_records,
        "poll_ms": args.poll_ms, "snapshot_at": args.snapshot_at, "repeat": args.repeat,
        "kafka": f"kafka-server-start (kafka_2.13-4.3.1), KAFKA_HEAP_OPTS="
                 f"{os.environ.get('KAFKA_HEAP_OPTS', KAFKA_HEAP)!r}, wrapper G1 defaults",
        "tool": "bin/kafka-metadata-quorum 4.3.1 (-Xmx256m, C1 only), both sides",
        "python": platform.python_version(), "cpus": os.cpu_count(),
        "loadavg_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }, "results": {}}
    try:
        for size in sizes:
            per = report["results"][size] = {impl: [] for impl in ([args.only] if args.only else IMPLS)}
            for rep in range(args.repeat):
                order = list(per) if rep % 2 == 0 else list(per)[::-1]  # alternate who goes first
                for impl in order:
                    log(f"{impl}: {size:,} records, run {rep + 1}/{args.repeat}")
                    try:
                        per[impl].append(run_one(impl, size, base / f"{impl}-{size}-{rep}", args, log))
                    except BenchError as exc:
                        log(f"{impl} {size:,} failed: {exc}")
                        per[impl].append({"records": size, "error": str(exc)[-4000:]})
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        else:
            log(f"work directory kept: {base}")
    report["meta"]["loadavg_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    report["meta"]["elapsed_s"] = round(time.monotonic() - started, 1)
    report["rows"] = build_rows(report["results"], args.poll_ms)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print_table(report)
        print(f"elapsed {report['meta']['elapsed_s']} s")
    failed = any("error" in r for per in report["results"].values() for runs in per.values() for r in runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
