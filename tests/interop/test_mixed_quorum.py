"""Mixed quorums with real Apache Kafka controllers (the default release): controller registrations
(KIP-919) and a voter added by Kafka's own ``add-controller`` (KIP-853). Needs a JDK
and the pinned distribution (marked ``java``); ``tests/interop/test_interop_quorum.py`` has
the plain replication cases, which these do not repeat.

(a) Our standalone leader, a Kafka controller observing it: Kafka's
    ``ControllerRegistrationManager`` sends ControllerRegistration to us, the
    RegisterControllerRecord lands in our log (read back with ``kafka-dump-log``),
    and DescribeCluster lists it, on our node (``kafka-cluster list-endpoints``) and
    on Kafka's, which replayed the same records from us.
(b) A Kafka standalone leader, our node an observer: ``kafka-metadata-quorum
    add-controller --command-config <our properties>`` makes us a voter (Kafka
    probes our ApiVersions for kraft.version); ``describe --status`` shows it; we
    register with Kafka's active controller; then our voter counts: with two voters
    the high watermark stops while we are paused; after the Kafka leader is killed
    and restarted we are elected (with Kafka's vote), and after we are killed and
    restarted Kafka is elected (with ours); the restarted Kafka controller's new
    incarnation registers with us while we lead.

Every process started here is killed in a finalizer; every wait polls with a deadline.
"""
from __future__ import annotations

import functools
import os
import re
import signal
import sys
import time

import pytest

from kraft_server.log.meta_properties import read_meta_properties
from wire.uuids import uuid_to_str
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, parse_status, segment_files, set_property
from tests.support.kraft_nodes import wait_for as kraft_wait_for
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool
from tools.kafka_dist.probe import describe_quorum
from tools.kafka_dist.releases import DEFAULT_RELEASE, release_facts

pytestmark = pytest.mark.java


@pytest.fixture(autouse=True)
def _need_jdk():
    need_jdk()


wait_for = functools.partial(kraft_wait_for, interval=0.3)  # each poll may start a JVM


def list_endpoints(bootstrap: str) -> dict[int, str]:
    """``kafka-cluster list-endpoints --bootstrap-controller``: DescribeCluster through
    Kafka's Admin client (KIP-919), as {id: "host:port"}."""
    out = run_tool("kafka-run-class", "org.apache.kafka.tools.ClusterTool", "list-endpoints",
                   "--bootstrap-controller", bootstrap, check=False, timeout=60)
    rows = {}
    for line in out.stdout.splitlines()[1:]:
        cells = line.split()
        if len(cells) >= 3 and cells[0].isdigit():
            rows[int(cells[0])] = f"{cells[1]}:{cells[2]}"
    return rows


def dumped_registrations(data) -> list[str]:
    """RegisterControllerRecord payloads in our segments, decoded by Kafka's kafka-dump-log."""
    out = []
    for seg in segment_files(data):
        text = run_tool("kafka-dump-log", "--cluster-metadata-decoder", "--files", str(seg)).stdout
        out += [line for line in text.splitlines() if "REGISTER_CONTROLLER_RECORD" in line]
    return out


def quorum_status(bootstrap: str) -> dict[str, str]:
    proc = run_tool("kafka-metadata-quorum", "--bootstrap-controller", bootstrap, "describe", "--status",
                    check=False, timeout=60)
    return parse_status(proc.stdout) if proc.returncode == 0 else {}


