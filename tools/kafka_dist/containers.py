"""Optional backend: Apache Kafka in a container via testcontainers.

Where a Docker engine is reachable (and may pull ``apache/kafka:4.3.1``),
the same interop scenarios that :mod:`tools.kafka_dist.controller` runs on the
local JVM can run against the official image instead. ``testcontainers`` is
*not* a dependency of this project: :func:`backend_status` reports why the
backend is unusable (no engine, package missing) so tests can skip with a
clear reason.

    ok, reason = backend_status()
    if not ok: pytest.skip(reason)
    with start_kafka_controller() as ctl:   # ContainerController
        describe_cluster(ctl.host, ctl.port)

The container runs a standalone dynamic-quorum controller (``kafka-storage
format --standalone``, like the JVM backend) listening on the same port
number inside and outside, so the endpoint it advertises is the one the host
connects to.
"""

from __future__ import annotations

import os
import shlex
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlparse

from .controller import free_port, random_cluster_id
from .probe import ClusterInfo, describe_cluster
from .recipe import KAFKA_VERSION

IMAGE = f"apache/kafka:{KAFKA_VERSION}"
LOCAL_BACKEND_HINT = "the same scenario runs against the local JVM backend (tools.kafka_dist.controller)"


class ContainerBackendUnavailable(RuntimeError):
    """No usable container engine (or the image cannot be pulled)."""


def _socket_candidates() -> list[str]:
    out = []
    host = os.environ.get("DOCKER_HOST")
    if host:
        out.append(host)
    out.append("unix:///var/run/docker.sock")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        out.append(f"unix://{runtime}/docker.sock")
    out.append(f"unix://{Path.home()}/.docker/run/docker.sock")
    return out


def _ping(url: str, timeout: float = 2.0) -> str | None:
    """``None`` if the engine at ``url`` answers ``/_ping``, else why not."""
    parsed = urlparse(url)
    try:
        if parsed.scheme == "unix":
            if not os.path.exists(parsed.path):
                return f"{parsed.path} does not exist"
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            sock.connect(parsed.path)
        elif parsed.scheme in ("tcp", "http"):
            sock = socket.create_connection((parsed.hostname, parsed.port or 2375), timeout=timeout)
        else:
            return f"unsupported DOCKER_HOST scheme {parsed.scheme!r}"
        with sock:
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            reply = sock.recv(4096).decode(errors="replace")
    except OSError as exc:
        return f"{url}: {exc.strerror or exc}"
    if " 200 " in reply.split("\r\n", 1)[0]:
        return None
    return f"{url}: unexpected reply {reply.splitlines()[0] if reply else '(empty)'!r}"


def docker_engine() -> tuple[str | None, str]:
    """``(url, "")`` for the first reachable engine, else ``(None, reasons)``."""
    reasons = []
    for url in _socket_candidates():
        why = _ping(url)
        if why is None:
            return url, ""
        reasons.append(why)
    return None, "; ".join(dict.fromkeys(reasons))


def backend_status() -> tuple[bool, str]:
    """Whether the container backend can run here, and if not, why (a skip reason)."""
    url, why = docker_engine()
    if url is None:
        return False, f"no Docker engine on this machine: {why}; {LOCAL_BACKEND_HINT}"
    try:
        import testcontainers  # noqa: F401
        from testcontainers.core.container import DockerContainer  # noqa: F401
    except ImportError as exc:
        return False, (
            f"Docker engine at {url} but the optional 'testcontainers' package is not importable ({exc}); "
            f"pip install testcontainers to enable it; {LOCAL_BACKEND_HINT}"
        )
    return True, f"Docker engine at {url}"


def _host_for(engine_url: str) -> str:
    """Where published ports appear: TC_HOST, a tcp:// engine's host, else loopback."""
    if os.environ.get("TC_HOST"):
        return os.environ["TC_HOST"]
    parsed = urlparse(engine_url)
    if parsed.scheme in ("tcp", "http") and parsed.hostname:
        return parsed.hostname
    return "127.0.0.1"


