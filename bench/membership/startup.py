"""Start-up time against log size (issue 12 item 7): our one-voter quorum on a log of
N records (one NoOpRecord a batch, as an idle leader writes them, a snapshot near the
end), from spawn to listening and to leader-ready, on the same log three ways:

* ``first``: the directory as built (``bench/membership/membership_log.py``): no index
  checkpoint, as after a copy or an old version: every batch is read and checked;
* ``clean``: restarted after a clean shutdown (SIGTERM);
* ``kill9``: restarted after kill -9 of a node that was running.

``clean`` and ``kill9`` alternate ``--repeats`` times (3) on each log; each row is the
median start (a single start of a Python process varies by +-50 ms on this machine).

    python bench/membership/startup.py                    # 1,000 and 1,000,000 records
    python bench/membership/startup.py --records 1000,200000 --json

``listening`` = spawn -> the first TCP connect to the controller port that succeeds
(polled every 5 ms); ``leader ready`` = spawn -> DescribeQuorum names this node leader
of a new epoch with a high watermark past the log it started on (its first commit).
Target: on 1M records, listening <= 500 ms and leader-ready within 1.2x of the
small log's, after a clean restart and after kill -9. The node's CPU time (user +
system, from ``/proc``) at listening and at leader-ready is printed beside the wall
times: on a busy machine the wall times mostly measure the wait for a core, the CPU
times what start-up itself costs. ``open`` is the part that can depend on the log: from
the node's first log line (its imports done) to "starting" (``build_node`` done: the
log opened and recovered, the core and controller built), read from the node's own
log timestamps; the median of every clean and kill -9 start is printed per log size.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT),):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.membership.membership_log import build_leader_dir  # noqa: E402
from bench.membership.membership_nodes import NodeProc, QuorumProbe, free_port, now_ms, write_properties  # noqa: E402

LISTEN_TARGET_MS = 500.0
READY_FACTOR = 1.2


def _props(port: int, data: Path) -> dict[str, str]:
    return {
        "process.roles": "controller",
        "node.id": "1",
        "listeners": f"CONTROLLER://127.0.0.1:{port}",
        "advertised.listeners": f"CONTROLLER://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{port}",
        "log.dirs": str(data),
        "metadata.log.dir": str(data),
    }


def _wait(cond, timeout_s: float, what: str, node: NodeProc):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not node.alive:
            raise RuntimeError(f"node exited while waiting for {what}\n{node.tail()}")
        got = cond()
        if got:
            return got
        time.sleep(0.005)
    raise RuntimeError(f"timed out waiting for {what}\n{node.tail()}")


def _cpu_ms(pid: int) -> float | None:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``; else None)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


def _open_ms(node: NodeProc) -> float | None:
    """From the node's first log line to "starting" (build_node done), in its last start."""
    try:
        lines = node.out.read_text(errors="replace").splitlines()
    except OSError:
        return None
    first = built = None
    for line in lines:
        if "wire codecs:" in line:
            first, built = line, None
        elif first is not None and " starting (metadata log " in line:
            built = line
    if first is None or built is None:
        return None

    def stamp(line: str) -> float:
        return datetime.datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000.0
    try:
        return stamp(built) - stamp(first)
    except ValueError:
        return None


def _start(node: NodeProc, past_offset: int) -> dict:
    """Spawn; time listening and leader-ready (returns the high watermark seen)."""
    node.start()
    _wait(node.check_listening, 120, "listening", node)
    listening_cpu = _cpu_ms(node.proc.pid)
    probe = QuorumProbe(node.port)
    try:
        def ready():
            try:
                q = probe.describe_quorum()
            except OSError:
                return None
            return q if q is not None and q.leader_id == 1 and q.high_watermark > past_offset else None
        q = _wait(ready, 120, "leader ready", node)
    finally:
        probe.close()
    ready_ms = now_ms() - node.spawn_ms
    return {"listening_ms": node.listen_ms - node.spawn_ms, "ready_ms": ready_ms,
            "listening_cpu_ms": listening_cpu, "ready_cpu_ms": _cpu_ms(node.proc.pid),
            "high_watermark": q.high_watermark, "epoch": q.leader_epoch, "open_ms": _open_ms(node)}


def _fmt(ms: float | None) -> str:
    return "-" if ms is None else f"{ms:.0f}"


