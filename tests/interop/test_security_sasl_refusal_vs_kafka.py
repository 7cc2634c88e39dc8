"""A request during SASL authentication, on Kafka's controller and on ours: both listen
SASL_PLAINTEXT with PLAIN. The same bytes go to each: ApiVersions, SaslHandshake v1
PLAIN, then a Metadata v12 request (on a second connection a DescribeCluster v1 request,
on a third an ApiVersions). Kafka's ``SaslServerAuthenticator`` answers that request
with its own ``getErrorResponse`` for ILLEGAL_SASL_STATE and closes the connection; ours must send
the same bytes (correlation ids aside) and close too.

The ApiVersions answers list each server's own APIs, so only their error codes are
compared; the SaslHandshake answers and the refusals are compared whole. A second
ApiVersions before the handshake closes the connection unanswered on both."""
from __future__ import annotations

import pytest

from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, wait_for
from tests.support.secure_client import SecureSession, quorum_partition
from tools.blocking_client import ConnectionClosed
from tools.kafka_dist.controller import KafkaController, random_cluster_id
from wire.headers import decode_response
from wire.messages import ApiVersionsRequest, DescribeClusterRequest, MetadataRequest, SaslHandshakeRequest
from wire.messages.metadata_request import MetadataRequestTopic

pytestmark = pytest.mark.java

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret";')
SASL = {"listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT", "sasl.enabled.mechanisms": "PLAIN",
        "sasl.mechanism.controller.protocol": "PLAIN", "listener.name.controller.plain.sasl.jaas.config": PLAIN_JAAS}
ADMIN = ("PLAIN", "admin", "admin-secret")
HELLO = ApiVersionsRequest(client_software_name="kraft-test", client_software_version="1")
REFUSED = [(MetadataRequest(topics=[MetadataRequestTopic(name="__cluster_metadata")]), 12),
           (DescribeClusterRequest(), 1),
           (HELLO, 3)]  # an ApiVersions after the handshake is refused like any other request


def _exchange(port: int, request, version: int) -> dict:
    """The sequence on one connection: each answer's frame without its correlation id,
    and whether the server closed the connection after the refusal."""
    s = SecureSession(port, None, timeout=10.0)
    try:
        s.send(HELLO, 3)
        versions = decode_response(s.read_frame(), 18, 3)[1]
        s.send(SaslHandshakeRequest(mechanism="PLAIN"), 1)
        handshake = bytes(s.read_frame())[4:]
        s.send(request, version)
        refusal = bytes(s.read_frame())[4:]
        closed = s.closed_within(10)
    finally:
        s.close()
    return {"api_versions_error": versions.error_code, "handshake": handshake, "refusal": refusal,
            "closed": closed}


def _second_api_versions(port: int) -> tuple[bool, bool]:
    """A second ApiVersions before the handshake: (answered, closed)."""
    s = SecureSession(port, None, timeout=10.0)
    try:
        s.send(HELLO, 3)
        s.read_frame()
        s.send(HELLO, 3)
        try:
            s.read_frame()
            answered = True
        except ConnectionClosed:
            answered = False
        return answered, answered or s.closed_within(10)
    finally:
        s.close()


def _answers(port: int) -> list:
    return [_exchange(port, request, version) for request, version in REFUSED] + [_second_api_versions(port)]


def test_a_request_during_sasl_authentication_is_answered_as_by_kafka(tmp_path):
    need_jdk()
    ctl = KafkaController(tmp_path / "kafka", node_id=1, cluster_id=random_cluster_id(), overrides=SASL)
    try:
        ctl.start()
        wait_for(lambda: quorum_partition(ctl.port, None, ADMIN).leader_id == 1, 90, "Kafka's controller over SASL")
        theirs = _answers(ctl.port)
    finally:
        ctl.close()
    (tmp_path / "ours").mkdir()
    ours_sasl = {**SASL, "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT,CLIENT:PLAINTEXT"}
    node = OurNode(tmp_path / "ours", extra=tuple(f"{k}={v}" for k, v in ours_sasl.items()))
    node.format_with_ours(random_cluster_id())
    node.start()
    try:
        wait_for(lambda: quorum_partition(node.port, None, ADMIN).leader_id == 1, 60, "our node over SASL")
        ours = _answers(node.port)
    finally:
        node.stop()
    assert theirs[-1] == ours[-1] == (False, True)  # closed unanswered by both
    metadata, cluster, versions = (decode_response(b"\0\0\0\0" + t["refusal"], r.API_KEY, v)[1]
                         for (r, v), t in zip(REFUSED, theirs))
    assert [(t.name, t.error_code) for t in metadata.topics] == [("__cluster_metadata", 34)]
    assert (cluster.error_code, cluster.error_message) == (
        34, "Unexpected Kafka request of type DESCRIBE_CLUSTER during SASL authentication.")
    assert (versions.error_code, list(versions.api_keys)) == (34, [])
    for (request, version), mine, kafkas in zip(REFUSED, ours, theirs):
        assert kafkas["closed"] and kafkas["api_versions_error"] == 0
        assert mine == kafkas, (type(request).__name__, mine, kafkas)
