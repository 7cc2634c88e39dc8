"""Moving a live cluster off our quorum (issue 39, "out": no lock-in): three controllers
of ours serve three Apache Kafka brokers under load, and three Kafka controllers take
over by the documented procedure (``tests/support/quorum_move.py``): Kafka's controllers
start as observers of ours, the brokers are restarted one at a time with Kafka's
controllers in ``controller.quorum.bootstrap.servers``, ``kraft-metadata-quorum reassign
--voters 7,8,9`` moves the voters (our leader last) and waits for every broker to fetch
from Kafka's new leader, and ours are stopped. The same checks as
``test_kafka_brokers_move_in.py``."""
from __future__ import annotations

import pytest

from tests.support.jdk import need_jdk
from tests.support.quorum_move import run_move

pytestmark = [pytest.mark.java, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


@pytest.mark.timeout(1200)
def test_a_live_cluster_moves_from_ours_back_to_kafkas_controllers(tmp_path):
    run_move(tmp_path, "ours", "kafka", (7, 8, 9))
