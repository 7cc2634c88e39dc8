"""`make test` fails when a real-peer test skips for something the Makefile installs
(KRAFT_STRICT_SKIPS, tests/conftest.py); other skips stay skips."""
from __future__ import annotations

from types import SimpleNamespace

from tests.conftest import fixable_skips


def _skipped(nodeid: str, reason: str):
    return SimpleNamespace(nodeid=nodeid, longrepr=("file.py", 3, f"Skipped: {reason}"))


def test_reasons_the_makefile_could_fix_are_named():
    reports = [
        _skipped("a", "kcat is not installed (apt-get install -y kcat)"),
        _skipped("b", "no JDK: java is not on PATH and JAVA_HOME is unset"),
        _skipped("c", "pyspark (the `spark` extra) is not installed"),
        _skipped("d", "kafka-clients 4.3.1 jar not found (tools.kafka_dist or ~/.m2)"),
        _skipped("e", "kio has no DescribeQuorum v3"),
        _skipped("f", "Docker is not available; the same scenario runs against local JVMs"),
        _skipped("g", "the compiled codecs are not in use here: pure Python"),
    ]
    assert [line.split(":")[0] for line in fixable_skips(reports)] == ["a", "b", "c", "d"]