def test_a_kafka_controller_registers_with_our_leader(tmp_path):
    (tmp_path / "ours").mkdir()
    node = OurNode(tmp_path / "ours", node_id=1)
    cluster_id = random_cluster_id()
    ctl = KafkaController(tmp_path / "kafka", node_id=2, cluster_id=cluster_id,
                          format_mode="no-initial-controllers", bootstrap_servers=node.bootstrap)
    try:
        node.format_with_kafka(cluster_id)
        node.start()
        node.wait_leader()
        # Before Kafka's controller exists, DescribeCluster lists only us (our own
        # registration, written by the leader itself).
        assert list_endpoints(node.bootstrap) == {1: f"127.0.0.1:{node.port}"}
        ctl.format()
        ctl.start()

        def registered():
            assert ctl.running, ctl.log_tail()
            lines = dumped_registrations(node.data)
            return [line for line in lines if '"controllerId":2' in line.replace(" ", "")]

        lines = wait_for(registered, 120, "Kafka's RegisterControllerRecord in our log", interval=1.0)
        record = lines[-1].replace(" ", "")
        assert f'"name":"CONTROLLER","host":"127.0.0.1","port":{ctl.port},"securityProtocol":0' in record
        newest = release_facts(DEFAULT_RELEASE)["metadata"][1]  # the release's newest production level
        assert f'"name":"metadata.version","minSupportedVersion":7,"maxSupportedVersion":{newest}' in record
        assert "Our registration has been persisted to the metadata log" in wait_for(
            lambda: "persisted to the metadata log" in ctl.log_text() and ctl.log_text(), 60,
            "Kafka's ControllerRegistrationManager to see its record")

        # DescribeCluster from the registrations: on our node and on Kafka's, which
        # replayed the same committed records from us.
        both = {1: f"127.0.0.1:{node.port}", 2: f"127.0.0.1:{ctl.port}"}
        assert list_endpoints(node.bootstrap) == both
        assert wait_for(lambda: list_endpoints(ctl.bootstrap) == both, 60, "Kafka's DescribeCluster")
        status = quorum_status(node.bootstrap)
        assert status["LeaderId"] == "1" and '"id": 2' in status["CurrentObservers"]
    finally:
        ctl.close()
        node.kill()


def _paused(node: OurNode):
    class Pause:
        def __enter__(self):
            os.killpg(node.proc.pid, signal.SIGSTOP)

        def __exit__(self, *exc):
            os.killpg(node.proc.pid, signal.SIGCONT)
    return Pause()


