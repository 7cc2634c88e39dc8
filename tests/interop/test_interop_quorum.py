"""Interop with Apache Kafka 4.3.1's own tools and servers (needs a JDK and the
pinned distribution; marked ``java``).

1. A standalone quorum: a directory formatted by Kafka's ``kafka-storage format
   --standalone`` (and, when present, by our ``tools.storage``), our node started
   on it with ``python -m kraft_server``; it must elect itself, and Kafka's
   ``kafka-metadata-quorum --bootstrap-controller`` must print the right leader,
   epoch, high watermark and voter, for ``describe --status`` and
   ``describe --replication``. SIGTERM must shut it down cleanly (exit 0).
2. ApiVersions, every version the default release serves, from a real Kafka controller
   of that release and from our node, live, same shape, the ranges that release gives
   (``tests/interop/test_api_versions.py`` does it offline, and v5 against 4.4.0).

Every process started here is killed in a finalizer; every wait polls with a deadline.
"""
from __future__ import annotations

import importlib.util
import socket
import sys
import time

import pytest

from kraft_server.log.meta_properties import read_meta_properties
from wire.uuids import uuid_to_str
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, parse_status
from tools.kafka_dist.controller import random_cluster_id, run_tool

pytestmark = pytest.mark.java


def _need_jdk():
    import shutil
    need_jdk()
    if importlib.util.find_spec("kraft_server.raft.node") is None:
        pytest.skip("the Raft core (kraft_server.raft.node) is not there yet")


def _formatters():
    yield "kafka-storage"
    if importlib.util.find_spec("tools.storage") is not None:
        yield "tools.storage"


@pytest.fixture(params=list(_formatters()))
def standalone_node(request, tmp_path):
    _need_jdk()
    node = OurNode(tmp_path)
    request.addfinalizer(node.kill)
    cluster_id = random_cluster_id()
    t0 = time.monotonic()
    if request.param == "kafka-storage":
        node.format_with_kafka(cluster_id)
    else:
        node.format_with_ours(cluster_id)
    t1 = time.monotonic()
    node.start()
    quorum = node.wait_leader()
    sys.stderr.write(f"\n[{request.param}] format {t1 - t0:.1f}s, elected in {time.monotonic() - t1:.2f}s\n")
    return node, cluster_id, quorum


def test_kafka_metadata_quorum_describes_our_standalone_quorum(standalone_node):
    node, cluster_id, quorum = standalone_node
    meta = read_meta_properties(node.data)
    directory_id = uuid_to_str(meta.directory_id)

    status = run_tool("kafka-metadata-quorum", "--bootstrap-controller", node.bootstrap,
                      "describe", "--status").stdout
    fields = parse_status(status)
    assert fields["ClusterId"] == cluster_id
    assert fields["LeaderId"] == "1"
    assert int(fields["LeaderEpoch"]) == quorum.leader_epoch >= 1
    assert int(fields["HighWatermark"]) >= quorum.high_watermark > 0
    assert fields["MaxFollowerLag"] == "0"
    assert fields["CurrentObservers"] == "[]"
    voters = fields["CurrentVoters"]
    assert f'"id": 1' in voters and f'"directoryId": "{directory_id}"' in voters
    assert f'"endpoints": ["CONTROLLER://127.0.0.1:{node.port}"]' in voters

    replication = run_tool("kafka-metadata-quorum", "--bootstrap-controller", node.bootstrap,
                           "describe", "--replication").stdout
    rows = [line.split() for line in replication.strip().splitlines()]
    assert rows[0][:4] == ["NodeId", "DirectoryId", "LogEndOffset", "Lag"]
    assert len(rows) == 2, replication
    node_id, dir_id, leo, lag, fetch_ts, caught_ts, role = rows[1][:7]
    assert (node_id, dir_id, lag, role) == ("1", directory_id, "0", "Leader")
    assert int(leo) >= quorum.high_watermark
    now_ms = time.time() * 1000
    assert abs(int(fetch_ts) - now_ms) < 60_000 and abs(int(caught_ts) - now_ms) < 60_000

    # The client listener answers as a broker would: Metadata, DescribeCluster (type 1),
    # DescribeQuorum; so the tool also works with --bootstrap-server.
    via_client = parse_status(run_tool("kafka-metadata-quorum", "--bootstrap-server",
                                       f"127.0.0.1:{node.client_port}", "describe", "--status").stdout)
    for key in ("ClusterId", "LeaderId", "LeaderEpoch", "CurrentVoters", "CurrentObservers"):
        assert via_client[key] == fields[key], key

    assert node.stop() == 0, node.log_tail()


