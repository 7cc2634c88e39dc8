"""A local Apache Kafka distribution pinned from Maven Central.

``python -m tools.kafka_dist [--version X | --matrix]`` (or :func:`ensure_dist`)
resolves ``org.apache.kafka:kafka_2.13`` and ``org.apache.kafka:kafka-tools`` at one
release (default :data:`KAFKA_VERSION`, the suite's default release), plus the log4j2
backend that release ships, into ``$KRAFT_CACHE/kafka-<version>/libs``
(``KRAFT_CACHE`` defaults to ``<repo>/.cache``), and writes bash wrappers into
``bin/``. Releases live side by side; ``releases.py`` holds their facts. The first
run needs Maven Central (or a warm ``~/.m2``); later runs only stat a marker.

API (``version=None`` is the default release)::

    ensure_dist(version=None) -> Path             prepare if needed, return the home
    upstream_jar("kafka-clients", version=None)   -> home/libs/kafka-clients-4.3.1.jar
    classpath(version=None) -> str                all jars in libs/, os.pathsep-joined
    bin_path("kafka-storage", version=None)       a wrapper script in home/bin
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from .prepare import DistError, cache_root, home_dir
from .recipe import KAFKA_VERSION, LOG4J2_VERSION, SCALA_BINARY_VERSION
from .releases import DEFAULT_RELEASE, MATRIX, RELEASES

__all__ = [
    "KAFKA_VERSION",
    "DEFAULT_RELEASE",
    "MATRIX",
    "RELEASES",
    "SCALA_BINARY_VERSION",
    "LOG4J2_VERSION",
    "DistError",
    "ensure_dist",
    "upstream_jar",
    "classpath",
    "bin_path",
    "cache_root",
    "home_dir",
    "java_executable",
    "javac_executable",
]


def ensure_dist(version: str | None = None, archive: bool = True) -> Path:
    """Prepare release ``version`` (default: the default release) if needed
    (idempotent) and return its home; ``archive``: with its class-data-sharing
    archive (``cds.py``)."""
    from .prepare import prepare

    return prepare(version=version, archive=archive)


def upstream_jar(artifact: str, version: str | None = None) -> Path:
    """The pinned jar of ``artifact`` in the distribution's libs/.

    Kafka artifacts (``"kafka-clients"``, ``"kafka-raft"``, ``"kafka-metadata"``,
    ``"kafka_2.13"``; ``"kafka"`` is an alias for the core jar) resolve to
    exactly ``<artifact>-<version>.jar``; any other artifact id
    (``"log4j-core"``, ``"jackson-databind"``...) to the single
    ``<artifact>-<version>.jar`` present.
    """
    version = version or DEFAULT_RELEASE
    libs = ensure_dist(version, archive=False) / "libs"  # a path: no JVM, no archive needed
    if artifact == "kafka":
        artifact = f"kafka_{SCALA_BINARY_VERSION}"
    exact = libs / f"{artifact}-{version}.jar"
    if artifact.startswith("kafka") and exact.is_file():
        return exact
    pattern = re.compile(re.escape(artifact) + r"-\d[^/]*\.jar")
    found = sorted(p for p in libs.iterdir() if pattern.fullmatch(p.name))
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(f"no jar for artifact {artifact!r} in {libs}")
    raise LookupError(f"several jars match artifact {artifact!r}: {[p.name for p in found]}")


def classpath(version: str | None = None) -> str:
    """Every jar of the distribution, joined with ``os.pathsep`` (for ``java -cp``, which
    runs without the release's archive)."""
    libs = ensure_dist(version, archive=False) / "libs"
    return os.pathsep.join(str(p) for p in sorted(libs.glob("*.jar")))


def bin_path(name: str, version: str | None = None) -> Path:
    """A wrapper script in ``home/bin`` (e.g. ``"kafka-metadata-quorum"``), about to be
    run: the release's class-data-sharing archive is made first if missing."""
    path = ensure_dist(version) / "bin" / name
    if not path.is_file():
        raise FileNotFoundError(f"no script {name!r} in {path.parent}")
    return path


def _jdk_tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).is_file():
        return str(Path(java_home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found (set JAVA_HOME or put a JDK 17+ on PATH)")
    return found


def java_executable() -> str:
    return _jdk_tool("java")


def javac_executable() -> str:
    return _jdk_tool("javac")
