"""A class-data-sharing archive per prepared release, for the suite's short-lived JVMs.

A Kafka JVM spends most of its start parsing and verifying the same few thousand classes.
The JDK's dynamic CDS archive (``-XX:ArchiveClassesAtExit``) keeps them parsed; a JVM
started with ``-XX:SharedArchiveFile`` maps them instead (measured on Kafka 4.4.0, 2 cores:
a broker+controller's start 4.3 -> 2.5-3.0 s of CPU, ``kafka-storage format`` 1.9 -> 1.1 s).

``ensure_archive(home)`` records one: a combined broker+controller of that release is
formatted, started until it says so, and stopped. It lives in ``<home>/cds/`` with the
``java -version`` it was made by, and is made again when the JDK changes. The wrapper
``kafka-run-class`` uses it only when ``KAFKA_CDS=1`` (``controller.tool_env`` sets that
for the test JVMs); Kafka's own scripts know nothing of it, so the benches, which run
Kafka as its scripts do, never use it. A JVM that cannot use the archive (a jar changed)
starts without it, silently (``-Xlog:cds=off``).
"""
from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from functools import cache
from pathlib import Path

from .ports import free_port

log = logging.getLogger(__name__)

ARCHIVE = "kafka.jsa"
JAVA_STAMP = "java-version.txt"
SKIPPED = "skipped.txt"
STARTED = "Kafka Server started"
START_S = 180.0
STOP_S = 60.0


def archive_dir(home: Path) -> Path:
    return home / "cds"


@cache
def _java_version() -> str:
    from . import java_executable
    out = subprocess.run([str(java_executable()), "-version"], capture_output=True, text=True, timeout=60)
    return (out.stderr or out.stdout).strip()


def is_current(home: Path, java: str | None = None) -> bool:
    """An archive, or a recorded reason for having none, made by this JDK."""
    d = archive_dir(home)
    try:
        stamp = (d / JAVA_STAMP).read_text().strip()
    except OSError:
        return False
    have = (d / ARCHIVE).is_file() or (d / SKIPPED).is_file()
    return have and stamp == (java or _java_version())


def _node_properties(data: Path) -> str:
    broker, controller = free_port(), free_port()
    return "\n".join([
        "process.roles=broker,controller", "node.id=1",
        f"controller.quorum.bootstrap.servers=127.0.0.1:{controller}",
        f"listeners=PLAINTEXT://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{controller}",
        "controller.listener.names=CONTROLLER", f"log.dirs={data}",
        "offsets.topic.replication.factor=1", ""])


def _record(home: Path, target: Path) -> None:
    """Start and stop one combined node of ``home`` with the archive written at its exit."""
    from . import java_executable
    from .controller import FAST_JVM_OPTS, random_cluster_id
    with tempfile.TemporaryDirectory(prefix="kafka-cds-") as tmp:
        work = Path(tmp)
        props = work / "server.properties"
        props.write_text(_node_properties(work / "data"))
        env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx512m -Xms64m", KAFKA_CDS="0", LOG_DIR=str(work / "logs"),
                   JAVA_HOME=str(Path(java_executable()).resolve().parents[1]))
        env["KAFKA_JVM_PERFORMANCE_OPTS"] = FAST_JVM_OPTS
        subprocess.run([str(home / "bin" / "kafka-storage"), "format", "-t", random_cluster_id(), "--standalone",
                        "-c", str(props)], env=env, check=True, capture_output=True, timeout=START_S)
        env["KAFKA_JVM_PERFORMANCE_OPTS"] = f"{FAST_JVM_OPTS} -XX:ArchiveClassesAtExit={target} -Xlog:cds=off"
        out_path = work / "server.out"
        with open(out_path, "wb") as out:
            proc = subprocess.Popen([str(home / "bin" / "kafka-server-start"), str(props)], env=env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        try:
            deadline = time.monotonic() + START_S
            while STARTED not in out_path.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the node did not start (exit {proc.poll()}): "
                                       f"{out_path.read_text(errors='replace')[-400:]}")
                time.sleep(0.2)  # polling the node's output for its start line, with a deadline
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=STOP_S)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if not target.is_file() or target.stat().st_size == 0:
            raise RuntimeError("the JVM exited without writing the archive")


def ensure_archive(home: Path) -> Path | None:
    """The archive of ``home`` (made now if missing or made by another JDK), or None where
    it cannot be made (the reason is kept in ``cds/skipped.txt`` and logged once).
    The caller holds the release's lock."""
    java = _java_version()
    d = archive_dir(home)
    if is_current(home, java):
        return d / ARCHIVE if (d / ARCHIVE).is_file() else None
    shutil.rmtree(d, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=".cds-", dir=home))
    try:
        started = time.monotonic()
        try:
            _record(home, staging / ARCHIVE)
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            (staging / ARCHIVE).unlink(missing_ok=True)
            (staging / SKIPPED).write_text(f"{exc}\n")
            log.warning("kafka_dist: no class-data-sharing archive for %s: %s", home.name, exc)
        else:
            log.info("kafka_dist: class-data-sharing archive for %s in %.1f s", home.name, time.monotonic() - started)
        (staging / JAVA_STAMP).write_text(java + "\n")
        staging.chmod(0o755)
        staging.rename(d)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return d / ARCHIVE if (d / ARCHIVE).is_file() else None
