"""Our node as a process on free loopback ports, for integration and interop tests:
``python -m kraft_server`` in its own session, its log in a file, stopped with
SIGTERM (then SIGKILL) and always killed by the caller's finalizer."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tools.kafka_dist.controller import free_port, run_tool
from tools.kafka_dist.probe import describe_cluster, describe_quorum

REPO = Path(__file__).resolve().parents[1]


class OurNode:
    """``python -m kraft_server`` in its own session, log to a file."""

    def __init__(self, workdir: Path, node_id: int = 1):
        self.workdir = workdir
        self.node_id = node_id
        self.port = free_port()
        self.client_port = free_port()
        self.data = workdir / "data"
        self.config = workdir / "server.properties"
        self.log_path = workdir / "node.log"
        self.proc: subprocess.Popen | None = None
        controller_only = [
            "process.roles=controller",
            f"node.id={node_id}",
            f"controller.quorum.bootstrap.servers=127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            f"log.dirs={self.data}",
            f"metadata.log.dir={self.data}",
        ]
        # Kafka refuses a controller-only node with a non-controller listener, so
        # kafka-storage gets the CONTROLLER listener only; our node also has CLIENT.
        self.kafka_config = workdir / "kafka.properties"
        self.kafka_config.write_text("\n".join(controller_only + [
            f"listeners=CONTROLLER://127.0.0.1:{self.port}",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
        ]) + "\n")
        self.config.write_text("\n".join(controller_only + [
            f"listeners=CONTROLLER://127.0.0.1:{self.port},CLIENT://127.0.0.1:{self.client_port}",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,CLIENT:PLAINTEXT",
        ]) + "\n")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def format_with_kafka(self, cluster_id: str) -> None:
        run_tool("kafka-storage", "format", "--cluster-id", cluster_id, "--standalone",
                 "--config", str(self.kafka_config))

    def format_with_ours(self, cluster_id: str) -> None:
        subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id,
                        "--standalone", "--config", str(self.config)], check=True, cwd=REPO,
                       timeout=60)

    def start(self) -> None:
        log = open(self.log_path, "ab")
        env = dict(os.environ, KRAFT_LOG_LEVEL="DEBUG")
        self.proc = subprocess.Popen([sys.executable, "-m", "kraft_server", str(self.config)],
                                     cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        log.close()

    def log_tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def wait_leader(self, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"node exited with {self.proc.returncode}\n{self.log_tail()}")
            try:
                info = describe_cluster("127.0.0.1", self.port, timeout=1.0)
                if info.error_code == 0 and info.controller_id == self.node_id:
                    q = describe_quorum("127.0.0.1", self.port, timeout=1.0)
                    if q.error_code == 0 and q.leader_id == self.node_id and q.high_watermark > 0:
                        return q
                last = info
            except (OSError, ValueError) as exc:
                last = exc
            time.sleep(0.05)  # poll interval
        raise AssertionError(f"no leader after {timeout}s (last: {last!r})\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def parse_status(text: str) -> dict[str, str]:
    """``kafka-metadata-quorum describe --status`` output as a dict."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out