@pytest.mark.slow  # a variant: the mixed quorum grown by Kafka's tool
def test_kafka_add_controller_makes_our_observer_a_voter(tmp_path):
    (tmp_path / "ours").mkdir()
    ctl = KafkaController(tmp_path / "kafka", node_id=1)
    node = OurNode(tmp_path / "ours", node_id=2)
    try:
        ctl.start_ready(timeout=120)
        node.format_as_observer_of(ctl.bootstrap, ctl.cluster_id)
        directory_id = uuid_to_str(read_meta_properties(node.data).directory_id)
        node.start()

        def observer_caught_up():
            assert node.proc.poll() is None, node.log_tail()
            out = ctl.run_tool("kafka-metadata-quorum", "--bootstrap-controller", ctl.bootstrap,
                               "describe", "--replication", check=False).stdout
            rows = {r[0]: r for r in (line.split() for line in out.strip().splitlines()[1:])}
            return "2" in rows and rows["2"][6] == "Observer" and rows["2"][3] == "0"

        wait_for(observer_caught_up, 90, "our observer caught up")

        # Our node registers with Kafka's active controller (KIP-919), as a Kafka
        # controller would: Kafka's DescribeCluster lists it.
        want = {1: ctl.bootstrap, 2: f"127.0.0.1:{node.port}"}
        wait_for(lambda: list_endpoints(ctl.bootstrap) == want, 60, "our registration on Kafka's leader")

        added = run_tool("kafka-metadata-quorum", "--bootstrap-controller", ctl.bootstrap,
                         "--command-config", str(node.kafka_config), "add-controller", check=False,
                         timeout=90)
        assert added.returncode == 0, (added.stdout, added.stderr, node.log_tail())
        assert (f"Added controller 2 with directory id {directory_id} and endpoints: "
                f"CONTROLLER://127.0.0.1:{node.port}") in added.stdout

        def voters():
            status = quorum_status(ctl.bootstrap)
            return status if '"id": 2' in status.get("CurrentVoters", "") else None

        status = voters() or wait_for(voters, 30, "node 2 among Kafka's CurrentVoters")
        assert status["LeaderId"] == "1" and status["CurrentObservers"] == "[]"
        assert f'"directoryId": "{directory_id}"' in status["CurrentVoters"]
        assert f'"endpoints": ["CONTROLLER://127.0.0.1:{node.port}"]' in status["CurrentVoters"]
        # Our node sees the same voter set (our DescribeQuorum answers NOT_LEADER, so
        # ask through Kafka's leader) and keeps replicating: lag 0.
        wait_for(observer_caught_up_as_voter(ctl), 30, "our voter caught up")

        # Our acknowledgement counts: two voters, so while we are paused the high
        # watermark stands still (Kafka's NoOps keep coming every 500 ms), and moves
        # again after. The pause stays under Kafka's check-quorum timeout (1.5 x
        # quorum.fetch.timeout.ms = 3 s), after which the leader would resign.
        # (That the high watermark freezes shows Kafka counts our fetches: with one
        # voter of two silent, the majority is not reached.)
        def hw():
            q = describe_quorum("127.0.0.1", ctl.port)
            assert q.error_code == 0 and q.leader_id == 1, q
            return q.high_watermark

        with _paused(node):  # well under our own 2 s fetch timeout too
            time.sleep(0.2)  # let in-flight fetches land
            frozen = hw()
            time.sleep(1.2)  # two NoOp intervals
            assert hw() == frozen
        wait_for(lambda: hw() > frozen, 30, "high watermark moving again")

        # Our vote counts: kill the Kafka leader and restart it; with two voters no one
        # can be elected without the other's vote.
        epoch = describe_quorum("127.0.0.1", ctl.port).leader_epoch
        ctl.stop(graceful=False)
        ctl.start()

        def new_leader():
            for port in (ctl.port, node.port):
                try:
                    q = describe_quorum("127.0.0.1", port, timeout=1.0)
                except (OSError, ValueError):
                    continue
                if q.error_code == 0 and q.leader_epoch > epoch and q.high_watermark > 0:
                    return q
            return None

        q = wait_for(new_leader, 120, "a leader elected after the restart")
        sys.stderr.write(f"\n[mixed] after the restart: leader {q.leader_id}, epoch {q.leader_epoch} "
                         f"(was {epoch})\n")
        status = wait_for(lambda: quorum_status(f"127.0.0.1:{node.port}" if q.leader_id == 2 else ctl.bootstrap),
                          60, "describe --status after the election")
        assert status["LeaderId"] in ("1", "2")
        assert '"id": 1' in status["CurrentVoters"] and '"id": 2' in status["CurrentVoters"]
        # And the other way round: kill -9 our node and restart it with a long election
        # timeout (6 s against Kafka's 1 s), so Kafka's controller campaigns first: it
        # can only win with our PreVote and Vote grants.
        epoch = q.leader_epoch
        node.kill()
        if q.leader_id == 1:
            # Kafka won the first election: it stays leader as long as our fetches come
            # back within its check-quorum timeout (3 s), which a quick restart does.
            # Keep ours down until Kafka has resigned, so it must campaign again.
            def kafka_resigned():
                k = describe_quorum("127.0.0.1", ctl.port, timeout=1.0)
                return k.error_code != 0 or k.leader_id != 1 or k.leader_epoch > epoch

            wait_for(kafka_resigned, 30, "Kafka's leader resigning without our fetches")
        set_property(node.config, "controller.quorum.election.timeout.ms", "6000")
        node.start()
        q = wait_for(new_leader, 120, "a leader elected after our restart")
        sys.stderr.write(f"[mixed] after our restart: leader {q.leader_id}, epoch {q.leader_epoch} "
                         f"(was {epoch})\n")
        assert q.leader_id == 1, node.log_tail()
        wait_for(observer_caught_up_as_voter(ctl), 30, "our node following Kafka's new leader")

        # The restarted Kafka controller is a new incarnation: it registers again with
        # whoever is active now, and both DescribeCluster answers list both of us.
        def kafka_incarnations():
            lines = [line.replace(" ", "") for line in dumped_registrations(node.data)]
            ids = {re.search(r'"incarnationId":"([^"]+)"', line).group(1)
                   for line in lines if '"controllerId":1,' in line}
            return ids if len(ids) >= 2 else None

        wait_for(kafka_incarnations, 60, "the restarted Kafka controller's new registration", interval=1.0)
        for bootstrap in (ctl.bootstrap, f"127.0.0.1:{node.port}"):
            wait_for(lambda: list_endpoints(bootstrap) == want, 60, f"DescribeCluster on {bootstrap}")
        assert node.proc.poll() is None, node.log_tail()
    finally:
        ctl.close()
        node.kill()


def observer_caught_up_as_voter(ctl):
    def check():
        out = ctl.run_tool("kafka-metadata-quorum", "--bootstrap-controller", ctl.bootstrap,
                           "describe", "--replication", check=False).stdout
        rows = {r[0]: r for r in (line.split() for line in out.strip().splitlines()[1:])}
        return "2" in rows and rows["2"][6] == "Follower" and rows["2"][3] == "0"
    return check
