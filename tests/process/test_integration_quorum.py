"""Three of our nodes on loopback (no JVM): election, replication, and failover
after the leader is stopped with SIGTERM (it resigns with EndQuorumEpoch).

Formatted with ``tools.storage format --initial-controllers``; every process is
killed in a finalizer; waits poll with deadlines.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import time

import pytest

from wire.uuids import random_directory_id, uuid_to_str
from tests.support.kraft_nodes import REPO, OurNode
from tools.kafka_dist.controller import random_cluster_id
from tools.kafka_dist.probe import describe_cluster, describe_quorum


def _need_pieces():
    for mod in ("kraft_server.raft.node", "tools.storage"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not there yet")


@pytest.fixture
def three_nodes(request, tmp_path):
    _need_pieces()
    nodes = []
    for i in (1, 2, 3):
        (tmp_path / f"n{i}").mkdir()
        node = OurNode(tmp_path / f"n{i}", node_id=i)
        request.addfinalizer(node.kill)
        nodes.append(node)
    bootstrap = ",".join(n.bootstrap for n in nodes)
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.port}:{uuid_to_str(random_directory_id())}" for n in nodes)
    cluster_id = random_cluster_id()
    for n in nodes:
        text = n.config.read_text().replace(f"controller.quorum.bootstrap.servers={n.bootstrap}",
                                            f"controller.quorum.bootstrap.servers={bootstrap}")
        n.config.write_text(text)
        subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id,
                        "--initial-controllers", voters, "--config", str(n.config)],
                       check=True, cwd=REPO, timeout=60, stdout=subprocess.DEVNULL)
    for n in nodes:
        n.start()
    return nodes


def leader_of(nodes, timeout=30.0, exclude=()):
    """Poll until the live nodes agree on a leader that answers DescribeQuorum."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        live = [n for n in nodes if n.node_id not in exclude]
        try:
            seen = {describe_cluster("127.0.0.1", n.port, timeout=1.0).controller_id for n in live}
            if len(seen) == 1 and (leader := seen.pop()) >= 0 and leader not in exclude:
                node = next(n for n in nodes if n.node_id == leader)
                q = describe_quorum("127.0.0.1", node.port, timeout=1.0)
                if q.error_code == 0 and q.high_watermark > 0:
                    return node, q
            last = seen
        except (OSError, ValueError) as exc:
            last = exc
        time.sleep(0.05)  # poll interval
    tails = "\n".join(f"--- node {n.node_id}\n{n.log_tail(15)}" for n in nodes)
    raise AssertionError(f"no agreed leader after {timeout}s (last: {last!r})\n{tails}")


def test_three_nodes_elect_one_leader(three_nodes):
    leader, quorum = leader_of(three_nodes)
    assert quorum.leader_id == leader.node_id and quorum.leader_epoch >= 1


def test_a_new_leader_after_the_leader_resigns(three_nodes):
    leader, quorum = leader_of(three_nodes)
    t0 = time.monotonic()
    assert leader.stop() == 0, leader.log_tail()  # SIGTERM: EndQuorumEpoch to the others
    new_leader, q = leader_of(three_nodes, timeout=20.0, exclude={leader.node_id})
    assert q.leader_epoch > quorum.leader_epoch
    sys.stderr.write(f"\nfailover after SIGTERM: {time.monotonic() - t0:.2f}s\n")
    assert "EndQuorumEpochRequest" in leader.log_path.read_text()  # logged at DEBUG when sent
