"""Kafka's own tools (the default release's) through a Kafka broker on our quorum (issue 26): client quotas
(``kafka-configs``: the broker forwards AlterClientQuotas in an Envelope, answers
DescribeClientQuotas from the ClientQuotaRecords it replayed and throttles by them),
feature flags
(``kafka-features``: UpdateFeatures for every feature, kraft.version included when
``--release-version`` names it) and ``kafka-metadata-quorum --bootstrap-server`` (the
broker forwards DescribeQuorum and RemoveRaftVoter in an Envelope). What the tools print here is what
they print on a quorum of Kafka's controllers (``test_admin_tools_same_as_kafka``, slow,
compared them; the expected strings below are those outputs).

One cluster for the module: one controller of ours, one broker. A second test formats
a cluster at ``--release-version 3.9`` and upgrades its metadata.version with brokers
running."""
from __future__ import annotations

import re

import pytest

from kraft_server.common.features import default_levels
from tests.interop.test_kafka_brokers_serve_topic import record_kinds
from tests.support.admin_session import (
    feature_session, features_described, quorum_replication, quorum_status, quota_session,
)
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import OurNode, make_quorum, wait_for
from tools.kafka_dist.controller import run_tool
from tools.kafka_dist.releases import DEFAULT_RELEASE, release_facts

pytestmark = pytest.mark.java
CLUSTER = "QWRtaW5Ub29sc09uT3Vycw"

QUOTAS_SAID = {
    "alter client c1": "rc=0\nCompleted updating config for client c1.",
    "alter default user": "rc=0\nCompleted updating default config for users in the cluster.",
    "alter ip": "rc=0\nCompleted updating config for ip 10.1.2.3.",
    "alter user and client": "rc=0\nCompleted updating config for user u1.",
    "alter delete": "rc=0\nCompleted updating config for client c1.",
    "describe clients": "rc=0\nQuota configs for client-id 'c1' are producer_byte_rate=1024.0",
    "describe default user": "rc=0\nQuota configs for the default user-principal are request_percentage=50.5",
    "describe ips": "rc=0\nQuota configs for ip '10.1.2.3' are connection_creation_rate=10.0",
    "describe user and client":
        "rc=0\nQuota configs for user-principal 'u1', client-id 'c2' are controller_mutation_rate=2.5",
}
QUOTA_REFUSALS = {
    "alter fractional": "producer_byte_rate cannot be a fractional value.",
    "alter zero": "Quota request_percentage must be greater than 0",
    "alter ip too large": "Proposed value for connection_creation_rate is too large for an INT.",
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    need_jdk()
    work = tmp_path_factory.mktemp("admin-tools")
    (work / "ours").mkdir()
    node = OurNode(work / "ours", node_id=1)
    node.format_with_ours(CLUSTER)
    node.start()
    brokers = []
    try:
        node.wait_leader()
        brokers = start_brokers(work, 1, CLUSTER, node.bootstrap)
        wait_for(lambda: quorum_ready(brokers[0].bootstrap), 120, "the broker answering DescribeQuorum")
        yield node, brokers[0].bootstrap
    finally:
        for b in brokers:
            b.close()
        node.stop()


def quorum_ready(bootstrap: str) -> bool:
    proc = run_tool("kafka-metadata-quorum", "--bootstrap-server", bootstrap, "describe", "--status",
                    check=False, timeout=90)
    return proc.returncode == 0


def test_client_quotas_through_a_broker(cluster):
    node, bootstrap = cluster
    said = quota_session(bootstrap, short=True)
    for step, expected in QUOTAS_SAID.items():
        assert said.get(step, expected) == expected, step
    for step, message in QUOTA_REFUSALS.items():
        if step in said:
            assert said[step].startswith("rc=1") and said[step].endswith(message), (step, said[step])
    assert (14, 0) in record_kinds(node)  # ClientQuotaRecord v0 in our log


def test_metadata_quorum_through_a_broker(cluster):
    _, bootstrap = cluster
    status = quorum_status(bootstrap)
    assert status["LeaderId"] == "1" and status["CurrentVoters"] == [1] and status["CurrentObservers"] == [100]
    assert status["MaxFollowerLag"].isdigit()
    assert quorum_replication(bootstrap) == [("1", "Leader"), ("100", "Observer")]


def test_feature_flags_through_a_broker(cluster):
    node, bootstrap = cluster
    said = feature_session(bootstrap, short=True)
    assert said["disable group.version"] == "rc=0\ngroup.version was downgraded to 0."
    assert said["upgrade group.version"] == "rc=0\ngroup.version was upgraded to 1."
    assert said["beyond support"].startswith("rc=1\nCould not upgrade group.version to 2. The update failed "
                                             "for all features since the following feature had an error: "
                                             "Invalid update version 2 for feature group.version. Local "
                                             "controller 1 only supports versions 0-1")
    # every feature at the level the brokers' release defaults to (4.4: metadata.version 33, share.version 2)
    levels = {**default_levels(release_facts(DEFAULT_RELEASE)["metadata"][1]), "kraft.version": 1}
    assert said["release upgrade"].splitlines()[1:] == [
        f"{f} was upgraded to {lvl}." for f, lvl in sorted(levels.items())]
    assert "Feature: group.version                             SupportedMinVersion: 0                " \
           "SupportedMaxVersion: 1                FinalizedVersionLevel: 1" in said["describe before"]
    assert said["describe before"].count("Feature: ") == 7
    assert features_described(bootstrap) == said["describe before"]  # back where it started


@pytest.mark.slow  # a variant: the upgrade path from 3.9
def test_metadata_version_upgrade_from_3_9_with_a_broker_running(tmp_path):
    need_jdk()
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1)
    run_tool("kafka-storage", "format", "--cluster-id", CLUSTER, "--standalone", "--release-version", "3.9",
             "--config", str(node.kafka_config))
    node.start()
    brokers = []
    try:
        node.wait_leader()
        brokers = start_brokers(tmp_path, 1, CLUSTER, node.bootstrap)
        bootstrap = brokers[0].bootstrap
        wait_for(lambda: "FinalizedVersionLevel: 3.9-IV0" in features_described(bootstrap), 120,
                 "the broker at metadata.version 3.9-IV0")
        run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "before",
                 "--partitions", "2", "--replication-factor", "1", timeout=90)
        name, level = release_facts(DEFAULT_RELEASE)["metadata"]  # the brokers' newest level
        up = run_tool("kafka-features", "--bootstrap-server", bootstrap, "upgrade", "--metadata",
                      name.split("-")[0], timeout=90)
        assert f"metadata.version was upgraded to {level}." in up.stdout
        wait_for(lambda: f"FinalizedVersionLevel: {name}" in features_described(bootstrap), 60,
                 f"the broker at metadata.version {name}")
        run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "after",
                 "--partitions", "2", "--replication-factor", "1", timeout=90)
        topics = run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--describe", timeout=90).stdout
        assert topics.count("Leader: 100") == 4, topics
        assert (12, 0) in record_kinds(node)
    finally:
        for b in brokers:
            b.close()
        node.stop()


