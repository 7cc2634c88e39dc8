"""TLS clients for ``bench/security/security.py``: a handshake loop and a crowd of idle
connections, the same for our node and Kafka's.

Each connection is TCP connect -> TLS handshake (mutual: the client shows its
certificate) -> one ApiVersions v3 request and its response, so the server has
finished the handshake and served a request on it before it counts.
"""
from __future__ import annotations

import threading
import time

from tests.support.secure_client import SecureSession
from wire.messages import ApiVersionsRequest

API_VERSIONS = ApiVersionsRequest(client_software_name="bench-security", client_software_version="1")


def open_session(port: int, context) -> SecureSession:
    """A TLS connection that has been served one ApiVersions."""
    session = SecureSession(port, context, timeout=10.0)
    try:
        response = session.request(API_VERSIONS, 3)
    except BaseException:
        session.close()
        raise
    if response.error_code != 0:
        session.close()
        raise RuntimeError(f"ApiVersions error {response.error_code}")
    return session


def handshake_rate(port: int, context, seconds: float, threads: int = 2, warmup_s: float = 0.0) -> dict:
    """Connections (handshake + ApiVersions + close) completed per second by
    ``threads`` clients in a loop for ``seconds``, after ``warmup_s`` of the same
    untimed (a JVM compiles its TLS code on the first few hundred)."""
    out = loop_rate(seconds, threads, lambda i: open_session(port, context).close(), warmup_s)
    return {"per_s": out["per_s"], "connections": out["count"], "threads": threads, "errors": out["errors"]}


def loop_rate(seconds: float, threads: int, step, warmup_s: float = 0.0) -> dict:
    """``step(i)`` by ``threads`` clients (i = 0..threads-1) in a loop for ``seconds``,
    after ``warmup_s`` of the same untimed: completed per second. A client stops at its
    first error."""
    if warmup_s > 0:
        loop_rate(warmup_s, threads, step)
    counts = [0] * threads
    errors: list[str] = []
    deadline = time.monotonic() + seconds

    def loop(i: int) -> None:
        while time.monotonic() < deadline:
            try:
                step(i)
            except Exception as exc:  # a refused handshake is a result, not a crash
                errors.append(repr(exc))
                return
            counts[i] += 1

    started = time.monotonic()
    workers = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(seconds + 30)
    elapsed = time.monotonic() - started
    return {"per_s": sum(counts) / elapsed, "count": sum(counts), "errors": errors[:3]}


def open_idle(port: int, context, count: int) -> list[SecureSession]:
    """``count`` TLS connections left open (each served one ApiVersions)."""
    sessions: list[SecureSession] = []
    try:
        for _ in range(count):
            sessions.append(open_session(port, context))
    except BaseException:
        close_all(sessions)
        raise
    return sessions


def close_all(sessions) -> None:
    for s in sessions:
        try:
            s.close()
        except OSError:
            pass
