"""What an open console page costs the node, and whether stalled pages slow commits.

``python bench/console/console_cost.py [--quick] [--seconds S] [--throughput N] [--stalled K]
[--no-baseline]``

One node of ours (a one-voter quorum) runs the commit-latency load generator of
``bench/raft/raft.py`` (``tools/raft_load_server.py``: records proposed at a fixed rate,
latency from propose to the high watermark passing them). First a node without a
console is measured for S seconds (``console off``, the baseline; ``--no-baseline``
skips it), then one with ``kraft.console.listener`` set, in four phases of S seconds:

1. ``none``: no page open;
2. ``one page``: one live event stream read as fast as it comes (what a browser tab
   costs the node: its stream and snapshots; the browser's own rendering is not the
   node's cost);
3. ``stalled``: K event streams (20 by default) that never read a byte, with a small
   receive buffer, as frozen or disconnected browsers;
4. ``none again``: no page, to see drift.

Each phase prints the commit latency p50/p99/max (ms), the node's CPU (% of one
core, from /proc), its RSS at the end, and the snapshot build time reported by
``/api/state`` (``buildMicros``, median of a few).
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tools.kafka_dist.controller import free_port, random_cluster_id  # noqa: E402
from tools.raft_load_server import percentile  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Node:
    """The formatted node with the load generator; its stats lines collected by a thread."""

    def __init__(self, workdir: Path, throughput: int, console: bool = True):
        self.console_port, port = free_port(), free_port()
        self.console = console
        config = workdir / "server.properties"
        config.write_text("\n".join([
            "process.roles=controller", "node.id=1", "controller.listener.names=CONTROLLER",
            f"listeners=CONTROLLER://127.0.0.1:{port}", f"controller.quorum.bootstrap.servers=127.0.0.1:{port}",
            f"metadata.log.dir={workdir / 'data'}", f"log.dirs={workdir / 'data'}",
        ] + ([f"kraft.console.listener=127.0.0.1:{self.console_port}"] if console else [])) + "\n")
        subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", random_cluster_id(),
                        "--standalone", "--config", str(config)], check=True, cwd=REPO, stdout=subprocess.DEVNULL)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tools.raft_load_server", "--config", str(config),
             "--throughput", str(throughput)], cwd=REPO, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        self.hist, self.lock = Counter(), threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith("{") and '"ev":"stats"' in line:
                stats = json.loads(line)
                with self.lock:
                    self.hist.update({int(k): v for k, v in stats["hist"].items()})

    def take_hist(self) -> Counter:
        with self.lock:
            hist, self.hist = self.hist, Counter()
        return hist

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.console_port}{path}"

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.console and self.hist:  # committing: it leads
                return
            try:
                state = json.loads(urllib.request.urlopen(self.url("/api/state"), timeout=2).read())
                if state["role"] == "LEADER" and self.hist:
                    return
            except OSError:
                pass
            time.sleep(0.2)  # poll interval
        raise SystemExit("the node did not start leading")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(10)


def open_stream(port: int, rcvbuf: int | None = None) -> socket.socket:
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
    return s


def reader(sock: socket.socket, stop: threading.Event, counts: list) -> None:
    sock.settimeout(0.5)
    while not stop.is_set():
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        except OSError:
            return
        if not data:
            return
        counts[0] += data.count(b"\nevent: ") + data.startswith(b"event: ")
        counts[1] += len(data)


def build_micros(node: Node, n: int = 5) -> tuple[int, dict]:
    """The median snapshot build time, and the console's page counters."""
    states = [json.loads(urllib.request.urlopen(node.url("/api/state"), timeout=5).read()) for _ in range(n)]
    return int(statistics.median(s["buildMicros"] for s in states)), states[-1]["pages"]


def phase(node: Node, name: str, seconds: float, results: list) -> None:
    node.take_hist()
    cpu0, t0 = cpu_seconds(node.proc.pid), time.monotonic()
    time.sleep(seconds)  # the measured interval itself
    cpu1, t1 = cpu_seconds(node.proc.pid), time.monotonic()
    hist = node.take_hist()
    build_us, pages = build_micros(node) if node.console else (None, None)
    row = {"phase": name, "records": sum(hist.values()), "p50_ms": percentile(hist, .5),
           "p99_ms": percentile(hist, .99), "max_ms": max(hist) / 10 if hist else float("nan"),
           "cpu_pct": round(100 * (cpu1 - cpu0) / (t1 - t0), 1), "rss_mib": round(rss_mib(node.proc.pid), 1),
           "build_us": build_us, "pages": pages}
    results.append(row)
    print(f"{name:<12} records {row['records']:>7}  p50 {row['p50_ms']:5.1f} ms  p99 {row['p99_ms']:6.1f} ms  "
          f"max {row['max_ms']:6.1f} ms  cpu {row['cpu_pct']:5.1f} %  rss {row['rss_mib']:6.1f} MiB"
          + (f"  snapshot {build_us} us  pages {pages}" if node.console else ""), flush=True)


def measure(seconds: float, throughput: int = 1000, stalled: int = 20, baseline: bool = False) -> list[dict]:
    """The phases' rows (see the module docstring)."""
    results: list = []
    if baseline:
        with tempfile.TemporaryDirectory() as tmp:
            node = Node(Path(tmp), throughput, console=False)
            try:
                node.wait_ready()
                phase(node, "console off", seconds, results)
            finally:
                node.stop()
    with tempfile.TemporaryDirectory() as tmp:
        node = Node(Path(tmp), throughput)
        try:
            node.wait_ready()
            phase(node, "none", seconds, results)
            stop, counts = threading.Event(), [0, 0]
            opened = time.monotonic()
            live = open_stream(node.console_port)
            thread = threading.Thread(target=reader, args=(live, stop, counts), daemon=True)
            thread.start()
            phase(node, "one page", seconds, results)
            stop.set()
            thread.join(5)
            live.close()
            streamed = time.monotonic() - opened  # the reader counted all along
            results[-1]["events_per_s"] = round(counts[0] / streamed, 2)
            results[-1]["stream_kib_per_s"] = round(counts[1] / 1024 / streamed, 1)
            print(f"{'':<12} the page got {results[-1]['events_per_s']} updates/s, "
                  f"{results[-1]['stream_kib_per_s']} KiB/s", flush=True)
            streams = [open_stream(node.console_port, rcvbuf=4096) for _ in range(stalled)]
            phase(node, "stalled", seconds, results)
            for s in streams:
                s.close()
            phase(node, "none again", seconds, results)
        finally:
            node.stop()
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="6 s phases")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--throughput", type=int, default=1000, help="records/s proposed (256 bytes each)")
    p.add_argument("--stalled", type=int, default=20)
    p.add_argument("--no-baseline", action="store_true", help="skip the node without a console")
    args = p.parse_args(argv)
    results = measure(6.0 if args.quick else args.seconds, args.throughput, args.stalled, not args.no_baseline)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