def test_remove_raft_voter_through_a_broker_reaches_the_raft_core(cluster):
    """RemoveRaftVoter forwarded in an Envelope gets the core's answer (VOTER_NOT_FOUND for
    a voter that is not there) instead of the broker dropping the connection."""
    _, bootstrap = cluster
    proc = run_tool("kafka-metadata-quorum", "--bootstrap-server", bootstrap, "remove-controller",
                    "--controller-id", "5", "--controller-directory-id", "AQEBAQEBAQEBAQEBAQEBAQ",
                    check=False, timeout=90)
    assert proc.returncode != 0
    assert "org.apache.kafka.common.errors.VoterNotFoundException: Cannot remove voter" in proc.stderr, \
        proc.stderr[-2000:]


@pytest.mark.slow  # a variant of test_client_quotas_through_a_broker
def test_the_broker_throttles_a_client_by_the_quota_it_replayed(cluster):
    """A producer_byte_rate set through our controller is enforced by the broker: the
    producer sees throttle time (its produce-throttle-time-max metric) once it exceeds it."""
    _, bootstrap = cluster
    run_tool("kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", "throttled",
             "--partitions", "1", "--replication-factor", "1", timeout=90)
    run_tool("kafka-configs", "--bootstrap-server", bootstrap, "--alter", "--entity-type", "clients",
             "--entity-name", "slow-producer", "--add-config", "producer_byte_rate=8000", timeout=90)
    perf = run_tool("kafka-producer-perf-test", "--topic", "throttled", "--num-records", "100",
                    "--record-size", "1000", "--throughput", "-1", "--print-metrics", "--command-property",
                    f"bootstrap.servers={bootstrap}", "client.id=slow-producer", "acks=1",
                    "linger.ms=0", timeout=120)
    assert "100 records sent" in perf.stdout, perf.stdout[-2000:]
    [max_throttle] = [float(v) for v in re.findall(
        r"producer-metrics:produce-throttle-time-max:\{client-id=slow-producer\}\s*:\s*([\d.]+)", perf.stdout)]
    assert max_throttle > 0, perf.stdout[-3000:]


def test_release_upgrade_moves_kraft_version_with_the_other_features(tmp_path):
    """``upgrade --release-version`` names kraft.version with the rest: on a static quorum
    (kraft.version 0) the controller has the Raft core append KRaftVersion 1 and the
    voters, then answers once its own records commit."""
    need_jdk()
    [node] = make_quorum(tmp_path, "static", CLUSTER, n=1)
    node.start()
    try:
        node.wait_leader()
        boot = node.bootstrap
        name = release_facts(DEFAULT_RELEASE)["metadata"][0]  # the harness formats at the pinned release
        wait_for(lambda: f"FinalizedVersionLevel: {name}" in features_described(boot, "--bootstrap-controller"),
                 60, f"the controller at metadata.version {name}")
        assert "Feature: kraft.version                             SupportedMinVersion: 0                " \
               "SupportedMaxVersion: 1                FinalizedVersionLevel: 0" in \
               features_described(boot, "--bootstrap-controller")
        up = run_tool("kafka-features", "--bootstrap-controller", boot, "upgrade", "--release-version",
                      name.split("-")[0], timeout=90, check=False)
        assert "kraft.version was upgraded to 1." in up.stdout and up.returncode == 0, up.stdout + up.stderr
        assert "FinalizedVersionLevel: 1" in [l for l in features_described(boot, "--bootstrap-controller")
                                               .splitlines() if "kraft.version" in l][0]
    finally:
        node.stop()
