"""The pinned Apache Kafka distribution and the real-controller harness.

The controller test formats a storage dir, starts a real Kafka
(the default release) ``process.roles=controller`` node (standalone dynamic quorum) on a free
loopback port, and runs ``kafka-metadata-quorum describe --status`` against it.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.jdk import need_jdk
from tools import kafka_dist
from tools.kafka_dist import recipe
from tools.kafka_dist.controller import KafkaController
from tools.kafka_dist.controller import tool_env as controller_tool_env
from tools.kafka_dist.releases import DEFAULT_RELEASE

pytestmark = pytest.mark.java

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dist_home() -> Path:
    need_jdk()
    return kafka_dist.ensure_dist()


@pytest.fixture(scope="module")
def kafka_controller(request, dist_home, tmp_path_factory) -> KafkaController:
    """A running real Kafka controller; the JVM is always killed afterwards."""
    ctl = KafkaController(tmp_path_factory.mktemp("kafka-controller"), node_id=1)
    request.addfinalizer(ctl.close)  # registered before anything can start a JVM
    ctl.start_ready(timeout=90)  # format, start, poll until it is the active controller
    sys.stderr.write(f"\nkafka controller timings: {ctl.timings}\n")
    return ctl


def test_layout_and_api(dist_home):
    assert dist_home.name == f"kafka-{kafka_dist.KAFKA_VERSION}"
    version = kafka_dist.KAFKA_VERSION
    assert version == DEFAULT_RELEASE == "4.4.0"
    for artifact in ("kafka-clients", "kafka-raft", "kafka-metadata", "kafka-server-common", "kafka_2.13"):
        jar = kafka_dist.upstream_jar(artifact)
        assert jar == dist_home / "libs" / f"{artifact}-{version}.jar" and jar.is_file()
    assert kafka_dist.upstream_jar("kafka").name == f"kafka_2.13-{version}.jar"
    assert kafka_dist.upstream_jar("log4j-core").name == f"log4j-core-{recipe.LOG4J2_VERSION}.jar"
    with pytest.raises(FileNotFoundError):
        kafka_dist.upstream_jar("no-such-artifact")

    cp = kafka_dist.classpath().split(os.pathsep)
    assert str(kafka_dist.upstream_jar("kafka-clients")) in cp
    assert all(p.endswith(".jar") for p in cp)
    # exactly one slf4j binding and one slf4j-api, as in the release
    assert [Path(p).name for p in cp if "slf4j" in Path(p).name] == [
        f"log4j-slf4j-impl-{recipe.LOG4J2_VERSION}.jar",
        f"slf4j-api-{recipe.SLF4J_VERSION}.jar",
    ]

    for name in ["kafka-run-class", *recipe.TOOLS]:
        script = kafka_dist.bin_path(name)
        assert script.stat().st_mode & stat.S_IXUSR, name
    for name, (cls, jar) in recipe.TOOLS.items():
        with zipfile.ZipFile(dist_home / "libs" / jar) as zf:
            zf.getinfo(cls.replace(".", "/") + ".class")  # KeyError if absent
    assert (dist_home / "config" / "log4j2.yaml").is_file()
    assert (dist_home / "config" / "tools-log4j2.yaml").is_file()


def test_release_table():
    """Every release names its own pins; moved classes are per release; one default."""
    assert kafka_dist.DEFAULT_RELEASE == kafka_dist.KAFKA_VERSION in kafka_dist.RELEASES
    assert set(kafka_dist.MATRIX) <= set(kafka_dist.RELEASES)
    assert recipe.for_release().fingerprint() == recipe.fingerprint()
    prints = {v: recipe.for_release(v).fingerprint() for v in kafka_dist.RELEASES}
    assert len(set(prints.values())) == len(prints)
    assert recipe.for_release("4.3.1").tools["kafka-configs"] == ("kafka.admin.ConfigCommand", "kafka_2.13-4.3.1.jar")
    assert recipe.for_release("4.4.0").tools["kafka-configs"] == (
        "org.apache.kafka.tools.ConfigCommand", "kafka-tools-4.4.0.jar")
    assert "<version>4.1.2</version>" in recipe.for_release("4.1.2").pom_xml()
    with pytest.raises(KeyError, match="not in tools/kafka_dist/releases.py"):
        recipe.for_release("3.9.1")


@pytest.mark.parametrize("version", kafka_dist.MATRIX)
def test_matrix_release_prepared(version):
    """Each matrix release sits in its own home, next to the others: its own jars only,
    each wrapper's main class present in that release's jars. (Its class-data-sharing
    archive is made on the release's first JVM, not here: most releases start none in
    ``make test``, and an archive costs a JVM run of about 40 s of CPU.)"""
    need_jdk()
    home = kafka_dist.ensure_dist(version, archive=False)
    r = recipe.for_release(version)
    assert home == kafka_dist.home_dir(version) and home.name == f"kafka-{version}"
    libs = home / "libs"
    assert all((libs / jar).is_file() for jar in r.required_jars)
    assert [p.name for p in libs.glob("kafka-clients-*.jar")] == [f"kafka-clients-{version}.jar"]
    assert kafka_dist.upstream_jar("kafka-raft", version) == libs / f"kafka-raft-{version}.jar"
    for name, (cls, jar) in r.tools.items():
        with zipfile.ZipFile(libs / jar) as zf:
            zf.getinfo(cls.replace(".", "/") + ".class")  # KeyError if absent
        assert cls in (home / "bin" / name).read_text()
    assert f"Apache Kafka {version} " in (home / "bin" / "kafka-run-class").read_text()


def test_cli_prints_home_last_and_is_idempotent(dist_home):
    out = subprocess.run(
        [sys.executable, "-m", "tools.kafka_dist"], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == str(dist_home)
    assert "preparing" not in out.stderr  # already prepared: nothing redone


def test_half_done_cache_is_redone(tmp_path, monkeypatch, dist_home):
    """A home without the marker (interrupted run) is rebuilt, offline from ~/.m2."""
    monkeypatch.setenv("KRAFT_CACHE", str(tmp_path))
    half = tmp_path / f"kafka-{kafka_dist.KAFKA_VERSION}"
    (half / "libs").mkdir(parents=True)
    (half / "libs" / "garbage.jar").write_bytes(b"not a jar")
    home = kafka_dist.ensure_dist(archive=False)  # the archive is test_the_suites_jvms_...'s
    assert home == half
    assert not (home / "libs" / "garbage.jar").exists()
    assert (home / ".prepared.json").is_file()
    assert kafka_dist.upstream_jar("kafka-clients").is_file()


def test_real_controller_describe_status(kafka_controller):
    ctl = kafka_controller
    out = ctl.run_tool("kafka-metadata-quorum", "--bootstrap-controller", ctl.bootstrap, "describe", "--status")
    fields = dict(re.findall(r"^(\w+):\s+(.*)$", out.stdout, re.M))
    assert re.search(rf"^LeaderId:\s+{ctl.node_id}$", out.stdout, re.M), out.stdout
    assert fields["ClusterId"] == ctl.cluster_id
    assert f'"id": {ctl.node_id}' in fields["CurrentVoters"]
    assert f"CONTROLLER://{ctl.bootstrap}" in fields["CurrentVoters"]
    assert int(fields["HighWatermark"]) > 0
    # our own probe agrees with the Java admin client
    quorum = ctl.describe_quorum()
    assert (quorum.error_code, quorum.leader_id) == (0, ctl.node_id)
    assert quorum.leader_epoch == int(fields["LeaderEpoch"])


def test_container_backend():
    from tools.kafka_dist import containers

    ok, reason = containers.backend_status()
    if not ok:
        pytest.skip(reason)
    try:
        ctl = containers.start_kafka_controller()
    except containers.ContainerBackendUnavailable as exc:
        pytest.skip(f"{exc}; {containers.LOCAL_BACKEND_HINT}")
    with ctl:
        env = {"KAFKA_HEAP_OPTS": "-Xmx256m"}
        out = subprocess.run(
            [str(kafka_dist.bin_path("kafka-metadata-quorum")), "--bootstrap-controller", ctl.bootstrap,
             "describe", "--status"],
            env={**os.environ, **env}, capture_output=True, text=True, timeout=120,
        )
        assert re.search(rf"^LeaderId:\s+{ctl.node_id}$", out.stdout, re.M), out.stdout + out.stderr


def _loaded_from_archive(home: Path, cds: str) -> list[str]:
    """The classes (Kafka's, Scala's, its libraries') a ``kafka-storage random-uuid`` JVM of ``home`` mapped
    from its archive."""
    env = controller_tool_env({"KAFKA_CDS": cds, "KAFKA_OPTS": "-Xlog:class+load=info:stdout"})
    out = subprocess.run([str(home / "bin" / "kafka-storage"), "random-uuid"], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    return [line for line in out.splitlines() if "shared objects file (top)" in line]


def test_the_suites_jvms_map_kafkas_classes_from_the_release_archive(dist_home):
    from tools.kafka_dist import cds
    archive = cds.ensure_archive(dist_home)
    assert archive is not None and archive.stat().st_size > 1_000_000, (dist_home / "cds").iterdir()
    assert cds.is_current(dist_home)
    shared = _loaded_from_archive(dist_home, "1")
    assert len(shared) > 100, "the classes were not mapped from the archive"
    assert not _loaded_from_archive(dist_home, "0"), "KAFKA_CDS=0 must go without the archive"


def test_an_archive_the_jvm_cannot_use_is_passed_over_silently(tmp_path):
    need_jdk()
    bad = tmp_path / "stale.jsa"
    bad.write_bytes(b"not an archive")
    java = kafka_dist.java_executable()
    proc = subprocess.run([str(java), f"-XX:SharedArchiveFile={bad}", "-Xshare:auto", "-Xlog:cds=off",
                           "-Xlog:cds+dynamic=off", "-version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "cds" not in (proc.stdout + proc.stderr).lower() and "archive" not in (proc.stdout + proc.stderr).lower()
