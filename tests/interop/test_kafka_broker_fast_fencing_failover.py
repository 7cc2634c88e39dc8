"""Fast fencing (issue 29) across a controller failover, with three real Apache
Kafka 4.3.1 brokers on three controllers of ours: the active controller is killed;
the new one starts with no evidence (as its sessions start afresh), arms each broker
from the heartbeats it receives itself, and then fences a broker killed with SIGKILL
at once. Its own module: the other module's cluster is not running meanwhile."""
from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from tests.interop.test_kafka_broker_failure import BROKERS, CLUSTER, _cluster, _topic, image_of
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import agreed_leader, wait_for

pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_after_a_controller_failover_the_new_active_one_fences_on_its_own_evidence(tmp_path):
    need_jdk()
    nodes = _cluster(tmp_path, 3)
    brokers = []
    try:
        old, _ = agreed_leader(nodes)
        brokers = start_brokers(tmp_path, 3, CLUSTER, ",".join(n.bootstrap for n in nodes))
        _topic(brokers, old)
        old.kill()
        new, _ = agreed_leader(nodes, exclude=(old.node_id,))

        def armed(b):
            return re.search(rf"probe \(arm\) of broker {b} .*'accepted'", new.log_path.read_text(errors="replace"))
        wait_for(lambda: all(armed(b) for b in BROKERS), 60, "every broker armed by the new controller")
        img = image_of(new)
        assert sorted(b.broker_id for b in img.brokers if not b.fenced) == BROKERS
        leaders = {i: p.leader for i, p in img.topics.by_name["events"].partitions.items()}
        victim_id = Counter(leaders.values()).most_common(1)[0][0]
        killed = time.monotonic()
        next(b for b in brokers if b.node_id == victim_id).stop(graceful=False)  # SIGKILL

        def moved():
            img = image_of(new)
            return img.brokers.get(victim_id).fenced and all(
                p.leader not in (victim_id, -1) for p in img.topics.by_name["events"].partitions.values())
        wait_for(moved, 30, "the victim fenced by the new controller", interval=0.02)
        assert time.monotonic() - killed < 1.0
        assert re.search(rf"fencing broker {victim_id}: its connections closed", new.log_path.read_text())
    finally:
        for b in brokers:
            b.close()
        for n in nodes:
            n.stop()
