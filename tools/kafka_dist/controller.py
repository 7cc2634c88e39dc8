"""Run a real Apache Kafka KRaft controller on free loopback ports.

Typical use (the pytest fixture in ``tests/interop/test_kafka_dist.py`` does this)::

    with KafkaController(tmp_path) as ctl:       # format + start + wait_ready
        out = ctl.run_tool("kafka-metadata-quorum",
                           "--bootstrap-controller", ctl.bootstrap,
                           "describe", "--status")

The JVM is started in its own session (the wrapper scripts ``exec`` java,
so the child *is* the JVM) with stdout/stderr going to ``<workdir>/server.log``.
:meth:`stop` sends SIGTERM, then SIGKILL to the whole process group after a
grace period; an ``atexit`` hook kills anything still running if a caller
forgets. Readiness is polled (no fixed sleeps): the controller is ready when a
DescribeCluster sent to it names this node as the active controller, i.e.
it won the election and its registration is committed, which is what
``kafka-metadata-quorum --bootstrap-controller`` needs.
"""

from __future__ import annotations

import atexit
import base64
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterable, Mapping

from . import bin_path, ensure_dist, java_executable
from .ports import free_port  # noqa: F401  (re-exported)
from .probe import ClusterInfo, QuorumInfo, describe_cluster, describe_quorum

# JVM options that make short-lived test JVMs start faster than Kafka's
# production defaults (G1 + full tiered compilation). Used when the caller
# does not set KAFKA_JVM_PERFORMANCE_OPTS itself.
FAST_JVM_OPTS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Djava.awt.headless=true"
# The same for javac, a short-lived JVM too (a compile of the synthetic specs' classes:
# 7.1 -> 3.6 s of CPU).
JAVAC_FAST_FLAGS = tuple(f"-J{opt}" for opt in FAST_JVM_OPTS.split())
DEFAULT_SERVER_HEAP = "-Xmx512m -Xms64m"
DEFAULT_TOOL_HEAP = "-Xmx256m"

# Strong references: a controller dropped without stop() is still killed at exit.
_RUNNING: "set[KafkaController]" = set()


class ControllerError(RuntimeError):
    """The controller failed to format, start or become ready."""


def random_cluster_id() -> str:
    """A Kafka ``Uuid.randomUuid().toString()`` lookalike (22 chars, url-safe base64)."""
    while True:
        s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not s.startswith("-"):  # Kafka avoids ids that look like CLI flags
            return s


def tool_env(extra: Mapping[str, str] | None = None, *, fast: bool = True) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("KAFKA_HEAP_OPTS", DEFAULT_TOOL_HEAP)
    if fast:
        env.setdefault("KAFKA_JVM_PERFORMANCE_OPTS", FAST_JVM_OPTS)
        env.setdefault("KAFKA_CDS", "1")  # the release's class-data-sharing archive (cds.py)
    if "JAVA_HOME" not in env:
        env["JAVA_HOME"] = str(Path(java_executable()).resolve().parents[1])
    env.update(extra or {})
    return env


