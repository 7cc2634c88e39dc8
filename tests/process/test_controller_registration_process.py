"""Controller registrations in a quorum of our own processes (three voters on loopback):
the followers register with the leader over the wire (ControllerRegistration, key 70),
DescribeCluster on every node lists all three from the committed registrations, a
follower restarted after the leader is killed registers its new incarnation with the
new leader, and the RPC itself answers as Kafka's controller does (NOT_CONTROLLER on a
follower, NONE after the commit on the leader).
"""
from __future__ import annotations

import uuid

from kraft_server.controller.image import records as rec
from tests.support.kraft_nodes import _roundtrip, agreed_leader, make_quorum, read_batches, wait_for
from wire.messages import ControllerRegistrationRequest, DescribeClusterRequest, RegisterControllerRecord
from wire.messages.controller_registration_request import Listener
from wire.records import batch_records, walk


def describe_controllers(port: int) -> tuple[int, dict[int, int]]:
    """(ControllerId, {id: port}) from DescribeCluster v2, EndpointType 2."""
    r = _roundtrip(port, DescribeClusterRequest(endpoint_type=2), 2)
    assert r.error_code == 0, r
    return r.controller_id, {b.broker_id: b.port for b in r.brokers}


def registrations_in_log(node) -> list[RegisterControllerRecord]:
    out = []
    for raw in read_batches(node.data).values():
        for info in walk(raw):
            if info.is_control:
                continue
            for _, value in batch_records(raw, info):
                api_key, version, payload = rec.unframe(value)
                if api_key == rec.REGISTER_CONTROLLER_RECORD:
                    out.append(RegisterControllerRecord.decode(bytes(payload), version))
    return out


def test_followers_register_and_describe_cluster_lists_them(tmp_path):
    nodes = make_quorum(tmp_path, "dynamic", "R" * 22)
    try:
        for n in nodes:
            n.start()
        leader, _ = agreed_leader(nodes)
        ports = {n.node_id: n.port for n in nodes}

        def everyone_lists_everyone():
            return all(describe_controllers(n.port) == (leader.node_id, ports) for n in nodes)

        wait_for(everyone_lists_everyone, 30, "DescribeCluster listing the three registrations")
        regs = registrations_in_log(leader)
        assert sorted({r.controller_id for r in regs}) == [1, 2, 3]

        # The RPC by hand: a follower is not the active controller; the leader writes
        # the record and answers once it is committed.
        follower = next(n for n in nodes if n is not leader)
        body = ControllerRegistrationRequest(
            controller_id=9, incarnation_id=uuid.uuid4(),
            listeners=[Listener(name="CONTROLLER", host="127.0.0.1", port=1, security_protocol=0)])
        refused = _roundtrip(follower.port, body, 0)
        assert (refused.error_code, refused.error_message) == (
            41, "This is not the correct controller for this cluster.")
        ok = _roundtrip(leader.port, body, 0)
        assert (ok.error_code, ok.error_message) == (0, "")
        assert any(r.controller_id == 9 for r in registrations_in_log(leader))
        wait_for(lambda: describe_controllers(follower.port)[1].get(9) == 1, 10, "node 9 on the follower")

        # Kill the leader; restart a follower: a new incarnation registers with the new leader.
        leader.kill()
        new_leader, _ = agreed_leader(nodes, exclude=(leader.node_id,))
        restarted = next(n for n in nodes if n is not leader and n is not new_leader)
        before = {r.incarnation_id for r in registrations_in_log(new_leader) if r.controller_id == restarted.node_id}
        restarted.stop()
        restarted.start()

        def new_incarnation():
            now = {r.incarnation_id for r in registrations_in_log(new_leader)
                   if r.controller_id == restarted.node_id}
            return len(now - before) == 1

        wait_for(new_incarnation, 30, "the restarted node's new registration")
        wait_for(lambda: describe_controllers(restarted.port)[0] == new_leader.node_id, 30,
                 "the restarted node naming the new leader")
    finally:
        for n in nodes:
            n.kill()
