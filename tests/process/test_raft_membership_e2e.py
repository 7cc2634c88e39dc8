"""KIP-853 end to end with processes: three of our nodes (kraft.version 1), a fourth
started as an observer, and Apache Kafka 4.3.1's own tools against our leader:
``kafka-metadata-quorum add-controller`` / ``remove-controller``, and
``kafka-features upgrade --feature kraft.version=1`` on a static quorum (which our
``reassign`` refuses, naming that command, until it is done).

Every process is killed in a finalizer; waits poll with deadlines.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kraft_server.log.meta_properties import read_meta_properties
from wire.uuids import uuid_to_str
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import (
    FAST_QUORUM, REPO, OurNode, agreed_leader, make_quorum, our_describe_quorum, set_property, storage_format,
)
from tools.kafka_dist.controller import random_cluster_id, run_tool
from tools.metadata_quorum.client import AdminClient

pytestmark = pytest.mark.java


def _partition(port: int):
    return our_describe_quorum(port).topics[0].partitions[0]


def _voter_ids(port: int) -> list[int]:
    return sorted(v.replica_id for v in _partition(port).current_voters)


def _reassign(leader, voters: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tools.metadata_quorum", "--bootstrap-controller", leader.bootstrap,
                           "reassign", "--voters", voters, *flags], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def _wait(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.1)  # poll interval
    raise AssertionError(f"timed out waiting for {what}")


def test_add_and_remove_controller_with_kafkas_tool(tmp_path, request):
    need_jdk()
    cluster_id = random_cluster_id()
    nodes = make_quorum(tmp_path, "dynamic", cluster_id)
    (tmp_path / "n4").mkdir()
    new = OurNode(tmp_path / "n4", node_id=4, extra=FAST_QUORUM)
    nodes.append(new)
    for n in nodes:
        request.addfinalizer(n.kill)
    set_property(new.config, "controller.quorum.bootstrap.servers", ",".join(n.bootstrap for n in nodes[:3]))
    set_property(new.kafka_config, "controller.quorum.bootstrap.servers",
                 ",".join(n.bootstrap for n in nodes[:3]))
    storage_format(new.config, cluster_id, "--no-initial-controllers")
    for n in nodes:
        n.start()
    leader, _ = agreed_leader(nodes[:3])
    _wait(lambda: any(o.replica_id == 4 for o in _partition(leader.port).observers),
          60, "node 4 to fetch as an observer")
    directory = uuid_to_str(read_meta_properties(new.data).directory_id)

    started = time.monotonic()
    out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", leader.bootstrap,
                   "--command-config", str(new.kafka_config), "add-controller", timeout=120, check=False)
    add_s = time.monotonic() - started
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n{leader.log_tail()}"
    assert f"Added controller 4 with directory id {directory}" in out.stdout, out.stdout
    assert _voter_ids(leader.port) == [1, 2, 3, 4]
    print(f"add-controller took {add_s:.2f} s (JVM start-up included)")

    out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", leader.bootstrap,
                   "remove-controller", "-i", "4", "-d", directory, timeout=120, check=False)
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n{leader.log_tail()}"
    assert "Removed" in out.stdout and "controller 4" in out.stdout, out.stdout
    assert _voter_ids(leader.port) == [1, 2, 3]


def test_kafka_features_upgrades_a_static_quorum_to_kraft_version_1(tmp_path, request):
    need_jdk()
    nodes = make_quorum(tmp_path, "static", random_cluster_id())
    for n in nodes:
        request.addfinalizer(n.kill)
        n.start()
    leader, _ = agreed_leader(nodes)
    # our reassign refuses at kraft.version 0, naming the upgrade (ApiVersions' finalized features)
    refused = _reassign(leader, "1,2")
    assert refused.returncode == 1 and not refused.stdout, refused.stdout + refused.stderr
    assert (f"  kafka-features --bootstrap-controller {leader.bootstrap} upgrade --feature kraft.version=1\n"
            in refused.stderr), refused.stderr
    # Followers tell the leader their directory ids with UpdateRaftVoter (once per
    # leader, after the HWM is known: within a fetch timeout or two).
    deadline = time.monotonic() + 30
    while True:
        out = run_tool("kafka-features", "--bootstrap-controller", leader.bootstrap, "upgrade",
                       "--feature", "kraft.version=1", timeout=120, check=False)
        if out.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # poll interval: the voters have not all reported yet
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n{leader.log_tail()}"
    assert "kraft.version was upgraded to 1." in out.stdout, out.stdout
    assert _voter_ids(leader.port) == [1, 2, 3]
    with AdminClient(leader.bootstrap, controllers=True) as admin:
        assert admin.kraft_version() == 1
    dry = _reassign(leader, "1,2", "--dry-run", "--force")  # now the plan, not the refusal
    assert dry.returncode == 0 and "DRY RUN of reassigning the controller quorum from [1, 2, 3] to [1, 2]" \
        in dry.stdout, dry.stdout + dry.stderr
    down = run_tool("kafka-features", "--bootstrap-controller", leader.bootstrap, "downgrade",
                    "--feature", "kraft.version=0", timeout=120, check=False)
    assert down.returncode != 0 and "Can't downgrade the version of this feature." in down.stdout, \
        down.stdout + down.stderr
