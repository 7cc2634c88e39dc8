"""Driving ``tests/java/CodecTester.java``: one JVM that judges our bytes with Kafka's classes.

    tester = JavaCodecTester.start(workdir)    # javac (cached by source hash) + one JVM
    tester.check(model, obj, version)          # -> None, or a failure dict from Java
    tester.check_many([(model, obj, version), ...])
    tester.reparse(model, data, version)       # Kafka parses and re-serialises our bytes
    tester.records(data, batches)              # record batch v2 bytes read by MemoryRecords
    tester.metadata_values([value, ...])       # __cluster_metadata values via MetadataRecordSerde
    tester.metadata_types()                    # Kafka's MetadataRecordType table
    tester.error_responses([(key, version, body, code, message), ...])  # getErrorResponse
    tester.close()                             # always: kills the JVM

Kafka's own message generator (``org.apache.kafka:generator``, published on Maven Central
with each release) also runs here: ``build_synthetic_classes(spec_dir)`` turns test specs
of ours (``tests/data/synth``) into Java classes, so the dialect features Kafka's shipped
specs never use are compared against Kafka's generator too.

The compiled class is cached under ``$KRAFT_CACHE/codec-tester/<sha256 of source and
classpath names>/`` (``KRAFT_CACHE`` defaults to ``<repo>/.cache``). The JVM's stderr
goes to a file in ``workdir`` (Kafka's classes may log), never to a pipe that could fill.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

from tests.support.kafka_json import java_class_name, to_kafka_json

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "tests" / "java" / "CodecTester.java"
BATCH = 200  # checks per round trip


def _b64(data) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def compile_tester(classpath: str, javac: str) -> Path:
    """Compile CodecTester.java once per (source, classpath) and return the classes directory."""
    from tools.kafka_dist import cache_root

    h = hashlib.sha256(SOURCE.read_bytes())
    h.update("\0".join(sorted(Path(p).name for p in classpath.split(os.pathsep))).encode())
    out = cache_root() / "codec-tester" / h.hexdigest()[:16]
    if (out / "CodecTester.class").is_file():
        return out
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    from tools.kafka_dist.controller import JAVAC_FAST_FLAGS
    proc = subprocess.run([javac, *JAVAC_FAST_FLAGS, "-nowarn", "-d", str(tmp), "-cp", classpath, str(SOURCE)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
    try:
        tmp.rename(out)
    except OSError:  # a concurrent run got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


# org.apache.kafka:generator is not on Maven Central for 4.4.0 (mvn, 2026-12-01): the
# synthetic specs go through 4.3.1's, compiled and run against 4.3.1's kafka-clients (its
# output does not compile against 4.4's, which moved ByteUtils).
GENERATOR_VERSION = "4.3.1"


def kafka_generator_jar() -> Path:
    """``org.apache.kafka:generator`` (``GENERATOR_VERSION``), fetched with Maven into the cache.

    (tools/kafka_dist does not ship it: the generator is a build tool, not part of the
    distribution.) Offline first, then Maven Central, as tools/kafka_dist does.
    """
    import shutil

    from tools.kafka_dist import cache_root
    from tools.kafka_dist.recipe import MAVEN_DEPENDENCY_PLUGIN

    KAFKA_VERSION = GENERATOR_VERSION
    out = cache_root() / f"kafka-generator-{KAFKA_VERSION}"
    jar = out / f"generator-{KAFKA_VERSION}.jar"
    if jar.is_file():
        return jar
    mvn = os.environ.get("MVN") or shutil.which("mvn")
    if not mvn:
        raise RuntimeError("Maven (mvn) is not on PATH: cannot fetch org.apache.kafka:generator")
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    base = [mvn, "-B", "--no-transfer-progress", f"{MAVEN_DEPENDENCY_PLUGIN}:copy",
            f"-Dartifact=org.apache.kafka:generator:{KAFKA_VERSION}:jar", f"-DoutputDirectory={tmp}"]
    proc = subprocess.run(base + ["-o", "-q"], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        proc = subprocess.run(base, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not (tmp / jar.name).is_file():
        raise RuntimeError(f"fetching org.apache.kafka:generator:{KAFKA_VERSION} failed:\n"
                           f"{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    out.mkdir(parents=True, exist_ok=True)
    (tmp / jar.name).replace(jar)
    shutil.rmtree(tmp, ignore_errors=True)
    return jar


def build_synthetic_classes(spec_dir: Path, package: str) -> Path:
    """Run Kafka's MessageGenerator on every spec in ``spec_dir`` and compile the result.

    Returns a classes directory (cached by the hash of the specs and the classpath names).
    """
    from tools.kafka_dist import cache_root, classpath, java_executable, javac_executable
    from tools.kafka_dist.controller import FAST_JVM_OPTS, JAVAC_FAST_FLAGS

    cp = classpath(GENERATOR_VERSION)  # the generator's output compiles against its own release
    gen = kafka_generator_jar()
    specs = sorted(Path(spec_dir).glob("*.json"))
    h = hashlib.sha256(package.encode())
    for p in specs:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    h.update(gen.name.encode())
    h.update("\0".join(sorted(Path(p).name for p in cp.split(os.pathsep))).encode())
    out = cache_root() / "codec-tester" / f"synth-{h.hexdigest()[:16]}"
    if (out / "classes").is_dir():
        return out / "classes"
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    src, classes = tmp / "src", tmp / "classes"
    src.mkdir(parents=True, exist_ok=True)
    classes.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [java_executable(), *FAST_JVM_OPTS.split(), "-cp", os.pathsep.join([str(gen), cp]),
         "org.apache.kafka.message.MessageGenerator", "-p", package, "-o", str(src),
         "-i", str(spec_dir), "-m", "MessageDataGenerator", "JsonConverterGenerator"],
        capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"Kafka's MessageGenerator rejected {spec_dir}:\n{proc.stdout[-3000:]}\n"
                           f"{proc.stderr[-6000:]}")
    proc = subprocess.run([javac_executable(), *JAVAC_FAST_FLAGS, "-nowarn", "-encoding", "UTF-8", "-d", str(classes),
                           "-cp", cp, *map(str, sorted(src.glob("*.java")))],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"javac of the generated classes failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    try:
        tmp.rename(out)
    except OSError:  # a concurrent run got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return out / "classes"


class JavaCodecTester:
    def __init__(self, proc: subprocess.Popen, stderr_path: Path, java_package: str | None = None):
        self.java_package = java_package  # where the message classes live, when not Kafka's own
        self.proc = proc
        self.stderr_path = stderr_path
        self.lock = threading.Lock()
        self.checked = 0

    @classmethod
    @contextlib.contextmanager
    def running(cls, workdir: Path, **start_args):
        """A fixture's tester: the JDK required (the test skips or fails as
        ``need_jdk`` says), the JVM started, and always closed afterwards."""
        from tests.support.jdk import need_jdk
        need_jdk()
        tester = cls.start(workdir, **start_args)
        try:
            yield tester
        finally:
            tester.close()

    @classmethod
    def start(cls, workdir: Path, extra_classpath: list[Path] = (),
              java_package: str | None = None, version: str | None = None) -> "JavaCodecTester":
        """Compile (cached) and start the JVM over Kafka release ``version``'s classes
        (default: the default release). ``extra_classpath``/``java_package``: test
        message classes made by Kafka's generator from our own specs."""
        from tools.kafka_dist import classpath, java_executable, javac_executable

        cp = classpath(version)
        classes = compile_tester(cp, javac_executable())
        workdir.mkdir(parents=True, exist_ok=True)
        err = workdir / "codec-tester.stderr"
        with open(err, "wb") as ef:
            proc = subprocess.Popen(
                [java_executable(), "-Xss4m", "-XX:+UseSerialGC", "-Xshare:auto",
                 "-cp", os.pathsep.join([str(classes), *map(str, extra_classpath), cp]),
                 "CodecTester"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=ef,
            )
        tester = cls(proc, err, java_package)
        try:
            reply = tester._call({"mode": "ping"})
            if not reply.get("ok"):
                raise RuntimeError(f"CodecTester did not answer the ping: {reply}")
        except BaseException:
            tester.close()
            raise
        tester.kafka_version = reply.get("kafka")
        return tester

    # -- transport ----------------------------------------------------------------------
    def _call(self, request: dict) -> dict:
        line = json.dumps(request, separators=(",", ":")) + "\n"
        with self.lock:
            if self.proc.poll() is not None:
                raise RuntimeError(f"CodecTester JVM exited ({self.proc.returncode}): {self._stderr()}")
            self.proc.stdin.write(line.encode("utf-8"))
            self.proc.stdin.flush()
            out = self.proc.stdout.readline()
        if not out:
            raise RuntimeError(f"CodecTester JVM died: {self._stderr()}")
        return json.loads(out)

    def _stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def call_many(self, requests: list[dict]) -> list[dict]:
        replies = []
        for i in range(0, len(requests), BATCH):
            chunk = requests[i:i + BATCH]
            replies.extend(self._call({"batch": chunk})["results"])
        self.checked += len(requests)
        return replies

    # -- checks -------------------------------------------------------------------------
    def _class(self, model) -> str:
        return java_class_name(model, self.java_package)

    def message_request(self, model, obj, version: int, data: bytes | None = None) -> dict:
        if data is None:
            data = obj.encode(version)
        return {"class": self._class(model), "version": version,
                "json": to_kafka_json(model, obj, version), "bytes": _b64(data)}

    def check(self, model, obj, version: int, data: bytes | None = None) -> dict | None:
        """None when Kafka agrees with our encoding of obj (both directions), else Java's reply."""
        reply = self.call_many([self.message_request(model, obj, version, data)])[0]
        return None if reply.get("ok") else reply

    def check_many(self, items) -> list[dict | None]:
        reqs = [self.message_request(m, o, v) for m, o, v in items]
        return [None if r.get("ok") else r for r in self.call_many(reqs)]

    def reparse(self, model, data: bytes, version: int) -> dict | None:
        reply = self.call_many([{"mode": "reparse", "class": self._class(model),
                                 "version": version, "bytes": _b64(data)}])[0]
        return None if reply.get("ok") else reply

    def reparse_many(self, items) -> list[dict | None]:
        reqs = [{"mode": "reparse", "class": self._class(m), "version": v, "bytes": _b64(d)}
                for m, d, v in items]
        return [None if r.get("ok") else r for r in self.call_many(reqs)]

    def kafka_json(self, model, data: bytes, version: int) -> dict:
        """Kafka's parse of our bytes, as its JSON (for failure messages)."""
        return self.call_many([{"mode": "tojson", "class": self._class(model),
                                "version": version, "bytes": _b64(data)}])[0]

    def records(self, data: bytes, batches: list[dict] | None = None) -> dict:
        req = {"mode": "records", "bytes": _b64(data)}
        if batches is not None:
            req["batches"] = batches
        return self.call_many([req])[0]

    def metadata_values(self, values) -> list[dict]:
        """MetadataRecordSerde's reading of each record value: {"ok", "api_key", "version",
        "class", "bytes" (Kafka's re-serialisation, base64)} or {"ok": False, "error"}."""
        return self.call_many([{"mode": "metadata", "bytes": _b64(v)} for v in values])

    def error_responses(self, items) -> list[dict]:
        """Kafka's ``getErrorResponse`` for each ``(api_key, version, body bytes, code,
        message)``: {"ok": True, "bytes": base64} (or "null": True), else {"ok": False,
        "stage", "error"} (see CodecTester's error_response mode)."""
        return self.call_many([{"mode": "error_response", "api_key": k, "version": v, "bytes": _b64(b),
                                "error_code": c, "message": m} for k, v, b, c, m in items])

    def metadata_types(self) -> list[dict]:
        """Kafka's MetadataRecordType values: {"name", "id", "lowest", "highest", "class"}."""
        return self._call({"mode": "metadata_types"})["types"]

    def close(self) -> None:
        p = self.proc
        if p.poll() is None:
            try:
                p.stdin.close()
                p.wait(timeout=10)
            except Exception:
                pass
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
        for s in (p.stdin, p.stdout):
            try:
                s.close()
            except Exception:
                pass


# Hypothesis examples per (message, version) in the differential sweeps: a quick sweep in
# `make test` (fresh examples every run) and a deep one in `make test-slow`;
# JAVA_DIFF_EXAMPLES overrides the quick count.
QUICK_EXAMPLES = int(os.environ.get("JAVA_DIFF_EXAMPLES", "10"))
DEEP_EXAMPLES = 40


def sweep_depths():
    """pytest params of the two sweep depths: quick (default suite), deep (slow suite)."""
    import pytest
    return [pytest.param(QUICK_EXAMPLES, id="quick"),
            pytest.param(DEEP_EXAMPLES, id="deep", marks=pytest.mark.slow)]


def sweep_settings(examples: int):
    """Hypothesis settings of the differential sweeps against Kafka's classes: ``examples``
    per (message, version), no deadline (the JVM answers over a pipe), no example database."""
    from hypothesis import HealthCheck, settings

    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))
