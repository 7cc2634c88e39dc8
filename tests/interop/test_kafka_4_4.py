"""Kafka 4.4.0's tools against ours (issue 38): metadata.version up to 4.4-IV2 (33).

- ``kafka-storage format`` 4.4.0 writes no bootstrap.checkpoint: the feature levels go
  into the bootstrap snapshot 0-0; our node reads them there and starts at 4.4-IV2.
- ours and 4.4.0's ``kafka-storage`` take the same ``--release-version`` forms and
  write the same levels for each (the sweep over releases is slow: one JVM per case).
- 4.4.0's ``kafka-features upgrade --release-version 4.4`` moves our controller from
  4.3-IV0 to 4.4-IV2 (share.version 2 with it), and ``downgrade`` is refused across a
  metadata change as Kafka 4.4 refuses it.
- 4.4.0's ``kafka-cluster unregister-controller`` gets Kafka's refusal for the active
  controller itself, and removes a stopped Kafka 4.4.0 controller that had registered
  with our leader.
- a live 4.4.0 controller's ApiVersions: the same supported features as ours.

Only the first test is in the default suite; the others start several JVMs (slow).
"""
from __future__ import annotations

import re
import uuid

import pytest

from kraft_server.common.features import SUPPORTED
from kraft_server.log.bootstrap import DEFAULT_FEATURES, read_bootstrap_checkpoint
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, storage_format, wait_for
from tools.kafka_dist.controller import run_tool
from tools.storage.__main__ import main as storage_main

K44 = "4.4.0"


def kafka44(tool: str, *args: str, check: bool = True, timeout: float = 90):
    return run_tool(tool, *args, version=K44, check=check, timeout=timeout)


def features(boot: str) -> dict[str, tuple[str, str, str]]:
    """``kafka-features describe``: name -> (SupportedMin, SupportedMax, Finalized)."""
    out = kafka44("kafka-features", "--bootstrap-controller", boot, "describe").stdout
    rows = re.findall(r"Feature: (\S+)\s+SupportedMinVersion: (\S+)\s+SupportedMaxVersion: (\S+)\s+"
                      r"FinalizedVersionLevel: (\S+)", out)
    return {name: (lo, hi, fin) for name, lo, hi, fin in rows}


def test_our_node_starts_from_what_kafka_4_4_formats(tmp_path):
    need_jdk()
    node = OurNode(tmp_path)
    kafka44("kafka-storage", "format", "--cluster-id", uuid.uuid4().hex[:22], "--standalone",
            "--config", str(node.kafka_config))
    assert not (node.data / "bootstrap.checkpoint").exists()  # 4.4: the levels are in snapshot 0-0
    assert read_bootstrap_checkpoint(node.data) == {
        "metadata.version": 33, "eligible.leader.replicas.version": 1, "group.version": 1,
        "share.version": 2, "streams.version": 1, "transaction.version": 2}
    node.start()
    try:
        node.wait_leader()
        wait_for(lambda: features(node.bootstrap).get("metadata.version", ("", "", ""))[2] == "4.4-IV2",
                 60, "metadata.version 4.4-IV2 finalized")
        got = features(node.bootstrap)
        # what a Kafka 4.4.0 controller advertises (QuorumFeatures), and the levels formatted
        assert got["metadata.version"] == ("3.3-IV3", "4.4-IV2", "4.4-IV2")
        assert got["share.version"] == ("0", "2", "2")
        assert got["kraft.version"] == ("0", "1", "1")
    finally:
        node.stop()


@pytest.mark.slow  # JVMs: 35-100 s on a shared machine
def test_features_upgrade_to_4_4_and_refused_downgrade(tmp_path):
    need_jdk()
    node = OurNode(tmp_path)
    storage_format(node.config, uuid.uuid4().hex[:22], "--standalone", "--release-version", "4.3")
    node.start()
    try:
        node.wait_leader()
        boot = node.bootstrap
        wait_for(lambda: features(boot).get("metadata.version", ("", "", ""))[2] == "4.3-IV0", 60,
                 "metadata.version 4.3-IV0")
        up = kafka44("kafka-features", "--bootstrap-controller", boot, "upgrade", "--release-version", "4.4",
                     check=False)
        assert up.returncode == 0, up.stdout + up.stderr
        assert "metadata.version was upgraded to 33." in up.stdout
        assert "share.version was upgraded to 2." in up.stdout
        got = features(boot)
        assert got["metadata.version"][2] == "4.4-IV2" and got["share.version"][2] == "2"
        down = kafka44("kafka-features", "--bootstrap-controller", boot, "downgrade", "--metadata", "4.4-IV1",
                       check=False)
        assert down.returncode != 0
        assert ("Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the requested "
                "downgrade because it might delete metadata information.") in down.stdout + down.stderr
        # the active controller cannot unregister itself (QuorumController.unregisterController)
        un = kafka44("kafka-cluster", "unregister-controller", "--bootstrap-controller", boot, "--id", "1",
                     check=False)
        assert un.returncode != 0
        assert "Controller cannot unregister itself while it is active." in un.stdout + un.stderr
    finally:
        node.stop()


@pytest.mark.slow
@pytest.mark.parametrize("release", [None, "4.4", "4.4-IV0", "4.3", "4.2-IV0", "4.1", "4.0", "4.0-IV1",
                                     "3.9", "3.7-IV2", "3.3", "4.5-IV0", "9.9"])
