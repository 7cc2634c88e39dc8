"""Issue 39, section 3, with processes: ``add-controller --controller-id`` (our tool,
no properties file) on three of our nodes and an observer, and an AddRaftVoter whose
endpoint nobody listens on, sent by Kafka 4.4.0's own ``kafka-metadata-quorum``: our
leader and Kafka's both refuse it with REQUEST_TIMED_OUT, ours naming the endpoint.

Every process is killed in a finalizer; waits poll with deadlines.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kraft_server.log.meta_properties import MetaProperties, read_meta_properties, write_meta_properties
from wire.uuids import random_directory_id, uuid_to_str
from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import (
    FAST_QUORUM, REPO, OurNode, agreed_leader, make_quorum, our_describe_quorum, set_property, storage_format,
    wait_for,
)
from tools.kafka_dist.controller import KafkaController, random_cluster_id, run_tool
from tools.kafka_dist.ports import free_port


def _ours(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tools.metadata_quorum", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def _partition(port: int):
    return our_describe_quorum(port).topics[0].partitions[0]


def _voter_ids(port: int) -> list[int]:
    return sorted(v.replica_id for v in _partition(port).current_voters)


def _first_error_line(stderr: str) -> str:
    """Past the JVM's log4j lines and our tool's WARN lines."""
    return next((l for l in stderr.splitlines()
                 if l.strip() and not l.startswith(("[", "WARN ", "\tat ", "SLF4J"))), "")


def _quorum_and_observer(tmp_path, request):
    """Three voters of ours and node 4 fetching as an observer; (leader, node 4)."""
    cluster_id = random_cluster_id()
    nodes = make_quorum(tmp_path, "dynamic", cluster_id)
    (tmp_path / "n4").mkdir()
    new = OurNode(tmp_path / "n4", node_id=4, extra=FAST_QUORUM)
    nodes.append(new)
    for n in nodes:
        request.addfinalizer(n.kill)
    bootstrap = ",".join(n.bootstrap for n in nodes[:3])
    for path in (new.config, new.kafka_config):
        set_property(path, "controller.quorum.bootstrap.servers", bootstrap)
    storage_format(new.config, cluster_id, "--no-initial-controllers")
    for n in nodes:
        n.start()
    leader, _ = agreed_leader(nodes[:3])
    wait_for(lambda: any(o.replica_id == 4 for o in _partition(leader.port).observers),
             60, "node 4 to fetch as an observer")
    return leader, new


def test_add_controller_by_id_needs_no_properties_file(tmp_path, request):
    leader, new = _quorum_and_observer(tmp_path, request)
    directory = uuid_to_str(read_meta_properties(new.data).directory_id)
    boot = ("--bootstrap-controller", leader.bootstrap)

    out = _ours(*boot, "add-controller", "--controller-id", "9")
    assert out.returncode == 1
    assert out.stderr.startswith("Controller 9 is not an observer of the quorum (observers: 4): "), out.stderr

    # Node 4 registers (KIP-919) once it has caught up: until then the tool says so.
    def dry_run():
        done = _ours(*boot, "add-controller", "-i", "4", "--dry-run")
        assert done.returncode == 0 or "Controller 4 is not registered" in done.stderr, done.stderr
        return done if done.returncode == 0 else None
    out = wait_for(dry_run, 60, "node 4's registration")
    line = (f"controller 4 with directory id {directory} and endpoints: CONTROLLER://127.0.0.1:{new.port}")
    assert out.stdout == f"DRY RUN of adding {line}\n"
    assert _voter_ids(leader.port) == [1, 2, 3]

    started = time.monotonic()
    out = _ours(*boot, "add-controller", "--controller-id", "4")
    took = time.monotonic() - started
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n{leader.log_tail()}"
    assert out.stdout == f"Added {line}\n"
    assert _voter_ids(leader.port) == [1, 2, 3, 4]
    print(f"add-controller --controller-id 4 took {took:.2f} s (interpreter start-up included)")

    out = _ours(*boot, "add-controller", "-i", "4")
    assert out.returncode == 1 and out.stderr == f"Controller 4 is already a voter (directory id {directory})\n"


def _dead_endpoint_config(node: OurNode, port: int):
    """Node 4's properties with ``advertised.listeners`` at a port nobody listens on."""
    path = node.workdir / "dead.properties"
    path.write_text(node.kafka_config.read_text())
    set_property(path, "advertised.listeners", f"CONTROLLER://127.0.0.1:{port}")
    return path


@pytest.mark.java
def test_kafkas_tool_gets_a_clear_refusal_for_an_unreachable_endpoint(tmp_path, request):
    need_jdk()
    leader, new = _quorum_and_observer(tmp_path, request)
    directory = uuid_to_str(read_meta_properties(new.data).directory_id)
    dead = free_port()
    started = time.monotonic()
    out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", leader.bootstrap,
                   "--command-config", str(_dead_endpoint_config(new, dead)), "add-controller",
                   timeout=120, check=False)
    took = time.monotonic() - started
    assert out.returncode == 1, out.stdout + out.stderr
    assert _first_error_line(out.stderr) == (
        f"org.apache.kafka.common.errors.TimeoutException: Aborted add voter operation for controller 4 "
        f"(directory id {directory}) since API_VERSIONS to its endpoint failed: the connection to "
        f"CONTROLLER://127.0.0.1:{dead} was refused or closed. Voters must reach each other: "
        f"check that controller 4 is running and that its advertised.listeners give an address the "
        f"controllers can reach"), out.stderr
    assert _voter_ids(leader.port) == [1, 2, 3]
    assert all(v.replica_id != 4 for v in _partition(leader.port).current_voters)
    print(f"refused in {took:.2f} s (JVM start-up included)")

    # Kafka's ordinary form, with the node's real properties, still adds it.
    out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", leader.bootstrap,
                   "--command-config", str(new.kafka_config), "add-controller", timeout=120, check=False)
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n{leader.log_tail()}"
    assert f"Added controller 4 with directory id {directory}" in out.stdout, out.stdout
    assert _voter_ids(leader.port) == [1, 2, 3, 4]