def run_tool(
    name: str,
    *args: str,
    timeout: float = 60.0,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    fast: bool = True,
    version: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a wrapper from release ``version``'s ``home/bin`` (default: the default
    release); returns the completed process (text)."""
    proc = subprocess.run(
        [str(bin_path(name, version)), *args],
        env=tool_env(env, fast=fast),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise ControllerError(
            f"{name} {' '.join(args)} exited {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    return proc


class KafkaController:
    """One real Kafka ``process.roles=controller`` node in a work directory.

    ``format_mode``:
      * ``"standalone"`` (default): ``kafka-storage format --standalone``,
        a dynamic (KIP-853) quorum with this node as the only voter;
      * ``"initial-controllers"``: ``--initial-controllers <initial_controllers>``;
      * ``"no-initial-controllers"``: observer that joins later;
      * ``"static"``: no flag; pass ``controller.quorum.voters`` in ``overrides``.
    ``overrides`` are merged last into server.properties. ``version`` names the
    Apache Kafka release that runs it (default: the default release).
    """

    def __init__(
        self,
        workdir: os.PathLike[str] | str | None = None,
        *,
        node_id: int = 1,
        host: str = "127.0.0.1",
        port: int | None = None,
        cluster_id: str | None = None,
        format_mode: str = "standalone",
        initial_controllers: str | None = None,
        bootstrap_servers: str | None = None,
        directory_id: str | None = None,
        overrides: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        fast_jvm: bool = True,
        version: str | None = None,
    ) -> None:
        if workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix=f"kafka-ctl-{node_id}-")
            workdir = self._tmp.name
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.node_id = node_id
        self.host = host
        self._port_auto = port is None
        self.port = port or free_port(host)
        self.cluster_id = cluster_id or random_cluster_id()
        self.format_mode = format_mode
        self.initial_controllers = initial_controllers
        self.directory_id = directory_id
        self._bootstrap_servers = bootstrap_servers
        self.overrides = dict(overrides or {})
        self.env = dict(env or {})
        self.fast_jvm = fast_jvm
        self.version = version
        self.proc: subprocess.Popen[bytes] | None = None
        self.formatted = False
        self.timings: dict[str, float] = {}

    # ---- configuration ---------------------------------------------------
    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self.workdir / "metadata"

    @property
    def config_path(self) -> Path:
        return self.workdir / "server.properties"

    @property
    def log_path(self) -> Path:
        return self.workdir / "server.log"

    def properties(self) -> dict[str, str]:
        props = {
            "process.roles": "controller",
            "node.id": str(self.node_id),
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://{self.bootstrap}",
            "advertised.listeners": f"CONTROLLER://{self.bootstrap}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "controller.quorum.bootstrap.servers": self._bootstrap_servers or self.bootstrap,
            "log.dirs": str(self.data_dir),
            "metadata.log.dir": str(self.data_dir),
            # A single test node: no need for the production defaults.
            "metadata.log.segment.bytes": str(8 * 1024 * 1024),
            "num.io.threads": "2",
            "num.network.threads": "2",
            "background.threads": "2",
        }
        props.update(self.overrides)
        return props

    def write_config(self) -> Path:
        lines = [f"{k}={v}" for k, v in self.properties().items()]
        self.config_path.write_text("# Generated by tools.kafka_dist.controller\n" + "\n".join(lines) + "\n")
        return self.config_path

    def _server_env(self) -> dict[str, str]:
        env = tool_env({"KAFKA_HEAP_OPTS": os.environ.get("KAFKA_HEAP_OPTS", DEFAULT_SERVER_HEAP)}, fast=self.fast_jvm)
        env["LOG_DIR"] = str(self.workdir / "logs")
        env.update(self.env)
        return env

    # ---- lifecycle --------------------------------------------------------
    def format(self, extra_args: Iterable[str] = ()) -> subprocess.CompletedProcess[str]:
        ensure_dist(self.version)
        self.write_config()
        args = ["format", "--cluster-id", self.cluster_id, "--config", str(self.config_path)]
        if self.format_mode == "standalone":
            args.append("--standalone")
        elif self.format_mode == "initial-controllers":
            if not self.initial_controllers:
                raise ValueError("format_mode='initial-controllers' needs initial_controllers")
            args += ["--initial-controllers", self.initial_controllers]
        elif self.format_mode == "no-initial-controllers":
            args.append("--no-initial-controllers")
        elif self.format_mode != "static":
            raise ValueError(f"unknown format_mode {self.format_mode!r}")
        args += list(extra_args)
        t0 = time.monotonic()
        out = run_tool("kafka-storage", *args, env=self.env, fast=self.fast_jvm, version=self.version)
        self.timings["format"] = time.monotonic() - t0
        self.formatted = True
        return out

    def start(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            raise ControllerError("already running")
        if not self.formatted:
            self.format()
        self.write_config()
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [str(bin_path("kafka-server-start", self.version)), str(self.config_path)],
                env=self._server_env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: stop() kills it all
            )
        finally:
            log.close()
        self._started_at = time.monotonic()
        _RUNNING.add(self)

    def wait_ready(self, timeout: float = 60.0, interval: float = 0.05) -> ClusterInfo:
        """Poll until this node is the active controller; raise on timeout or exit."""
        deadline = time.monotonic() + timeout
        last: object = None
        while True:
            if self.proc is None:
                raise ControllerError("not started")
            if self.proc.poll() is not None:
                raise ControllerError(f"controller exited with {self.proc.returncode}\n{self.log_tail()}")
            try:
                info = describe_cluster(self.host, self.port, timeout=1.0)
                if info.error_code == 0 and info.controller_id == self.node_id:
                    self.timings["ready"] = time.monotonic() - self._started_at
                    return info
                last = info
            except (OSError, ValueError) as exc:
                last = exc
            if time.monotonic() >= deadline:
                self.stop(graceful=False)
                raise ControllerError(f"controller not ready after {timeout}s (last probe: {last!r})\n{self.log_tail()}")
            time.sleep(interval)  # poll interval, not synchronisation

    def start_ready(self, timeout: float = 90.0, retries: int = 2) -> ClusterInfo:
        """Format if needed, start, and wait until active.

        If the port was picked automatically and somebody grabbed it between
        :func:`free_port` and the JVM's bind, pick another port, re-format
        (the port is recorded in the bootstrap voter set) and try again. Only
        for standalone nodes: in a multi-node set-up the peers know the port.
        """
        for attempt in range(retries + 1):
            if not self.formatted:
                self.format()
            self.start()
            try:
                return self.wait_ready(timeout)
            except ControllerError:
                self.stop(graceful=False)
                can_move = self._port_auto and self.format_mode == "standalone" and not self._bootstrap_servers
                if attempt == retries or not can_move or "Address already in use" not in self.log_text():
                    raise
                shutil.rmtree(self.data_dir, ignore_errors=True)
                self.log_path.rename(self.log_path.with_suffix(f".bind-failure-{attempt}.log"))
                self.port = free_port(self.host)
                self.formatted = False
        raise AssertionError("unreachable")

    def wait_active(self, timeout: float = 60.0) -> ClusterInfo:
        """Like :meth:`wait_ready` but accepts any active controller (for multi-node quorums)."""
        deadline = time.monotonic() + timeout
        last: object = None
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise ControllerError(f"controller not running\n{self.log_tail()}")
            try:
                info = describe_cluster(self.host, self.port, timeout=1.0)
                if info.error_code == 0 and info.controller_id >= 0:
                    return info
                last = info
            except (OSError, ValueError) as exc:
                last = exc
            time.sleep(0.05)
        raise ControllerError(f"no active controller after {timeout}s (last probe: {last!r})\n{self.log_tail()}")

    def describe_quorum(self) -> QuorumInfo:
        return describe_quorum(self.host, self.port)

    def stop(self, graceful: bool = True, timeout: float = 15.0) -> int | None:
        """Stop the JVM (SIGTERM, then SIGKILL after ``timeout``); idempotent."""
        proc = self.proc
        if proc is None:
            return None
        if proc.poll() is None:
            try:
                pgid = os.getpgid(proc.pid)
            except ProcessLookupError:
                pgid = None
            sig = signal.SIGTERM if graceful else signal.SIGKILL
            self._signal(proc, pgid, sig)
            try:
                proc.wait(timeout=timeout if graceful else 5.0)
            except subprocess.TimeoutExpired:
                self._signal(proc, pgid, signal.SIGKILL)
                proc.wait(timeout=10.0)
        _RUNNING.discard(self)
        return proc.returncode

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], pgid: int | None, sig: int) -> None:
        try:
            if pgid is not None and pgid == proc.pid:  # our own session: kill the group
                os.killpg(pgid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        self.stop(graceful=False)
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            tmp.cleanup()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # ---- helpers ------------------------------------------------------------
    def run_tool(self, name: str, *args: str, **kwargs) -> subprocess.CompletedProcess[str]:
        kwargs.setdefault("env", self.env)
        kwargs.setdefault("fast", self.fast_jvm)
        kwargs.setdefault("version", self.version)
        return run_tool(name, *args, **kwargs)

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_text()
        if not text:
            return "(no server log)"
        return "--- server.log (tail)\n" + "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> "KafkaController":
        try:
            self.start_ready()
        except BaseException:
            self.stop(graceful=False)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"KafkaController(node_id={self.node_id}, bootstrap={self.bootstrap!r}, {state})"


@atexit.register
def _kill_leftovers() -> None:
    for ctl in list(_RUNNING):
        try:
            ctl.stop(graceful=False)
        except Exception:
            pass