def _median_run(samples: list[dict]) -> dict:
    """The start whose leader-ready time is the median of ``samples`` (its other figures
    with it), plus the median listening time over all of them."""
    by_ready = sorted(samples, key=lambda s: s["ready_ms"])
    mid = dict(by_ready[len(by_ready) // 2])
    mid["listening_ms"] = sorted(s["listening_ms"] for s in samples)[len(samples) // 2]
    return mid


def run_size(records: int, workdir: Path, log, repeats: int = 3) -> dict:
    workdir.mkdir(parents=True)
    port = free_port()
    config = write_properties(workdir / "node1.properties", _props(port, workdir / "data"))
    t = time.monotonic()
    built = build_leader_dir(config, "q1ZkjS7hT0eY2bLxUVuB9w", records)
    log(f"{records:,} records: built {built.segment_bytes / 1e6:.0f} MB in {time.monotonic() - t:.1f} s")
    node = NodeProc("ours", 1, port, config, workdir / "node1.out")
    res = {"records": records, "log_bytes": built.segment_bytes}
    try:
        res["first"] = _start(node, built.log_end_offset)
        hwm = res["first"]["high_watermark"]
        runs = {"clean": [], "kill9": []}
        for _ in range(repeats):
            # A clean restart (SIGTERM), then kill -9 of that running node and a restart.
            node.proc.send_signal(signal.SIGTERM)
            node.proc.wait(60)
            runs["clean"].append(_start(node, hwm))
            hwm = runs["clean"][-1]["high_watermark"]
            node.kill()
            runs["kill9"].append(_start(node, hwm))
            hwm = runs["kill9"][-1]["high_watermark"]
        for k, samples in runs.items():
            res[k] = _median_run(samples)
            res[k]["samples_ready_ms"] = [round(s["ready_ms"]) for s in samples]
        opens = sorted(s["open_ms"] for s in runs["clean"] + runs["kill9"] if s["open_ms"] is not None)
        res["open_ms"] = opens[len(opens) // 2] if opens else None
        for k in ("first", "clean", "kill9"):
            log(f"{records:,} records, {k}: listening {res[k]['listening_ms']:.0f} ms, "
                f"leader ready {res[k]['ready_ms']:.0f} ms (CPU {_fmt(res[k]['listening_cpu_ms'])} / "
                f"{_fmt(res[k]['ready_cpu_ms'])} ms)"
                + (f"; median of {len(res[k]['samples_ready_ms'])} starts, ready "
                   f"{res[k]['samples_ready_ms']} ms" if k != "first" else ""))
    finally:
        node.kill()
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=lambda s: [int(x) for x in s.split(",") if x], default=[1000, 1_000_000])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--repeats", type=int, default=3,
                    help="clean and kill -9 restarts per log size; the row is the median (3)")
    args = ap.parse_args(argv)

    def log(msg):
        print(f"[bench/startup {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    base = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        results = [run_size(n, base / f"r{n}", log, args.repeats) for n in args.records]
    finally:
        if args.keep:
            log(f"work directory kept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    report = {"load_before": load_before, "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
              "results": results}
    small, big = results[0], results[-1]
    rows = []
    for k in ("first", "clean", "kill9"):
        listen = big[k]["listening_ms"]
        ratio = big[k]["ready_ms"] / small[k]["ready_ms"]
        rows.append({"start": k, "listening_ms_small": small[k]["listening_ms"], "listening_ms_big": listen,
                     "ready_ms_small": small[k]["ready_ms"], "ready_ms_big": big[k]["ready_ms"],
                     "ready_ratio": ratio,
                     "ready_cpu_ms_small": small[k]["ready_cpu_ms"], "ready_cpu_ms_big": big[k]["ready_cpu_ms"],
                     "met": k == "first" or (listen <= LISTEN_TARGET_MS and ratio <= READY_FACTOR)})
    report["rows"] = rows
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Start-up vs log size: one voter, {small['records']:,} vs {big['records']:,} records "
          f"({big['log_bytes'] / 1e6:.0f} MB); load average {report['load_before']} / {report['load_after']}")
    head = ("start", "listening small", "listening big", "ready small", "ready big", "ready big/small", "met")
    print("  ".join(f"{h:>15}" for h in head))
    for r in rows:
        met = "" if r["start"] == "first" else ("yes" if r["met"] else "NO")
        print("  ".join(f"{v:>15}" for v in (
            r["start"], f"{r['listening_ms_small']:.0f}", f"{r['listening_ms_big']:.0f}",
            f"{r['ready_ms_small']:.0f}", f"{r['ready_ms_big']:.0f}", f"{r['ready_ratio']:.2f}", met)))
    print(f"open (node log: first line -> build_node done), median of the clean and kill -9 starts, "
          f"small / big log: {_fmt(small['open_ms'])} / {_fmt(big['open_ms'])} ms")
    print("node CPU (user + system) at leader ready, small / big log: " + ", ".join(
        f"{r['start']} {_fmt(r['ready_cpu_ms_small'])} / {_fmt(r['ready_cpu_ms_big'])} ms" for r in rows))
    print(f"targets (clean and kill9): listening <= {LISTEN_TARGET_MS:.0f} ms on the big log, leader ready "
          f"<= {READY_FACTOR}x the small log's; 'first' (no checkpoint yet) is shown for reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