@pytest.mark.java
def test_on_kafkas_quorum_an_unreachable_endpoint_and_add_controller_by_id(tmp_path, request):
    """Kafka 4.4.0's leader, standalone, and a Kafka observer. First what Kafka's leader
    answers to an endpoint nobody listens on (read in AddVoterHandler: ApiVersions to
    the default listener; a refused connection is BROKER_NOT_AVAILABLE, the change
    REQUEST_TIMED_OUT). Then our ``add-controller --controller-id`` adds the observer:
    Kafka's controllers report its registration as ours do."""
    need_jdk()
    leader = KafkaController(tmp_path / "k1", node_id=1)
    request.addfinalizer(leader.close)
    leader.start_ready(timeout=120)
    observer = KafkaController(tmp_path / "k2", node_id=2, cluster_id=leader.cluster_id,
                               format_mode="no-initial-controllers", bootstrap_servers=leader.bootstrap)
    request.addfinalizer(observer.close)
    observer.start()

    # A controller 9 that never ran: a metadata directory with a directory id, an
    # endpoint nobody listens on.
    data = tmp_path / "n9"
    data.mkdir()
    write_meta_properties(data, MetaProperties(cluster_id=leader.cluster_id, node_id=9,
                                               directory_id=random_directory_id()))
    dead = free_port()
    props = tmp_path / "n9.properties"
    props.write_text("\n".join([
        "process.roles=controller", "node.id=9", "controller.listener.names=CONTROLLER",
        f"listeners=CONTROLLER://127.0.0.1:{dead}", "listener.security.protocol.map=CONTROLLER:PLAINTEXT",
        f"metadata.log.dir={data}", ""]))
    out = run_tool("kafka-metadata-quorum", "--bootstrap-controller", leader.bootstrap,
                   "--command-config", str(props), "add-controller", timeout=120, check=False)
    assert out.returncode == 1, out.stdout + out.stderr
    line = _first_error_line(out.stderr)
    print(f"Kafka 4.4.0's leader: {line}")
    # Kafka's own words, typo included: no endpoint, no reason beyond the error name.
    assert line == ("org.apache.kafka.common.errors.TimeoutException: Aborted add voter operation for since "
                    "API_VERSIONS returned an error BROKER_NOT_AVAILABLE"), out.stderr
    assert _voter_ids(leader.port) == [1]

    boot = ("--bootstrap-controller", leader.bootstrap)
    directory = (observer.data_dir / "meta.properties").read_text().split("directory.id=")[1].split()[0]

    def added():
        done = _ours(*boot, "add-controller", "-i", "2")
        assert done.returncode == 0 or "Controller 2 is not" in done.stderr, done.stderr
        return done if done.returncode == 0 else None
    out = wait_for(added, 120, "Kafka's observer 2 to fetch and register")
    assert out.stdout == (f"Added controller 2 with directory id {directory} and endpoints: "
                          f"CONTROLLER://{observer.bootstrap}\n")
    assert _voter_ids(leader.port) == [1, 2]


def _advertised_port(leader: OurNode, node_id: int) -> int:
    """Voter ``node_id``'s CONTROLLER port in the leader's voter set (DescribeQuorum Nodes)."""
    [node] = [n for n in our_describe_quorum(leader.port).nodes if n.node_id == node_id]
    return next(l.port for l in node.listeners if l.name == "CONTROLLER")


def test_a_voter_restarted_with_an_unreachable_advertised_endpoint_keeps_its_old_one(tmp_path, request):
    """KAFKA-20661 itself: Kafka 4.4.0's leader writes the endpoint of a voter's
    UpdateRaftVoter unchecked; ours first reaches it there. A voter restarted with an
    advertised port nobody listens on is refused (it asks again every fetch timeout),
    and keeps the endpoint that works; restarted on a new port it does listen on, the
    update is written."""
    nodes = make_quorum(tmp_path, "dynamic", random_cluster_id())
    for n in nodes:
        request.addfinalizer(n.kill)
        n.start()
    leader, _ = agreed_leader(nodes)
    voter = next(n for n in nodes if n is not leader)
    old_port, dead = voter.port, free_port()
    voter.stop()
    set_property(voter.config, "advertised.listeners", f"CONTROLLER://127.0.0.1:{dead}")
    voter.start()

    def asked(times: int) -> bool:
        return leader.log_path.read_text(errors="replace").count("received UpdateRaftVoterRequest") >= times
    before = leader.log_path.read_text(errors="replace").count("received UpdateRaftVoterRequest")
    wait_for(lambda: asked(before + 3) or _advertised_port(leader, voter.node_id) != old_port,
             60, "the voter to ask three times")
    assert _advertised_port(leader, voter.node_id) == old_port  # the dead port was never written
    assert voter.proc.poll() is None

    voter.stop()
    new_port = free_port()
    set_property(voter.config, "advertised.listeners", f"CONTROLLER://127.0.0.1:{new_port}")
    set_property(voter.config, "listeners",
                 f"CONTROLLER://127.0.0.1:{new_port},CLIENT://127.0.0.1:{voter.client_port}")
    voter.start()
    wait_for(lambda: _advertised_port(leader, voter.node_id) == new_port, 60, "the update to be written")
