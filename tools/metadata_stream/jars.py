"""The Kafka connector jars Spark needs, resolved once into the cache.

pip's pyspark ships no Kafka source: ``spark-sql-kafka-0-10`` and its runtime jars that
pyspark's own ``jars/`` lacks are fetched from Maven Central by Maven (offline first, from
``~/.m2``), checked against the SHA-256 sums pinned here and kept in
``$KRAFT_CACHE/spark-kafka-<spark version>/``. A job only reads that directory
(``spark.jars``): nothing is fetched at run time.
"""
from __future__ import annotations

import fcntl
import hashlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from tools.kafka_dist.prepare import cache_root, maven_offline_then_online

SPARK_VERSION = "4.2.0"
MAVEN_DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

# (groupId, artifactId, version, sha256): the connector and what its POM pulls in at
# runtime beyond pyspark 4.2.0's jars/ (which has lz4, zstd-jni, snappy, jsr305,
# scala-parallel-collections and hadoop-client already).
JARS: tuple[tuple[str, str, str, str], ...] = (
    ("org.apache.spark", "spark-sql-kafka-0-10_2.13", SPARK_VERSION,
     "64539c45e5d39f7ddb747312c239f38f5208d08c1a0ddf7d70beb2fbd9373705"),
    ("org.apache.spark", "spark-token-provider-kafka-0-10_2.13", SPARK_VERSION,
     "641c7947afc8aa1189e433b7c2d305293993c8691bc1c2062d6d4f513b12518c"),
    ("org.apache.kafka", "kafka-clients", "3.9.2",
     "014b4ef36884478a932641818b080c36a8f8e2e92dc771e800c9d2694f4f83d8"),
    ("org.apache.commons", "commons-pool2", "2.13.1",
     "f77a5060d6936a9144023584232f9de3f2248f1abfe156e9d31795f18770674f"),
)


class JarsError(RuntimeError):
    """The connector jars could not be resolved or did not match their checksums."""


def jars_dir() -> Path:
    return cache_root() / f"spark-kafka-{SPARK_VERSION}"


def jar_name(artifact: str, version: str) -> str:
    return f"{artifact}-{version}.jar"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified(directory: Path) -> list[Path] | None:
    paths = []
    for _, artifact, version, sha in JARS:
        path = directory / jar_name(artifact, version)
        if not path.is_file() or _sha256(path) != sha:
            return None
        paths.append(path)
    return paths


def pom_xml() -> str:
    deps = "".join(
        f"<dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>"
        for g, a, v, _ in JARS)
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>"
            "<groupId>kraft-server</groupId><artifactId>spark-kafka-jars</artifactId><version>1</version>"
            f"<packaging>pom</packaging><dependencies>{deps}</dependencies></project>\n")


def _maven(pom: Path, out: Path, log: TextIO) -> None:
    mvn = shutil.which("mvn")
    if not mvn:
        raise JarsError("Maven (mvn) is not on PATH; install maven (e.g. `apt-get install maven`)")
    # -C: refuse a download whose .sha1 does not match; excludeTransitive: exactly JARS.
    base = [mvn, "-B", "-C", "--no-transfer-progress", "-f", str(pom),
            f"{MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies", f"-DoutputDirectory={out}",
            "-DexcludeTransitive=true"]
    code = maven_offline_then_online(
        base, log, "metadata_stream: resolving the Kafka connector jars from Maven Central...")
    if code:
        raise JarsError(f"mvn copy-dependencies failed (exit {code})")


def ensure_jars(log: TextIO | None = None) -> list[Path]:
    """The connector jars (resolving them on first use); JarsError if they cannot be had."""
    home = jars_dir()
    paths = _verified(home)
    if paths:
        return paths
    log = log or sys.stderr
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"spark-kafka-{SPARK_VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        paths = _verified(home)
        if paths:
            return paths
        staging = Path(tempfile.mkdtemp(prefix=".spark-kafka.staging-", dir=root))
        try:
            (staging / "pom.xml").write_text(pom_xml())
            _maven(staging / "pom.xml", staging / "jars", log)
            for _, artifact, version, sha in JARS:
                path = staging / "jars" / jar_name(artifact, version)
                if not path.is_file():
                    raise JarsError(f"Maven finished but {path.name} is missing")
                if _sha256(path) != sha:
                    raise JarsError(f"{path.name}: SHA-256 {_sha256(path)} is not the pinned {sha}")
            if home.exists():
                shutil.rmtree(home)
            (staging / "jars").rename(home)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return _verified(home)
