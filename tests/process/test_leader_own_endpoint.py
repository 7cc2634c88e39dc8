"""A leader restarted on another controller port updates its own voter entry
(``kraft_server/raft/own_voter.py``; KIP-853: Kafka's leader writes its own listeners at
the start of its epoch). A one-voter quorum of ours (``kraft-storage format
--standalone``) is stopped, given a new controller port and started: it leads alone, and
DescribeQuorum's node endpoints, read from the voter set in its log, move to the new port
once it has reached it with ApiVersions.

Every process is killed in a finalizer; every wait polls with a deadline."""
from __future__ import annotations

import pytest

from tests.support.kraft_nodes import OurNode, our_describe_quorum, set_property, wait_for
from tools.kafka_dist.controller import free_port, random_cluster_id


def _voter_port(node: OurNode) -> int | None:
    resp = our_describe_quorum(node.port)
    part = resp.topics[0].partitions[0] if resp.topics and resp.topics[0].partitions else None
    if resp.error_code or part is None or part.error_code or part.leader_id != node.node_id:
        return None
    ports = [li.port for n in resp.nodes if n.node_id == node.node_id for li in n.listeners
             if li.name == "CONTROLLER"]
    return ports[0] if ports else None


@pytest.fixture
def node(tmp_path):
    n = OurNode(tmp_path, node_id=1)
    yield n
    n.kill()


def test_a_leader_on_a_new_port_writes_it_into_the_voter_set(node):
    node.format_with_ours(random_cluster_id())
    node.start()
    old = node.port
    assert wait_for(lambda: _voter_port(node), 60, "node 1 leading") == old
    node.stop()
    node.port = free_port()
    set_property(node.config, "listeners",
                 f"CONTROLLER://127.0.0.1:{node.port},CLIENT://127.0.0.1:{node.client_port}")
    set_property(node.config, "controller.quorum.bootstrap.servers", f"127.0.0.1:{node.port}")
    node.start()
    wait_for(lambda: _voter_port(node) == node.port, 60, f"the voter set to name port {node.port}, not {old}",
             interval=0.2)
