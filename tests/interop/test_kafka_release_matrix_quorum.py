"""The version matrix, cell 2 (issue 38), in ``make test-slow``: for every release of
``tools/kafka_dist/releases.py`` MATRIX, a controller of ours joins that release's
controller quorum, is made a voter with that release's tool, leads it, and that release's
controller replays what ours writes:

1. that release's ``kafka-storage`` formats its controller (``--standalone``, at the
   release's newest metadata.version) and our node (``--no-initial-controllers``); ours
   fetches the Kafka leader's log as an observer, and one broker of the release registers;
2. its ``kafka-metadata-quorum add-controller`` makes ours a voter;
3. its ``remove-controller`` removes the Kafka leader itself: Kafka's controller resigns
   and ours, the only voter left, is elected; the broker follows us and
   ``kafka-topics --create`` through it is written by our controller;
4. Kafka's controller, an observer now, keeps fetching from us and replays our records
   (its log says so); the release's ``add-controller``, sent to our leader, makes it a
   voter again; a second topic is committed with its acknowledgement and replayed, and
   the release's ``describe --replication`` shows it following us, with no lag.

Every 4.x release has KIP-853 (kraft.version 1, ``--standalone``, ``add-controller`` and
``remove-controller`` came in 3.9), so every cell goes the whole way. One Kafka
controller, one broker, our node and about eight tool JVMs per release."""
from __future__ import annotations

import functools

import pytest

from kraft_server.log.meta_properties import read_meta_properties
from tests.interop.test_kafka_brokers_serve_topic import image_partitions, unfenced_brokers
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import BROKER_ID_BASE, start_brokers
from tests.support.kraft_nodes import OurNode, parse_status
from tests.support.kraft_nodes import wait_for as kraft_wait_for
from tests.support.membership_cluster import quorum_partition, voters_of
from tools.kafka_dist import MATRIX
from tools.kafka_dist.controller import KafkaController, free_port, random_cluster_id, run_tool
from wire.uuids import uuid_to_str

pytestmark = [pytest.mark.java, pytest.mark.slow]
BROKER = BROKER_ID_BASE
KAFKA, OURS = 1, 2

wait_for = functools.partial(kraft_wait_for, interval=0.3)

# Cells that fail for a feature our controllers do not have yet (strict: a cell that
# starts passing fails the run until its mark is removed).
MISSING: dict[str, str] = {}


def _cells() -> list:
    return [pytest.param(v, id=v, marks=[pytest.mark.xfail(strict=True, reason=MISSING[v])] if v in MISSING else [])
            for v in MATRIX]


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


def _directory(data) -> str:
    return uuid_to_str(read_meta_properties(data).directory_id)


def _replayed(ctl: KafkaController, topic: str) -> bool:
    """Kafka's controller logged replaying ``topic``'s TopicRecord (ReplicationControlManager)."""
    return f"Replayed TopicRecord for topic {topic} with topic ID" in ctl.log_text()


class _Empty:
    """No DescribeQuorum answer (the node asked is not the leader, or not up)."""
    current_voters = observers = ()
    high_watermark = leader_id = -1


def _part(node):
    """DescribeQuorum on ``node``: its partition if it leads, else an empty one."""
    return quorum_partition(node) or _Empty()


def _caught_up(part, replica: int, role: str) -> bool:
    """``replica`` is a ``role`` ("voter" or "observer") with its log at the high watermark."""
    among = part.current_voters if role == "voter" else part.observers
    return any(r.replica_id == replica and r.log_end_offset >= part.high_watermark > 0 for r in among)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("version", _cells())