def test_sigterm_shuts_down_cleanly_and_restart_keeps_the_epoch(standalone_node):
    node, _, quorum = standalone_node
    assert node.stop() == 0, node.log_tail()
    node.start()
    again = node.wait_leader()
    assert again.leader_epoch > quorum.leader_epoch  # a new election, a higher epoch
    assert again.high_watermark >= quorum.high_watermark
    assert node.stop() == 0, node.log_tail()


# -- ApiVersions, live -----------------------------------------------------------------

def _api_versions(port: int, version: int):
    from wire.framing import FrameReader
    from wire.headers import decode_response, encode_request
    from wire.messages import ApiVersionsRequest
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(encode_request(18, version, 1, ApiVersionsRequest(
            client_software_name="interop", client_software_version="1"), "t"))
        reader, frames = FrameReader(), []
        while not frames:
            data = s.recv(65536)
            assert data, "connection closed"
            frames = reader.feed(data)
    return decode_response(frames[0], 18, version)[1]


@pytest.mark.slow
@pytest.mark.parametrize("standalone_node", ["kafka-storage"], indirect=True)  # one live comparison
def test_api_versions_same_shape_as_a_live_kafka_controller(standalone_node, tmp_path_factory):
    from tests.interop.test_api_versions import compare_with_real
    from tools.kafka_dist import DEFAULT_RELEASE
    from tools.kafka_dist.controller import KafkaController
    node, _, _ = standalone_node
    ctl = KafkaController(tmp_path_factory.mktemp("kafka"), node_id=1)  # the default release
    try:
        ctl.start_ready(timeout=120)
        # every version the release serves (4.3.1: 0-4; 4.4.0: 0-5), with its ranges
        newest = {k.api_key: k.max_version for k in _api_versions(ctl.port, 0).api_keys}[18]
        assert newest >= 4
        for version in range(newest + 1):
            compare_with_real(_api_versions(node.port, version), _api_versions(ctl.port, version),
                              version, DEFAULT_RELEASE)
    finally:
        ctl.close()


# -- our node following a real Kafka 4.3.1 leader ------------------------------------------

def test_our_observer_replicates_from_a_real_kafka_leader(tmp_path):
    """Our peer channels against Kafka itself: ApiVersions handshake, Fetch v18,
    BeginQuorumEpoch-less discovery through controller.quorum.bootstrap.servers."""
    _need_jdk()
    from tools.kafka_dist.controller import KafkaController
    ctl = KafkaController(tmp_path / "kafka", node_id=1)
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=2)
    try:
        ctl.start_ready(timeout=120)
        node.format_as_observer_of(ctl.bootstrap, ctl.cluster_id)
        node.start()
        deadline = time.monotonic() + 60
        rows = {}
        while time.monotonic() < deadline:
            out = ctl.run_tool("kafka-metadata-quorum", "--bootstrap-controller", ctl.bootstrap,
                               "describe", "--replication").stdout
            rows = {r[0]: r for r in (line.split() for line in out.strip().splitlines()[1:])}
            if "2" in rows and rows["2"][6] == "Observer" and rows["2"][3] == "0":
                break
            assert node.proc.poll() is None, node.log_tail()
            time.sleep(0.2)  # poll interval
        assert rows.get("2", [None] * 7)[6] == "Observer", (rows, node.log_tail())
        assert rows["2"][3] == "0"  # lag 0: it has everything the leader has
        t0 = time.monotonic()
        assert node.stop() == 0, node.log_tail()
        assert time.monotonic() - t0 < 3  # an observer has nobody to resign to
    finally:
        node.kill()
        ctl.close()


def test_a_real_kafka_controller_replicates_from_our_leader(standalone_node, tmp_path_factory, request):
    """Kafka 4.3.1's own Raft client as an observer of our standalone leader: our
    listener, Fetch handling and DescribeQuorum as Kafka's replica sees them."""
    from tools.kafka_dist.controller import KafkaController
    if "tools.storage" in request.node.callspec.id:
        pytest.skip("one run is enough")
    node, cluster_id, _ = standalone_node
    ctl = KafkaController(tmp_path_factory.mktemp("kafka-observer"), node_id=2, cluster_id=cluster_id,
                          format_mode="no-initial-controllers", bootstrap_servers=node.bootstrap)
    try:
        ctl.format()
        ctl.start()
        deadline = time.monotonic() + 90
        rows = {}
        while time.monotonic() < deadline:
            assert ctl.running, ctl.log_tail()
            out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", node.bootstrap,
                           "describe", "--replication").stdout
            rows = {r[0]: r for r in (line.split() for line in out.strip().splitlines()[1:])}
            if "2" in rows and rows["2"][3] == "0":
                break
            time.sleep(0.5)  # poll interval
        assert rows.get("2", [None] * 7)[6] == "Observer", (rows, ctl.log_tail())
        assert rows["2"][3] == "0" and rows["1"][6] == "Leader"
    finally:
        ctl.close()
    assert node.stop() == 0, node.log_tail()