def test_our_format_writes_what_kafka_4_4_writes(tmp_path, release):
    need_jdk()
    node = OurNode(tmp_path)
    flags = ["--release-version", release] if release else []
    theirs = kafka44("kafka-storage", "format", "--cluster-id", "a" * 22, "--standalone",
                     "--config", str(node.kafka_config), *flags, check=False)
    kafka_levels = read_bootstrap_checkpoint(node.data)
    ours_dir = tmp_path / "ours"
    ours_dir.mkdir()
    node2 = OurNode(ours_dir)
    code = storage_main(["format", "-t", "a" * 22, "-c", str(node2.config), "--standalone", *flags])
    assert (code == 0) == (theirs.returncode == 0), theirs.stdout + theirs.stderr
    assert read_bootstrap_checkpoint(node2.data) == kafka_levels
    assert (kafka_levels is None) == (theirs.returncode != 0)


@pytest.mark.slow  # JVMs: 35-100 s on a shared machine
def test_we_advertise_what_a_kafka_4_4_controller_advertises(tmp_path):
    """ApiVersions v4 from a live Kafka 4.4.0 controller: the same supported features in
    the same order (QuorumFeatures), the same finalized levels after the same format, and
    UnregisterController (94) at the same range on the controller listener."""
    need_jdk()
    from kraft_server.api.api_versions import api_versions_response
    from kraft_server.api.registry import UNREGISTER_CONTROLLER, listener_apis
    from kraft_server.api.views import Features
    from tests.support.kraft_nodes import _roundtrip
    from tools.kafka_dist.controller import KafkaController
    from wire.messages import ApiVersionsRequest

    request = ApiVersionsRequest(client_software_name="kraft-test", client_software_version="1")
    with KafkaController(tmp_path / "kafka", version=K44) as ctl:  # formatted, started, active
        theirs = _roundtrip(ctl.port, request, 4)
    supported = [(f.name, f.min_version, f.max_version) for f in theirs.supported_features]
    finalized = {f.name: f.max_version_level for f in theirs.finalized_features}
    ours = api_versions_response(4, listener_apis(True), Features(
        supported=dict(SUPPORTED), finalized=finalized, epoch=theirs.finalized_features_epoch), request)
    assert [(f.name, f.min_version, f.max_version) for f in ours.supported_features] == supported
    # a 4.4.0 controller formatted by 4.4.0's tool finalizes our default levels (and kraft.version 1)
    assert finalized == dict(DEFAULT_FEATURES, **{"kraft.version": 1})
    their_keys = {k.api_key: (k.min_version, k.max_version) for k in theirs.api_keys}
    assert their_keys[UNREGISTER_CONTROLLER] == listener_apis(True)[UNREGISTER_CONTROLLER] == (0, 0)


def list_endpoints(boot: str) -> dict[int, str]:
    """``kafka-cluster list-endpoints --bootstrap-controller`` (4.4.0): {id: "host:port"}."""
    out = kafka44("kafka-cluster", "list-endpoints", "--bootstrap-controller", boot, check=False).stdout
    return {int(c[0]): f"{c[1]}:{c[2]}" for c in (line.split() for line in out.splitlines()[1:])
            if len(c) >= 3 and c[0].isdigit()}


@pytest.mark.slow  # JVMs: 35-100 s on a shared machine
def test_a_kafka_4_4_controller_registers_with_us_and_is_unregistered(tmp_path):
    """Both formatted by 4.4.0's kafka-storage: our leader bootstraps from its snapshot 0-0,
    a Kafka 4.4.0 controller observing it registers; once stopped, 4.4.0's
    ``kafka-cluster unregister-controller`` removes its registration (DescribeCluster
    no longer lists it); a second try gets CONTROLLER_ID_NOT_REGISTERED."""
    need_jdk()
    from tools.kafka_dist.controller import KafkaController, random_cluster_id

    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1)
    cluster_id = random_cluster_id()
    ctl = KafkaController(tmp_path / "kafka", node_id=2, cluster_id=cluster_id, version=K44,
                          format_mode="no-initial-controllers", bootstrap_servers=node.bootstrap)
    try:
        kafka44("kafka-storage", "format", "--cluster-id", cluster_id, "--standalone",
                "--config", str(node.kafka_config))
        node.start()
        node.wait_leader()
        ctl.format()
        ctl.start()
        both = {1: f"127.0.0.1:{node.port}", 2: f"127.0.0.1:{ctl.port}"}
        wait_for(lambda: list_endpoints(node.bootstrap) == both, 120, "Kafka 4.4.0's registration with us",
                 interval=1.0)
        assert '"maxSupportedVersion":33' in "".join(
            line.replace(" ", "") for line in kafka44("kafka-dump-log", "--cluster-metadata-decoder", "--files",
                                                      *map(str, sorted(node.data.glob("__cluster_metadata-0/*.log"))))
            .stdout.splitlines() if '"controllerId":2' in line.replace(" ", ""))
        ctl.stop()
        un = kafka44("kafka-cluster", "unregister-controller", "--bootstrap-controller", node.bootstrap,
                     "--id", "2", check=False)
        assert un.returncode == 0, un.stdout + un.stderr
        assert list_endpoints(node.bootstrap) == {1: f"127.0.0.1:{node.port}"}
        again = kafka44("kafka-cluster", "unregister-controller", "--bootstrap-controller", node.bootstrap,
                        "--id", "2", check=False)
        assert again.returncode != 0 and "Controller ID 2 is not currently registered." in again.stdout + again.stderr
    finally:
        ctl.close()
        node.kill()
