"""Issue 26's measure: our controller listener's ApiVersions cover an Apache Kafka 4.3.1
controller's (every key it lists, each range at least as wide), and a Kafka broker on
our quorum advertises what a broker on Kafka's controllers advertises
(``kafka-broker-api-versions``: a broker lists a forwardable API only as far as its
controller does). Left out, each with its reason, are the keys other work owns.

Each side runs in turn (one controller, one broker, then closed) so that no more
than two JVMs run at once. The slow test also runs the same operator session
(``tests/support/admin_session.py``: quotas, features, the quorum, through the
broker) on both sides and compares what the tools printed and the ClientQuotaRecords
and FeatureLevelRecords each controller wrote."""
from __future__ import annotations

import json
import re

import pytest

from tests.support.admin_session import (
    feature_session, features_described, quorum_replication, quorum_status, quota_session,
)
from tests.support import metadata_dump as md
from tests.support.controller_scenario import dump_segments
from tests.support.jdk import need_jdk
from tests.support.kafka_brokers import start_brokers
from tests.support.kraft_nodes import OurNode, _roundtrip, wait_for
from tools.kafka_dist.controller import KafkaController, run_tool
from wire.messages import ApiVersionsRequest

pytestmark = pytest.mark.java
CLUSTER = "TWVhc3VyZU9mVGhlQXBpcw"

# Kafka's controller lists these but ControllerApis does not handle them (SaslHandshake 17
# and SaslAuthenticate 36 are served: kraft_server/net/sasl_gate.py; AlterUserScramCredentials
# 51: kraft_server/controller/scram/control.py; Describe/Create/DeleteAcls 29-31:
# kraft_server/controller/acls/control.py; Create/Renew/Expire/DescribeDelegationToken 38-41:
# kraft_server/controller/tokens/).
SECURITY_OWNED = {
    50: "DescribeUserScramCredentials: Kafka's controller lists it, ControllerApis does not handle it",
}
LEFT_OUT = set(SECURITY_OWNED)


def api_ranges(port: int) -> tuple[dict[int, tuple[int, int]], list]:
    """The listener's API ranges, and its supported features in the order given."""
    r = _roundtrip(port, ApiVersionsRequest(client_software_name="measure", client_software_version="1"), 4)
    assert r.error_code == 0
    return ({k.api_key: (k.min_version, k.max_version) for k in r.api_keys},
            [(f.name, f.min_version, f.max_version) for f in r.supported_features])


def broker_api_versions(bootstrap: str) -> str:
    proc = run_tool("kafka-broker-api-versions", "--bootstrap-server", bootstrap, timeout=90, check=False)
    out = proc.stdout if proc.returncode == 0 else ""  # "": the broker is not up yet
    return re.sub(r"^\S+ \(id: (\d+) rack: \S+ isFenced: \w+\) -> \($", r"broker \1 -> (", out, flags=re.M)


def without_left_out(listing: str) -> list[str]:
    return [l for l in listing.splitlines()
            if not any(re.search(rf"\({k}\):", l) for k in LEFT_OUT)]


def quota_and_feature_batches(dump: str) -> list:
    """The ClientQuotaRecords and FeatureLevelRecords of each batch after the
    bootstrap one, as ``kafka-dump-log`` decodes them, one sorted list a batch."""
    wanted = {"CLIENT_QUOTA_RECORD", "FEATURE_LEVEL_RECORD"}
    out = []
    for batch in md.parse(dump):
        kept = sorted(json.dumps(r, sort_keys=True) for r in batch.records if r[0] in wanted)
        if kept and not any(r[0] == "BEGIN_TRANSACTION_RECORD" for r in batch.records):
            out.append(kept)
    return out


