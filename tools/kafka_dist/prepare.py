"""Materialise the local Apache Kafka distribution from Maven Central.

Layout of ``<cache>/kafka-<version>/`` once prepared::

    libs/              every runtime jar (copied by maven-dependency-plugin)
    bin/               bash wrappers (kafka-run-class, kafka-storage, ...)
    config/            log4j2.yaml (server, INFO) and tools-log4j2.yaml (WARN)
    logs/              default kafka.logs.dir (our configs log to stderr only)
    .maven/pom.xml     the generated pom that pinned the jars
    .prepared.json     marker, written last; holds the recipe fingerprint

The distribution is built in a staging directory next to the home and
renamed into place only once complete, under an exclusive file lock, so a
crash or a concurrent caller never sees a half-done home.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import TextIO

from . import cds, recipe

MARKER = ".prepared.json"
REPO_ROOT = Path(__file__).resolve().parents[2]


class DistError(RuntimeError):
    """The distribution could not be prepared."""


def cache_root() -> Path:
    env = os.environ.get("KRAFT_CACHE")
    return Path(env).expanduser().resolve() if env else REPO_ROOT / ".cache"


def home_dir(version: str | None = None) -> Path:
    return cache_root() / f"kafka-{version or recipe.DEFAULT_RELEASE}"


def read_marker(home: Path) -> dict | None:
    try:
        return json.loads((home / MARKER).read_text())
    except (OSError, ValueError):
        return None


def is_prepared(home: Path, r: recipe.Recipe | None = None) -> bool:
    r = r or recipe.for_release()
    marker = read_marker(home)
    if not marker or marker.get("fingerprint") != r.fingerprint():
        return False
    libs = home / "libs"
    return all((libs / jar).is_file() for jar in r.required_jars)


def _mvn() -> str:
    mvn = os.environ.get("MVN") or shutil.which("mvn")
    if not mvn:
        raise DistError("Maven (mvn) is not on PATH; install maven (e.g. `apt-get install maven`)")
    return mvn


def _run_maven(pom: Path, libs: Path, log: TextIO) -> None:
    base = [
        _mvn(),
        "-B",
        "--no-transfer-progress",
        "-f",
        str(pom),
        f"{recipe.MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies",
        f"-DoutputDirectory={libs}",
        "-DincludeScope=runtime",
        "-DoverWriteReleases=true",
    ]
    code = maven_offline_then_online(
        base, log, "kafka_dist: resolving from Maven Central (not all in ~/.m2 yet)...")
    if code:
        raise DistError(f"mvn dependency:copy-dependencies failed (exit {code}); see output above")


def maven_offline_then_online(base: list[str], log: TextIO, banner: str) -> int:
    """Run the Maven command ``base`` offline first (a ~/.m2 that holds everything
    never touches the network), then against Maven Central, printing ``banner``.
    Returns 0, or the online run's exit code after writing its output's tail to ``log``."""
    if subprocess.run(base + ["-o", "-q"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).returncode == 0:
        return 0
    print(banner, file=log, flush=True)
    # Maven 3.8 downloads into ~/.m2 without locks: two runs fetching one jar collide on
    # its ``.part`` file, so online runs (threads or processes) go one at a time
    m2 = Path.home() / ".m2"
    m2.mkdir(exist_ok=True)
    with open(m2 / ".kraft-online.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        online = subprocess.run(base, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if online.returncode != 0:
        log.write(online.stdout[-8000:])
    return online.returncode


def _check_classes(libs: Path, r: recipe.Recipe) -> None:
    for tool, (cls, jar) in r.tools.items():
        entry = cls.replace(".", "/") + ".class"
        with zipfile.ZipFile(libs / jar) as zf:
            try:
                zf.getinfo(entry)
            except KeyError:
                raise DistError(f"{tool}: class {cls} not found in {jar} (Apache Kafka {r.version}; "
                                f"name the release's class in tools/kafka_dist/releases.py)") from None


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.write_text(text)
    path.chmod(mode)


def _build(staging: Path, log: TextIO, r: recipe.Recipe) -> dict:
    started = time.monotonic()
    maven_dir = staging / ".maven"
    libs = staging / "libs"
    for d in (maven_dir, libs, staging / "bin", staging / "config", staging / "logs"):
        d.mkdir(parents=True)
    pom = maven_dir / "pom.xml"
    _write(pom, r.pom_xml())
    _run_maven(pom, libs, log)

    missing = [jar for jar in r.required_jars if not (libs / jar).is_file()]
    if missing:
        raise DistError(f"Maven finished but these jars are missing from libs/: {missing}")
    _check_classes(libs, r)

    for name, text in recipe.CONFIGS.items():
        _write(staging / "config" / name, text)
    for name, text in r.scripts().items():
        _write(staging / "bin" / name, text, 0o755)

    jars = sorted(p.name for p in libs.glob("*.jar"))
    return {
        "kafka_version": r.version,
        "fingerprint": r.fingerprint(),
        "jars": jars,
        "prepared_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "prepare_seconds": round(time.monotonic() - started, 2),
    }


def wants_archive() -> bool:
    return os.environ.get("KRAFT_JVM_CDS", "1") != "0"


def prepare(log: TextIO | None = None, version: str | None = None, archive: bool = True) -> Path:
    """Prepare release ``version`` (default: the default release) if needed and
    return its home directory; with ``archive``, its class-data-sharing archive too
    (``cds.py``; ``KRAFT_JVM_CDS=0`` goes without)."""
    r = recipe.for_release(version)
    home = home_dir(r.version)
    if is_prepared(home, r):
        if archive and wants_archive() and not cds.is_current(home):
            with open(cache_root() / f"kafka-{r.version}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                cds.ensure_archive(home)
        return home
    log = log or sys.stderr
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"kafka-{r.version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_prepared(home, r):  # somebody else finished while we waited
            return home
        print(f"kafka_dist: preparing Apache Kafka {r.version} in {home}", file=log, flush=True)
        staging = Path(tempfile.mkdtemp(prefix=f".kafka-{r.version}.staging-", dir=root))
        try:
            marker = _build(staging, log, r)
            # Marker last: only a complete build carries it.
            (staging / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
            staging.chmod(0o755)  # mkdtemp made it 0700
            if home.exists():
                shutil.rmtree(home)
            staging.rename(home)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        print(f"kafka_dist: prepared in {marker['prepare_seconds']} s ({len(marker['jars'])} jars)", file=log, flush=True)
        if archive and wants_archive():
            cds.ensure_archive(home)
    return home