def _startup_script(node_id: int, port: int, advertised_host: str, cluster_id: str, extra: Mapping[str, str]) -> str:
    props = {
        "process.roles": "controller",
        "node.id": str(node_id),
        "controller.listener.names": "CONTROLLER",
        "listeners": f"CONTROLLER://0.0.0.0:{port}",
        "advertised.listeners": f"CONTROLLER://{advertised_host}:{port}",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
        "controller.quorum.bootstrap.servers": f"localhost:{port}",
        "log.dirs": "/tmp/kraft-controller",
        "metadata.log.dir": "/tmp/kraft-controller",
        **extra,
    }
    body = "\n".join(f"{k}={v}" for k, v in props.items())
    return (
        "set -e\n"
        f"cat > /tmp/controller.properties <<'EOF'\n{body}\nEOF\n"
        f"/opt/kafka/bin/kafka-storage.sh format --standalone --cluster-id {shlex.quote(cluster_id)} "
        "--config /tmp/controller.properties\n"
        "exec /opt/kafka/bin/kafka-server-start.sh /tmp/controller.properties\n"
    )


@dataclass
class ContainerController:
    """A running ``apache/kafka`` controller container (mirrors KafkaController's surface)."""

    container: Any
    node_id: int
    host: str
    port: int
    cluster_id: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def wait_ready(self, timeout: float = 120.0) -> ClusterInfo:
        deadline = time.monotonic() + timeout
        started = time.monotonic()
        last: object = None
        while time.monotonic() < deadline:
            try:
                info = describe_cluster(self.host, self.port, timeout=1.0)
                if info.error_code == 0 and info.controller_id == self.node_id:
                    self.timings["ready"] = time.monotonic() - started
                    return info
                last = info
            except (OSError, ValueError) as exc:
                last = exc
            time.sleep(0.1)  # poll interval
        logs = self.logs()
        self.stop()
        raise TimeoutError(f"container controller not ready after {timeout}s (last probe: {last!r})\n{logs}")

    def logs(self) -> str:
        try:
            out, err = self.container.get_logs()
            return (out or b"").decode(errors="replace")[-4000:] + (err or b"").decode(errors="replace")[-4000:]
        except Exception as exc:  # pragma: no cover - best effort
            return f"(no logs: {exc})"

    def stop(self) -> None:
        try:
            self.container.stop()
        except Exception:
            pass

    def __enter__(self) -> "ContainerController":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_kafka_controller(
    *,
    node_id: int = 1,
    port: int | None = None,
    cluster_id: str | None = None,
    overrides: Mapping[str, str] | None = None,
    image: str = IMAGE,
    timeout: float = 120.0,
) -> ContainerController:
    """Start ``apache/kafka`` as a standalone KRaft controller and wait until it is active.

    Raises :class:`ContainerBackendUnavailable` if there is no engine, no
    testcontainers, or the image cannot be pulled.
    """
    ok, why = backend_status()
    if not ok:
        raise ContainerBackendUnavailable(why)
    from testcontainers.core.container import DockerContainer

    port = port or free_port()
    cluster_id = cluster_id or random_cluster_id()
    host = _host_for(docker_engine()[0] or "")
    container = DockerContainer(image)
    script = _startup_script(node_id, port, host, cluster_id, overrides or {})
    container = container.with_bind_ports(port, port).with_command(["bash", "-c", script])
    try:
        container.start()
    except Exception as exc:
        text = str(exc)
        if any(s in text.lower() for s in ("pull", "not found", "manifest", "denied", "timeout")):
            raise ContainerBackendUnavailable(f"cannot start {image}: {text}") from exc
        raise
    ctl = ContainerController(container, node_id, host, port, cluster_id)
    ctl.wait_ready(timeout)
    return ctl
