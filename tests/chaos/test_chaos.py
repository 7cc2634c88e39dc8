"""The chaos harness over real processes (``tests/chaos``): a short run of a 3-voter and
of a 5-voter quorum of ours and of a mixed one (our node and two Apache Kafka 4.3.1
controllers) in the default suite, longer ones under ``slow``; ``make chaos``
runs the long CLI run. Each run draws a fresh seed (printed in the report;
``CHAOS_SEED=N`` replays one) and fails on any record lost or any check broken."""
from __future__ import annotations

import os
import random

import pytest

from tests.chaos.run import run
from tests.support.jdk import need_jdk


def chaos(tmp_path, nodes: int, cycles: int, kafka: int = 0):
    seed = int(os.environ.get("CHAOS_SEED") or random.randrange(2**31))
    report = run(tmp_path, seed, nodes, cycles, on_cycle=print, kafka=kafka)
    print(report.format())
    assert report.ok and report.cycles == cycles, report.format()
    assert report.acked > 0 and not report.lost
    assert sum(report.faults.values()) == 2 * cycles
    return report


def test_chaos_short_three_voters(tmp_path):
    chaos(tmp_path, 3, 2)


def test_chaos_short_five_voters(tmp_path):
    chaos(tmp_path, 5, 2)


@pytest.mark.slow  # a variant: three and five voters run in make test
@pytest.mark.java
def test_chaos_short_mixed(tmp_path):
    """Node 1 ours, nodes 2 and 3 Apache Kafka 4.3.1 controllers (JVMs)."""
    need_jdk()
    chaos(tmp_path, 3, 2, kafka=2)


@pytest.mark.slow
@pytest.mark.parametrize("nodes", [3, 5])
def test_chaos_long(tmp_path, nodes):
    chaos(tmp_path, nodes, 10)


@pytest.mark.slow
@pytest.mark.java
def test_chaos_long_mixed(tmp_path):
    need_jdk()
    chaos(tmp_path, 3, 10, kafka=2)
