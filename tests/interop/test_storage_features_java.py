"""``kraft-storage`` against Apache Kafka 4.4.0's ``kafka-storage`` (``@pytest.mark.java``):
the same argument lists through both tools, for ``format --feature``,
``version-mapping`` and ``feature-dependencies``.

Each case compares the exit code, stdout and stderr (the case's own directory
written as ``DIR``; Kafka's stack-trace ``at`` lines dropped: we print only the
trace's first line) and, for a format that succeeds, the feature levels in the
formatted directory as our reader (``read_bootstrap_checkpoint``) finds them: in
Kafka 4.4's bootstrap snapshot, in our ``bootstrap.checkpoint``. One short JVM per
case (about 2 s), so the list stays short; ``tests/unit/tools/test_storage_features.py``
covers the rest.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from kraft_server.log.bootstrap import read_bootstrap_checkpoint
from tests.support.jdk import need_jdk
from tools.kafka_dist.controller import random_cluster_id, run_tool
from tools.storage.__main__ import main as storage_main

pytestmark = pytest.mark.java

RELEASE = "4.4.0"  # the release whose kafka-storage our tool mirrors
CLUSTER = random_cluster_id()

FORMAT_CASES = {
    "lower-and-raise": ["--standalone", "-f", "group.version=0", "-f", "share.version=1"],
    "mv-as-feature": ["--standalone", "-f", "metadata.version=25"],
    "above-release-default": ["--standalone", "-r", "4.0", "-f", "share.version=1", "-f", "streams.version=1"],
    "dependency": ["--standalone", "-r", "3.9", "-f", "eligible.leader.replicas.version=1"],
    "mv-twice": ["--standalone", "-r", "4.0", "-f", "metadata.version=25"],
    "unknown-feature": ["--standalone", "-f", "foo.version=1"],
    "malformed": ["--standalone", "-f", "group.version=x"],
    "unknown-level": ["--standalone", "-f", "share.version=3"],
    "kraft-0-dynamic": ["-N", "-f", "kraft.version=0"],
}
LOOKUP_CASES = {
    "version-mapping": ["version-mapping", "-r", "4.0"],
    "feature-dependencies": ["feature-dependencies", "-f", "eligible.leader.replicas.version=1",
                             "-f", "metadata.version=33", "-f", "group.version=1", "-f", "foo=1"],
}


@pytest.fixture(scope="module", autouse=True)
def _jdk():
    need_jdk()
    from tools.kafka_dist import ensure_dist
    ensure_dist(RELEASE)


def _config(root: Path) -> Path:
    meta = root / "meta"
    root.mkdir()
    cfg = root / "server.properties"
    cfg.write_text("\n".join([
        "process.roles=controller", "node.id=1", "controller.listener.names=CONTROLLER",
        "listeners=CONTROLLER://127.0.0.1:19093", "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
        "controller.quorum.bootstrap.servers=127.0.0.1:19093", f"log.dirs={meta}", f"metadata.log.dir={meta}",
    ]) + "\n")
    return cfg


def _normal(text: str, root: Path) -> str:
    return "".join(line for line in text.replace(str(root), "DIR").splitlines(keepends=True)
                   if not line.startswith("\tat "))


def _both(tmp_path: Path, capsys, args: list[str], with_config: bool):
    """(code, stdout, stderr, levels) from Kafka's tool, then from ours."""
    results = []
    for who in ("kafka", "ours"):
        root = tmp_path / who
        full = list(args)
        if with_config:
            full = ["format", "-t", CLUSTER, "-c", str(_config(root)), *args]
        if who == "kafka":
            proc = run_tool("kafka-storage", *full, version=RELEASE, check=False, timeout=120)
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        else:
            capsys.readouterr()
            code = storage_main(full)
            captured = capsys.readouterr()
            out, err = captured.out, captured.err
        levels = read_bootstrap_checkpoint(root / "meta") if with_config and code == 0 else None
        results.append((code, _normal(out, root), _normal(err, root), levels))
    return results



@pytest.mark.parametrize("case", list(FORMAT_CASES))
def test_format_features_as_kafka(tmp_path, capsys, case):
    kafka, ours = _both(tmp_path, capsys, FORMAT_CASES[case], with_config=True)
    assert ours == kafka
    if kafka[0] == 0:  # the comparison of levels was not of two Nones
        assert kafka[3] and kafka[3]["metadata.version"] > 0
    else:
        assert kafka[2]  # a refusal says why


@pytest.mark.parametrize("case", list(LOOKUP_CASES))
def test_lookups_as_kafka(tmp_path, capsys, case):
    kafka, ours = _both(tmp_path, capsys, LOOKUP_CASES[case], with_config=False)
    assert ours == kafka
    assert kafka[1]  # each case prints something on stdout