def test_our_node_joins_leads_and_is_followed_by_a_release_quorum(tmp_path, version):
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=OURS)
    kport = free_port()
    # Kafka's controller also knows our address: once removed from the voters it is an
    # observer, which finds the leader through its bootstrap servers.
    ctl = KafkaController(tmp_path / "kafka", node_id=KAFKA, port=kport, cluster_id=random_cluster_id(),
                          bootstrap_servers=f"127.0.0.1:{kport},{node.bootstrap}", version=version)
    brokers = []

    def tool(*args: str, timeout: float = 120):
        return run_tool("kafka-metadata-quorum", *args, version=version, check=False, timeout=timeout)

    try:
        ctl.start_ready(timeout=120)
        node.format_as_observer_of(ctl.bootstrap, ctl.cluster_id, version=version)
        ours_dir, kafka_dir = _directory(node.data), _directory(ctl.data_dir)
        node.start()

        def observing():
            assert node.proc.poll() is None, node.log_tail()
            return _caught_up(_part(ctl), OURS, "observer")
        wait_for(observing, 90, f"our observer caught up with Kafka {version}'s leader")
        brokers = start_brokers(tmp_path, 1, ctl.cluster_id, f"{ctl.bootstrap},{node.bootstrap}", version=version)
        bs = brokers[0].bootstrap
        wait_for(lambda: unfenced_brokers(brokers[0].port) == [BROKER], 120, f"Kafka {version}'s broker unfenced")

        # 2. the release's add-controller makes ours a voter
        added = tool("--bootstrap-controller", ctl.bootstrap, "--command-config", str(node.kafka_config),
                     "add-controller")
        assert added.returncode == 0, (added.stdout, added.stderr, node.log_tail())
        assert f"Added controller {OURS} with directory id {ours_dir}" in added.stdout, added.stdout
        wait_for(lambda: voters_of(_part(ctl)) == {KAFKA: kafka_dir, OURS: ours_dir}, 60,
                 "both of us voters")

        # 3. the release's remove-controller removes Kafka's leader: ours is elected
        removed = tool("--bootstrap-controller", ctl.bootstrap, "remove-controller",
                       "--controller-id", str(KAFKA), "--controller-directory-id", kafka_dir)
        assert removed.returncode == 0, (removed.stdout, removed.stderr, ctl.log_tail(30), node.log_tail(30))
        node.wait_leader(timeout=90)
        part = quorum_partition(node)
        assert part.leader_id == OURS and voters_of(part) == {OURS: ours_dir}, part

        created = run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "by-ours",
                           "--partitions", "2", "--replication-factor", "1", version=version, timeout=120)
        assert "Created topic by-ours." in created.stdout
        assert sorted(image_partitions(node, "by-ours")) == [0, 1]  # written by our controller
        assert quorum_partition(node).leader_id == OURS

        # 4. Kafka's controller follows us as an observer and replays our records
        wait_for(lambda: _replayed(ctl, "by-ours"), 60, f"Kafka {version}'s controller replaying our topic")
        wait_for(lambda: _caught_up(_part(node), KAFKA, "observer"), 60,
                 "Kafka's controller fetching from us as an observer")

        # ... and the release's add-controller, answered by our leader, makes it a voter again
        readded = tool("--bootstrap-controller", node.bootstrap, "--command-config", str(ctl.config_path),
                       "add-controller")
        assert readded.returncode == 0, (readded.stdout, readded.stderr, node.log_tail(30))
        assert f"Added controller {KAFKA} with directory id {kafka_dir}" in readded.stdout, readded.stdout
        wait_for(lambda: voters_of(_part(node)) == {KAFKA: kafka_dir, OURS: ours_dir}, 60,
                 "Kafka's controller a voter under our leader")
        run_tool("kafka-topics", "--bootstrap-server", bs, "--create", "--topic", "by-ours-2",
                 "--partitions", "1", "--replication-factor", "1", version=version, timeout=120)
        wait_for(lambda: _replayed(ctl, "by-ours-2"), 60, f"Kafka {version}'s voter replaying our second topic")
        wait_for(lambda: _caught_up(_part(node), KAFKA, "voter"), 60,
                 "Kafka's voter caught up")

        status = parse_status(tool("--bootstrap-controller", node.bootstrap, "describe", "--status").stdout)
        assert status["LeaderId"] == str(OURS) and status["ClusterId"] == ctl.cluster_id, status
        out = tool("--bootstrap-controller", node.bootstrap, "describe", "--replication")
        assert out.returncode == 0, out.stderr
        rows = {r[0]: r for r in (line.split() for line in out.stdout.strip().splitlines()[1:])}
        assert rows[str(OURS)][6] == "Leader" and rows[str(KAFKA)][6] == "Follower", out.stdout
        assert unfenced_brokers(brokers[0].port) == [BROKER]
        assert node.proc.poll() is None and ctl.running
    finally:
        for b in brokers:
            b.close()
        ctl.close()
        node.kill()

