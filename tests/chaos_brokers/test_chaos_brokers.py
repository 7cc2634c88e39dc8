"""Brokers under faults (``tests/chaos_brokers``): three controllers of ours, four Apache
Kafka brokers of the default release, two topics under a VerifiableProducer and a
VerifiableConsumer each, faults from a fresh seed (printed in the report; ``CHAOS_SEED=N``
replays one). A run fails on an acknowledged message lost on the clean topic, a loss on
the unclean topic that no unclean election explains, a duplicate, an epoch going back, a
broker writing in an epoch the controller never gave, a partition left offline beside a
live ISR member, or a cluster that does not recover once the faults are healed."""
from __future__ import annotations

import os
import random

import pytest

from tests.chaos_brokers.run import CLEAN, run
from tests.support.jdk import need_jdk

pytestmark = [pytest.mark.java]


def chaos(tmp_path, cycles: int, elr: bool = True, fast_fencing: bool = True):
    need_jdk()
    seed = int(os.environ.get("CHAOS_SEED") or random.randrange(2**31))
    report = run(tmp_path, seed, cycles, elr=elr, fast_fencing=fast_fencing, on_cycle=print)
    print(report.format())
    assert report.ok and report.cycles == cycles, report.format()
    assert report.acked[CLEAN] > 0 and not report.lost[CLEAN]
    return report


# Every configuration, a few cycles each (about 90 s per configuration alone, eight JVMs):
# CI's 90 minutes hold the slow suite with these, not with 20 cycles of each (32 minutes
# in one file). Long runs: ``make chaos-brokers CHAOS_CYCLES=20`` or
# ``CHAOS_SLOW_CYCLES=20 make test-slow``.
SLOW_CYCLES = int(os.environ.get("CHAOS_SLOW_CYCLES", "3"))


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("elr", [True, False], ids=["elr", "no-elr"])
@pytest.mark.parametrize("fast_fencing", [True, False], ids=["fast-fencing", "session-fencing"])
def test_chaos_brokers_each_configuration(tmp_path, elr, fast_fencing):
    chaos(tmp_path, SLOW_CYCLES, elr, fast_fencing)