def run_side(kind: str, work, session: bool) -> dict:
    """Start one controller (``kind``: kafka or ours) and one broker, gather what the
    measure compares, close both."""
    work.mkdir()
    if kind == "kafka":
        controller = KafkaController(work / "controller", node_id=1, cluster_id=CLUSTER)
        start, port = (lambda: controller.start_ready(timeout=120)), lambda: controller.port
    else:
        (work / "ours").mkdir()
        controller = OurNode(work / "ours", node_id=1)
        controller.format_with_ours(CLUSTER)

        def start():
            controller.start()
            controller.wait_leader()
        port = lambda: controller.port  # noqa: E731
    brokers = []
    try:
        start()
        seen = {"controller": api_ranges(port())}
        brokers = start_brokers(work, 1, CLUSTER, controller.bootstrap)
        bootstrap = brokers[0].bootstrap
        # The broker lists forwarded APIs once it has its controller's ApiVersions.
        wait_for(lambda: "CreateTopics(19): 2 to 7" in broker_api_versions(bootstrap), 120,
                 "the broker advertising forwarded APIs")
        seen["broker"] = broker_api_versions(bootstrap)
        if session:
            seen["quotas"] = quota_session(bootstrap)
            seen["features"] = feature_session(bootstrap)
            seen["status"] = quorum_status(bootstrap)
            seen["replication"] = quorum_replication(bootstrap)
            seen["features via the controller"] = features_described(controller.bootstrap, "--bootstrap-controller")
            data = controller.data_dir if kind == "kafka" else controller.data
            seen["records"] = quota_and_feature_batches(
                dump_segments(sorted((data / "__cluster_metadata-0").glob("*.log"))))
        return seen
    finally:
        for b in brokers:
            b.close()
        if kind == "kafka":
            controller.close()
        else:
            controller.stop()


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    need_jdk()
    work = tmp_path_factory.mktemp("measure")
    return {kind: run_side(kind, work / kind, session=False) for kind in ("kafka", "ours")}


def test_our_controller_listener_covers_kafkas(sides):
    (kafka, kafka_features), (ours, our_features) = sides["kafka"]["controller"], sides["ours"]["controller"]
    # what kafka-features --bootstrap-controller describes: the same features in the same
    # order, ours reaching at least as high (we follow Kafka 4.4.0: metadata.version to 33,
    # share.version to 2, where the suite's release may stop lower)
    assert [f[0] for f in our_features] == [f[0] for f in kafka_features]
    for (name, lo, hi), (_, klo, khi) in zip(our_features, kafka_features):
        assert lo == klo and hi >= khi, (name, (lo, hi), (klo, khi))
    for key, (lo, hi) in sorted(kafka.items()):
        if key in LEFT_OUT:
            continue
        assert key in ours, f"API {key} missing on our controller listener"
        assert ours[key][0] <= lo and ours[key][1] >= hi, (key, ours[key], (lo, hi))
    # the exceptions are real gaps (else the list must shrink)
    assert all(key in kafka for key in LEFT_OUT)
    assert not any(key in ours for key in LEFT_OUT), "an excepted API is served now: drop it from the list"


def test_a_broker_advertises_what_it_does_on_kafkas_controllers(sides):
    kafka, ours = sides["kafka"]["broker"], sides["ours"]["broker"]
    assert kafka.splitlines()[0] == "broker 100 -> ("
    assert without_left_out(ours) == without_left_out(kafka)
    assert "AlterClientQuotas(49): 0 to 1 [usable: 1]" in ours
    assert "DescribeQuorum(55): 0 to 2 [usable: 2]" in ours
    assert "UpdateFeatures(57): 0 to 2 [usable: 2]" in ours


@pytest.mark.slow
def test_admin_tools_same_as_kafka(tmp_path):
    need_jdk()
    kafka, ours = (run_side(kind, tmp_path / kind, session=True) for kind in ("kafka", "ours"))
    for part in ("quotas", "features", "status", "replication", "features via the controller"):
        assert ours[part] == kafka[part], part
    # the same records, batch by batch (quotas: 5 changes that write; features: 3 writes)
    assert ours["records"] == kafka["records"]
    assert len(kafka["records"]) == 8
