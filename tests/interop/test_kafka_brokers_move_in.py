"""Moving a live cluster onto our quorum (issue 39, "in"): three Apache Kafka controllers
(a dynamic quorum) serve three Kafka brokers while Kafka's VerifiableProducer (acks=all,
idempotent) and VerifiableConsumer run on a topic of 3 partitions, RF 3,
``min.insync.replicas=2``, and three nodes of ours take over by the documented procedure
(docs/operations.md, "Moving a live cluster onto this quorum"; ``tests/support/quorum_move.py``
runs it):

1. three nodes of ours start as observers of Kafka's quorum and catch up;
2. a rolling restart gives each broker ``controller.quorum.bootstrap.servers`` naming our
   nodes (a broker finds the leader only through that list; Kafka's own move needs the
   same restart);
3. ``kraft-metadata-quorum reassign --voters 4,5,6 --broker-bootstrap-server ...``
   checks the brokers' lists, moves the voters (Kafka's leader last) and waits until
   every broker fetches from our new leader;
4. Kafka's controllers are stopped; the brokers stay served past their session timeout,
   and a topic is created through them.

Checked: every acknowledged message consumed (Kafka's replication-test validation), no
partition ever without a leader, no broker fenced except by its own restart in step 2;
the longest gap between two acknowledgements is printed for the restarts and the move."""
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
