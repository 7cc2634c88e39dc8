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

from tests.interop.test_kafka_brokers_mixed_quorum import image_of
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import wait_for
from tests.support.quorum_move import CLUSTER, Controllers, kafka_tools_move, run_move
from tools.kafka_dist.broker import KafkaBroker
from tools.metadata_quorum.brokers import fetching_observers
from tools.metadata_quorum.client import AdminClient

pytestmark = [pytest.mark.java, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


@pytest.mark.timeout(1200)
def test_kafka_moves_a_live_cluster_to_new_kafka_controllers_with_its_own_tools(tmp_path):
    run_move(tmp_path, "kafka", "kafka", (7, 8, 9), use_kafka_tools=True)


@pytest.mark.timeout(900)
def test_kafkas_own_move_strands_a_broker_that_knows_only_the_old_controllers(tmp_path):
    """Why the procedure restarts the brokers first (docs/operations/migrate.md, "How a broker
    finds the leader"): with Kafka's own tools and no restart, a broker whose
    ``controller.quorum.bootstrap.servers`` names only the old controllers is lost when
    the old leader leaves: it hears "new epoch, no leader" from them (the removed leader
    resigns and is told of no election), stays unattached and is fenced, while the old
    controllers still run. A broker that also names the new controllers follows the new
    leader; the lost one, restarted with the new list, is unfenced again."""
    old = Controllers(tmp_path, "kafka", (1, 2, 3), CLUSTER)
    new, brokers = None, []
    try:
        old.start()
        old.nodes[0].wait_active(120)
        new = Controllers(tmp_path, "kafka", (7, 8, 9), CLUSTER, observe=old.bootstrap)
        brokers = [KafkaBroker(tmp_path / f"broker{n}", n, CLUSTER, servers, replication=2)
                   for n, servers in ((100, old.bootstrap), (101, old.bootstrap + "," + new.bootstrap))]
        for b in brokers:
            b.start()
        new.start()
        with AdminClient(old.bootstrap, controllers=True) as admin:
            wait_for(lambda: {7, 8, 9, 100, 101} <= fetching_observers(admin.describe_quorum()), 180,
                     "the new controllers and the brokers fetching from the old leader", interval=0.5)
            leader = admin.describe_quorum().leader_id
        reader = new.reader
        wait_for(lambda: unfenced(reader) == [100, 101], 120, "both brokers unfenced")
        kafka_tools_move(old, new, leader)

        with AdminClient(new.bootstrap, controllers=True) as admin:
            wait_for(lambda: 101 in fetching_observers(admin.describe_quorum()), 30,
                     "broker 101 (old and new controllers listed) fetching from the new leader", interval=0.2)
            wait_for(lambda: unfenced(reader) == [101], 60, "broker 100 fenced", interval=0.5)
            assert all(c.running for c in old.nodes), "the old controllers still run"
            assert 100 not in fetching_observers(admin.describe_quorum())
        # It sits in the epoch the resigned old leader moved to, with no leader (the new
        # leader's epoch may be that one or later: it never hears of it).
        lost = [line for line in brokers[0].log_text().splitlines() if "Completed transition to" in line][-1]
        assert "to UnattachedState(epoch=" in lost and "leaderId=OptionalInt.empty" in lost, lost

        old.stop()
        brokers[0].stop(graceful=False)
        brokers[0].controllers = new.bootstrap
        brokers[0].start()
        wait_for(lambda: unfenced(reader) == [100, 101], 120, "broker 100 restarted with the new list, unfenced")
    finally:
        for b in brokers:
            b.close()
        for side in (old, new):
            if side is not None:
                side.close()


def unfenced(node) -> list[int]:
    return sorted(b.broker_id for b in image_of(node).brokers if not b.fenced)
