"""Saying at once that a bootstrap address cannot be reached, and what to check.

Kafka's admin client logs a WARN per failed connection ("Connection to node -1
(localhost/127.0.0.1:9093) could not be established. Node may not be available.")
and, when ``default.api.timeout.ms`` runs out without any answer, the tool prints
"Timed out waiting for a node assignment". We warn once per address with the
socket error in plain words, keep retrying as Kafka does, and end with one line
naming the addresses, their errors and what to check.
"""
from __future__ import annotations

import errno
import logging
import socket
import sys

from .errors import TerseError

log = logging.getLogger("kraft-metadata-quorum")

_ERRNO_TEXT = {
    errno.ECONNREFUSED: "connection refused",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ETIMEDOUT: "timed out",
    errno.ECONNRESET: "connection reset",
    errno.EADDRNOTAVAIL: "address not available",
}


def socket_error_text(exc: OSError) -> str:
    """``connection refused``, ``timed out``, ``host unreachable``, ... for an OSError."""
    if isinstance(exc, socket.gaierror):
        return f"unknown host ({exc.strerror or exc})"
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    if exc.errno in _ERRNO_TEXT:
        return _ERRNO_TEXT[exc.errno]
    return exc.strerror or str(exc) or type(exc).__name__


class BootstrapUnreachable(TerseError):
    """No bootstrap address answered before ``default.api.timeout.ms`` ran out."""


class Reachability:
    """Remembers the connection failures of one tool run; warns once per address."""

    def __init__(self, controllers: bool, timeout_ms: int):
        self.kind = "bootstrap controller" if controllers else "bootstrap server"
        self.node_kind = "controller" if controllers else "broker"
        self.check = ("the controller is running and that --bootstrap-controller gives the host:port of "
                      "its controller listener" if controllers else
                      "the broker is running and that --bootstrap-server gives the host:port of one of "
                      "its listeners")
        self.timeout_ms = timeout_ms
        self.failures: dict[str, str] = {}  # "host:port" -> the latest error
        self.reached = False

    def connected(self) -> None:
        self.reached = True

    def failed(self, address: str, reason: str, bootstrap: bool) -> None:
        first = address not in self.failures
        self.failures[address] = reason
        if first:
            what = self.kind if bootstrap else self.node_kind
            log.warning("Cannot connect to %s %s: %s; retrying for up to %d ms (default.api.timeout.ms)",
                        what, address, reason, self.timeout_ms)

    def give_up(self) -> BootstrapUnreachable:
        errors = "; ".join(f"{a}: {r}" for a, r in self.failures.items())
        return BootstrapUnreachable(
            f"Could not connect to any {self.kind} within {self.timeout_ms} ms ({errors}): check that "
            f"{self.check}, reachable from this machine")


class _Stderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        level = "WARN" if record.levelno == logging.WARNING else record.levelname  # log4j's word
        try:
            sys.stderr.write(f"{level} {self.format(record)}\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def log_to_stderr() -> None:
    """The tool's warnings as ``WARN <message>`` lines on stderr (once per process)."""
    if any(isinstance(h, _Stderr) for h in log.handlers):
        return
    log.addHandler(_Stderr())
    log.setLevel(logging.INFO)
    log.propagate = False
