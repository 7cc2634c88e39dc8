"""ApiVersions v0-4 and the v0 fallback, compared with what a real Kafka 4.3.1
controller answered (recorded in tests/data/net/real_controller_4.3.1.json by
starting ``tools.kafka_dist.controller.KafkaController`` and sending it ApiVersions
with our codecs; ``test_interop_quorum.py`` repeats the comparison live with the
suite's default release); and v5 (KIP-1242) live, the same requests to our node and to
a Kafka 4.4.0 controller and broker (marked ``java``).

A release older than the one our schemas follow (4.4.0) advertises older ranges for
what changed since; ``RELEASE_DIFFERENCES`` says which, per release, and each entry
must hold (so the table cannot rot)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraft_server.api.api_versions import SUPPORTED_FEATURES, api_versions_response
from kraft_server.api.registry import API_VERSIONS, DESCRIBE_QUORUM, UNREGISTER_CONTROLLER, listener_apis
from kraft_server.api.views import Features
from wire.headers import decode_response, encode_response
from wire.messages import ApiVersionsRequest

REAL = json.loads((Path(__file__).parents[1] / "data/net/real_controller_4.3.1.json").read_text())
FEATURES = Features(supported=dict(SUPPORTED_FEATURES),
                    finalized={"kraft.version": 1, "metadata.version": 30}, epoch=11)


def real(version):
    frame = bytes.fromhex(REAL[f"apiversions_v{version}"])
    return frame, decode_response(frame, 18, version)[1]


# Where an older release's controller listener answers otherwise than ours: we follow
# Kafka 4.4.0. "apis": API key -> that release's range (None: it has no such API).
# "features": supported feature -> that release's range; such a feature's finalized
# level is not compared either.
RELEASE_DIFFERENCES: dict[str, dict] = {
    "4.3.1": {"apis": {API_VERSIONS: (0, 4), UNREGISTER_CONTROLLER: None},
              "features": {"metadata.version": (7, 30), "share.version": (0, 1)}},
    "4.4.0": {"apis": {}, "features": {}},
}


def compare_with_real(ours, theirs, version, release="4.3.1"):
    """Same shape, our ranges: every API we list is listed by Kafka ``release`` with the
    same range (DescribeQuorum: ours goes one higher; ``RELEASE_DIFFERENCES``), features
    likewise."""
    differs = RELEASE_DIFFERENCES[release]
    assert ours.error_code == theirs.error_code == 0
    real_ranges = {k.api_key: (k.min_version, k.max_version) for k in theirs.api_keys}
    keys = [k.api_key for k in ours.api_keys]
    assert keys == sorted(keys)
    for k in ours.api_keys:
        if k.api_key in differs["apis"] and differs["apis"][k.api_key] is None:
            assert k.api_key not in real_ranges, k.api_key
            continue
        lo, hi = real_ranges[k.api_key]
        if k.api_key == DESCRIBE_QUORUM:
            assert (k.min_version, k.max_version) == (lo, hi + 1)
        elif k.api_key in differs["apis"]:
            assert (lo, hi) == differs["apis"][k.api_key], k.api_key
            assert k.min_version <= lo and k.max_version > hi, k.api_key
        else:
            assert (k.min_version, k.max_version) == (lo, hi), k.api_key
    real_supported = {f.name: (f.min_version, f.max_version) for f in theirs.supported_features}
    ours_supported = {f.name: (f.min_version, f.max_version) for f in ours.supported_features}
    for name, rng in ours_supported.items():
        if name in differs["features"]:
            assert real_supported[name] == differs["features"][name] != rng, name
        else:
            assert real_supported[name] == rng
    # Kafka omits min-0 features at v3 and lists them at v4; so do we.
    assert {n for n in ours_supported if SUPPORTED_FEATURES[n][0] == 0} <= (
        set(real_supported) if version >= 4 else set())
    if version >= 3:
        assert ours.finalized_features and ours.finalized_features_epoch >= 0
        real_final = {f.name: (f.min_version_level, f.max_version_level) for f in theirs.finalized_features}
        for f in ours.finalized_features:
            if f.name not in differs["features"]:
                assert real_final[f.name] == (f.min_version_level, f.max_version_level)
    else:
        assert not ours.supported_features and not ours.finalized_features


@pytest.mark.parametrize("version", range(5))
def test_recorded_answer_round_trips_through_our_codec(version):
    frame, body = real(version)
    assert encode_response(18, version, 7, body)[4:] == frame


@pytest.mark.parametrize("version", range(5))
def test_same_shape_as_kafka(version):
    ours = api_versions_response(version, listener_apis(True), FEATURES,
                                 ApiVersionsRequest(client_software_name="x", client_software_version="1"))
    compare_with_real(ours, real(version)[1], version)


def test_v3_leaves_out_features_with_minimum_zero():
    ours = api_versions_response(3, listener_apis(True), FEATURES)
    assert [f.name for f in ours.supported_features] == ["metadata.version"]
    ours = api_versions_response(4, listener_apis(True), FEATURES)
    assert [f.name for f in ours.supported_features] == [
        "group.version", "kraft.version", "metadata.version", "share.version", "streams.version",
        "transaction.version", "eligible.leader.replicas.version"]  # Kafka's order


def test_bad_software_name_is_invalid_request():
    # Recorded: Kafka answers INVALID_REQUEST with no keys for client name "bad name!".
    ours = api_versions_response(3, listener_apis(True), FEATURES,
                                 ApiVersionsRequest(client_software_name="bad name!",
                                                    client_software_version="1"))
    assert ours.error_code == 42 and ours.api_keys == []


@pytest.mark.parametrize("cluster_id, node_id, on_controller, on_client", [
    (None, -1, 0, 0),
    ("c1", 3, 0, 0),
    ("c1", -1, 42, 42),      # one without the other: INVALID_REQUEST on every listener
    (None, 3, 42, 42),
    ("c2", 3, 0, 129),       # another cluster: REBOOTSTRAP_REQUIRED on a client listener
    ("c1", 4, 0, 129),       # another node
])
def test_v5_target_check(cluster_id, node_id, on_controller, on_client):
    """KIP-1242 as Kafka 4.4 answers it (the live comparison is below); this node is
    node 3 of cluster c1."""
    body = ApiVersionsRequest(client_software_name="x", client_software_version="1",
                              cluster_id=cluster_id, node_id=node_id)
    controller = api_versions_response(5, listener_apis(True), FEATURES, body)
    client = api_versions_response(5, listener_apis(False), FEATURES, body, check_target=("c1", 3))
    assert (controller.error_code, client.error_code) == (on_controller, on_client)
    for answer in (controller, client):
        if answer.error_code:
            assert answer.api_keys == [] and answer.supported_features == [] \
                and answer.throttle_time_ms == 0
    # below v5 the fields do not exist: nothing is checked
    older = api_versions_response(4, listener_apis(False), FEATURES, body, check_target=("c1", 3))
    assert older.error_code == 0


def test_controller_listener_lists_exactly_what_we_implement():
    # SaslHandshake (17) and SaslAuthenticate (36) on every listener, as a Kafka 4.3.1
    # controller lists them (0-1, 0-2) on PLAINTEXT and SASL_SSL listeners alike;
    # AlterUserScramCredentials (51) and Describe/Create/DeleteAcls (29-31) on the controller listener.
    # UnregisterController (94): Kafka 4.4.0's, on the controller listener.
    # Create/Renew/ExpireDelegationToken (38-40), forwarded by brokers; on the client listener
    # too, where Kafka's AdminClient sends them. DescribeDelegationToken (41) on both, as a broker.
    assert sorted(listener_apis(True)) == [1, 17, 18, 19, 20, 29, 30, 31, 32, 33, 36, 37, 38, 39, 40, 41, 43, 44, 45, 46, 49, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 62, 63, 64, 67, 70, 73, 82, 94]
    assert sorted(listener_apis(True, reconfiguration=True)) == [1, 17, 18, 19, 20, 29, 30, 31, 32, 33, 36, 37, 38, 39, 40, 41, 43, 44, 45, 46, 49, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 62, 63, 64, 67, 70, 73, 80, 81, 82, 94]
    assert sorted(listener_apis(False)) == [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 23, 36, 38, 39, 40, 41, 42, 47, 55, 60, 75]


# -- v5 (KIP-1242), live: our node and Kafka 4.4.0 given the same requests ----------------

V5_RELEASE = "4.4.0"
CLUSTER = "QXBpVmVyc2lvbnNWNVRlc3Q"
# Keys a Kafka 4.4.0 controller listener serves that ours does not, each with its reason.
NOT_SERVED_ON_CONTROLLER = {
    50: "DescribeUserScramCredentials: Kafka's controller lists it, ControllerApis does not handle it",
}


def _exchange(conn, version: int, body):
    """One ApiVersions request on an open connection: (frame, decoded body), or None when
    the peer closed the connection."""
    from tools.blocking_client import ConnectionClosed
    conn.send(body, version)
    try:
        frame = conn.read_frame()
    except ConnectionClosed:
        return None
    return frame, decode_response(frame, 18, version)[1]


def _connect(port: int):
    from tools.blocking_client import BlockingConnection
    return BlockingConnection("127.0.0.1", port, timeout=10, client_id="v5-interop")


def _request(cluster_id, node_id):
    return ApiVersionsRequest(client_software_name="interop", client_software_version="1",
                              cluster_id=cluster_id, node_id=node_id)


def _answers(port: int, own_id: int) -> dict:
    """Every case of KIP-1242's check, each on a new connection followed by a plain v5
    request on the same one (the connection must stay open): case -> (error code, key
    count, throttle, the error answer's bytes after the correlation id, then the second
    answer's error code)."""
    cases = {
        "neither": (None, -1), "both, ours": (CLUSTER, own_id), "cluster only": (CLUSTER, -1),
        "node only": (None, own_id), "another cluster": ("another-cluster", own_id),
        "another node": (CLUSTER, own_id + 7), "empty cluster id": ("", own_id),
    }
    out = {}
    for case, (cluster_id, node_id) in cases.items():
        conn = _connect(port)
        try:
            frame, body = _exchange(conn, 5, _request(cluster_id, node_id))
            again = _exchange(conn, 5, _request(None, -1))
        finally:
            conn.close()
            out[case] = (body.error_code, len(body.api_keys), body.throttle_time_ms,
                         bytes(frame[4:]) if body.error_code else None,
                         None if again is None else again[1].error_code)
    return out


def _unsupported_answer(port: int) -> bytes:
    """ApiVersions v6 (unknown to both): the raw answer."""
    import socket
    import struct
    payload = struct.pack(">hhih", 18, 6, 9, 1) + b"t" + b"\x00" + b"\x02x\x021\x00"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(struct.pack(">i", len(payload)) + payload)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = s.recv(65536)
            assert chunk, "connection closed"
            data += chunk
    return data


@pytest.fixture(scope="module")
def v5_peers(tmp_path_factory):
    """Our standalone node, a Kafka 4.4.0 controller and a 4.4.0 broker on it."""
    from tests.support.jdk import need_jdk
    from tests.support.kraft_nodes import OurNode, wait_for
    from tools.kafka_dist.broker import start_brokers
    from tools.kafka_dist.controller import KafkaController
    need_jdk()
    work = tmp_path_factory.mktemp("apiversions-v5")
    (work / "ours").mkdir()
    ours = OurNode(work / "ours", node_id=1)
    ctl = KafkaController(work / "controller", node_id=1, cluster_id=CLUSTER, version=V5_RELEASE)
    brokers = []
    try:
        ours.format_with_ours(CLUSTER, release=V5_RELEASE)
        ours.start()
        ours.wait_leader()
        ctl.start_ready(timeout=180)
        brokers = start_brokers(work, 1, CLUSTER, ctl.bootstrap, version=V5_RELEASE)
        broker = brokers[0]

        def broker_answers():
            try:
                return _exchange_once(broker.port).error_code == 0
            except OSError:
                return False
        wait_for(broker_answers, 120, "the Kafka broker's listener")
        yield {"ours": ours, "controller": ctl, "broker": broker}
    finally:
        for b in brokers:
            b.close()
        ctl.close()
        ours.kill()


def _exchange_once(port: int):
    conn = _connect(port)
    try:
        answer = _exchange(conn, 5, _request(None, -1))
    finally:
        conn.close()
    assert answer is not None, "connection closed"
    return answer[1]


@pytest.mark.java
def test_v5_target_check_on_the_controller_listener_as_kafka(v5_peers):
    """A controller listener (Kafka's ControllerApis) checks only that both fields or
    neither are given (INVALID_REQUEST otherwise); it never answers REBOOTSTRAP_REQUIRED."""
    ours = _answers(v5_peers["ours"].port, v5_peers["ours"].node_id)
    kafka = _answers(v5_peers["controller"].port, v5_peers["controller"].node_id)
    assert {case: a[0] for case, a in kafka.items()} == {
        "neither": 0, "both, ours": 0, "cluster only": 42, "node only": 42,
        "another cluster": 0, "another node": 0, "empty cluster id": 0}
    for case in kafka:  # key counts differ by the APIs we do not serve; compared below
        assert ours[case][0] == kafka[case][0], case
        assert ours[case][2:] == kafka[case][2:], case
        assert (ours[case][1] == 0) == (kafka[case][1] == 0), case


@pytest.mark.java
def test_v5_target_check_on_the_client_listener_as_a_kafka_broker(v5_peers):
    """A client listener answers as a broker listener (Kafka's KafkaApis): a named cluster
    that is not ours, or a node that is not this one, is REBOOTSTRAP_REQUIRED (129), with
    no keys, throttle 0, and the connection stays open."""
    ours = _answers(v5_peers["ours"].client_port, v5_peers["ours"].node_id)
    kafka = _answers(v5_peers["broker"].port, v5_peers["broker"].node_id)
    assert {case: a[0] for case, a in kafka.items()} == {
        "neither": 0, "both, ours": 0, "cluster only": 42, "node only": 42,
        "another cluster": 129, "another node": 129, "empty cluster id": 129}
    assert kafka["another node"][3] == bytes.fromhex("0081" "01" "00000000" "00")  # error, no keys, throttle 0, no tags
    for case in kafka:
        assert ours[case][0] == kafka[case][0], case
        assert ours[case][2:] == kafka[case][2:], case  # error answers byte for byte
        assert (ours[case][1] == 0) == (kafka[case][1] == 0), case


@pytest.mark.java
def test_unknown_version_answered_as_kafka_4_4(v5_peers):
    theirs = _unsupported_answer(v5_peers["controller"].port)
    assert theirs == _unsupported_answer(v5_peers["broker"].port)
    assert _unsupported_answer(v5_peers["ours"].port) == theirs
    assert _unsupported_answer(v5_peers["ours"].client_port) == theirs


@pytest.mark.java
@pytest.mark.parametrize("version", range(6))
def test_controller_listener_ranges_match_kafka_4_4(v5_peers, version):
    """Our controller listener's ranges equal a live 4.4.0 controller's, at every version,
    but for the keys in ``NOT_SERVED_ON_CONTROLLER``."""
    answers = []
    for node in (v5_peers["ours"], v5_peers["controller"]):
        conn = _connect(node.port)
        try:
            answers.append(_exchange(conn, version, _request(None, -1))[1])
        finally:
            conn.close()
    ours, theirs = answers
    compare_with_real(ours, theirs, version, V5_RELEASE)
    missing = {k.api_key for k in theirs.api_keys} - {k.api_key for k in ours.api_keys}
    assert missing == set(NOT_SERVED_ON_CONTROLLER)


@pytest.mark.java
def test_delete_groups_v3_as_a_kafka_4_4_broker(v5_peers):
    """DeleteGroups v3 (Kafka 4.4's per-group ErrorMessage) for a group nobody knows, to
    the 4.4.0 broker at hand and to our client listener: the same bytes (the message is
    null: Kafka fills it only when the deletion itself fails). The broker answers
    NOT_COORDINATOR/COORDINATOR_NOT_AVAILABLE until its __consumer_offsets is loaded,
    which FindCoordinator starts; polled with a deadline."""
    from tests.support.kraft_nodes import wait_for
    from wire.headers import decode_response
    from wire.messages import DeleteGroupsRequest, FindCoordinatorRequest

    def ask(port, body, version):
        conn = _connect(port)
        try:
            conn.send(body, version)
            frame = conn.read_frame()
        finally:
            conn.close()
        return frame, decode_response(frame, body.API_KEY, version)[1]

    request = DeleteGroupsRequest(groups_names=["nobody-knows-me"])
    broker = v5_peers["broker"].port

    def loaded():
        ask(broker, FindCoordinatorRequest(key_type=0, coordinator_keys=["nobody-knows-me"]), 4)
        frame, body = ask(broker, request, 3)
        return (frame, body) if body.results[0].error_code == 69 else None  # GROUP_ID_NOT_FOUND
    kafka_frame, kafka = wait_for(loaded, 120, "the broker's group coordinator", interval=0.5)
    ours_frame, ours = ask(v5_peers["ours"].client_port, request, 3)
    assert kafka.results[0].error_message is None
    assert ours_frame[4:] == kafka_frame[4:]  # after the correlation id; throttle 0 on both
