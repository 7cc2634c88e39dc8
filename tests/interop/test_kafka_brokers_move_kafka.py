"""Kafka's own move, the yardstick for ours (issue 39): three Apache Kafka controllers
serving three Kafka brokers under load hand over to three new Kafka controllers with
Kafka's own tools, ``kafka-metadata-quorum add-controller`` for each new controller, then
``remove-controller`` for each old one, the leader last, by the same procedure as ours
(``tests/support/quorum_move.py``): the brokers are first restarted one at a time with
the new controllers in ``controller.quorum.bootstrap.servers``, which Kafka needs too (a
broker asks only that list for the leader once its leader leaves). The same checks as
``test_kafka_brokers_move_in.py``, and the same longest gaps printed."""
from __future__ import annotations

import pytest

from tests.support.jdk import need_jdk
from tests.support.quorum_move import run_move

pytestmark = [pytest.mark.java, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


@pytest.mark.timeout(1200)
def test_kafka_moves_a_live_cluster_to_new_kafka_controllers_with_its_own_tools(tmp_path):
    run_move(tmp_path, "kafka", "kafka", (7, 8, 9), use_kafka_tools=True)
