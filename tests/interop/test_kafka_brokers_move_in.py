"""Moving a live cluster onto our quorum (issue 39, "in"): three Apache Kafka controllers
serve three Kafka brokers while Kafka's VerifiableProducer (acks=all, idempotent) and
VerifiableConsumer run on a topic of 3 partitions, RF 3, ``min.insync.replicas=2``, and
three nodes of ours take over by the procedure of docs/operations/migrate.md, run with
the page's own commands (``tests/support/quorum_move.py``):

1. (a static quorum only) ``reassign`` refuses, naming the upgrade; Kafka's
   ``kafka-features upgrade --feature kraft.version=1`` is run as the page writes it;
2. three nodes of ours, formatted by the page's ``kraft-storage format``, start as
   observers of Kafka's quorum and catch up (the page's ``describe --replication``);
3. a rolling restart gives each broker ``controller.quorum.bootstrap.servers`` naming our
   nodes (and drops ``controller.quorum.voters``), each checked by the page's
   ``kafka-topics --describe --under-replicated-partitions``;
4. the page's ``kraft-metadata-quorum reassign --voters 4,5,6 --broker-bootstrap-server ...``
   checks the brokers' lists, moves the voters (Kafka's leader last) and waits until
   every broker fetches from our new leader;
5. Kafka's controllers are stopped; the brokers stay served past their session timeout,
   and a topic is created through them.

Checked: every acknowledged message consumed (Kafka's replication-test validation), no
partition ever without a leader, no broker fenced except by its own restart in step 3;
the longest gap between two acknowledgements is printed for each part."""
from __future__ import annotations

import pytest

from tests.support.jdk import need_jdk
from tests.support.quorum_move import run_move

pytestmark = [pytest.mark.java, pytest.mark.slow]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


@pytest.mark.timeout(1200)
def test_a_live_cluster_moves_from_kafkas_controllers_onto_ours(tmp_path):
    run_move(tmp_path, "kafka", "ours", (4, 5, 6))


@pytest.mark.timeout(1200)
def test_a_live_cluster_moves_from_kafkas_static_quorum_onto_ours(tmp_path):
    """Kafka's controllers formatted with ``controller.quorum.voters`` (kraft.version 0),
    and brokers that name them the same way: upgraded to kraft.version 1 by Kafka's own
    tool while our observers follow and the producer runs, then the same move."""
    gaps = run_move(tmp_path, "kafka", "ours", (4, 5, 6), static=True)
    assert "kraft.version upgrade" in gaps


@pytest.mark.timeout(1200)
def test_our_observers_follow_kafkas_static_quorum_through_its_kraft_version_upgrade(tmp_path):
    """Our nodes start as observers of the static quorum (kraft.version 0) before the
    upgrade: Kafka's upgrade runs with them registered and fetching (its feature check
    covers every registered controller), they keep following on kraft.version 1, and the
    move goes on as above."""
    gaps = run_move(tmp_path, "kafka", "ours", (4, 5, 6), static=True, observe_upgrade=True)
    assert "kraft.version upgrade" in gaps
