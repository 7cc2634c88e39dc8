"""Dynamic-quorum scenarios (KIP-853) with our nodes as processes, each run with Apache
Kafka's real ``kafka-metadata-quorum`` (the default release's) and with ours (``python -m
tools.metadata_quorum``), while the leader commits records all the time (the nodes run
``tools/raft_load_server.py``: a load generator proposes records on the leader, and the
controller writes a NoOpRecord every 50 ms). A recorder thread notes every high
watermark and the committed bytes seen during the run; at the end every surviving voter
must hold identical bytes for every offset below the highest high watermark seen
(``tests/support/membership_cluster.py``).

(a) auto-join: node 1 ``--standalone``, 2 and 3 ``--no-initial-controllers`` with
    ``controller.quorum.auto.join.enable=true`` end as three voters;
(b) disk failure: voter 3 wiped and reformatted (new directory id) comes back as an
    observer; adding it while (3, old) is a voter is DUPLICATE_VOTER (Kafka checks the id);
    (3, old) is removed and (3, new) added;
(c) node failure: voter 3 dead, node 4 added, 3 removed;
(d) removing the current leader: another voter leads, the removed one is no voter;
(e) ``reassign --voters 4,5,6`` from (1, 2, 3) (our tool only; ~8 s, so not marked slow), with no leaderless
    window longer than twice the election timeout;
(f) two concurrent adds: the new voter of the first is paused (SIGSTOP) so the leader's
    ApiVersions probe to it hangs and the add stays pending; the second add gets Kafka's
    AddVoterHandler answer, REQUEST_TIMED_OUT "Request timed out waiting for leader to
    handle previous voter change request" (the string in kafka-raft-4.3.1.jar and 4.4.0.jar) (a TimeoutException, as each tool prints it);
    resumed, the first add succeeds;
(g) a static quorum upgraded with the real ``kafka-features ... upgrade --feature
    kraft.version=1``, then grown with add-controller.

Every process is killed in a finalizer; every wait polls with a deadline.
"""
from __future__ import annotations

import sys
import time

import pytest

from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import agreed_leader, set_property, storage_format, wait_for
from tests.support.membership_cluster import (
    ELECTION_TIMEOUT_MS, TOOLS, LoadNode, Recorder, add_controller, check_no_loss, describe,
    first_error_line, format_dynamic, format_observer, metadata_quorum, metadata_quorum_popen,
    new_node, observers_of, quorum_partition, remove_controller, status_voter_ids, voters_of, wipe,
)
from tools.kafka_dist.controller import random_cluster_id, run_tool

pytestmark = pytest.mark.java

# Kafka's own tool runs every scenario in the default suite; ours runs (a), (e) and (f) there
# and the rest in `make test-slow` (the scenarios are the same, the tool is what differs).
OURS_SLOW = ("kafka", pytest.param("ours", marks=pytest.mark.slow))


def _report(text: str) -> None:
    sys.stderr.write(f"\n[membership] {text}\n")


class Scenario:
    """Nodes (killed at teardown), the recorder, and the quorum's current view."""

    def __init__(self, root, tool: str):
        self.root, self.tool = root, tool
        self.cluster_id = random_cluster_id()
        self.nodes: dict[int, LoadNode] = {}
        self.recorder: Recorder | None = None
        self.t0 = time.monotonic()

    def node(self, node_id: int, extra: tuple[str, ...] = ()) -> LoadNode:
        n = new_node(self.root, node_id, extra)
        self.nodes[node_id] = n
        return n

    def start(self, *nodes: LoadNode) -> None:
        for n in nodes:
            n.start()

    def bootstrap(self, *ids: int) -> str:
        ids = ids or tuple(i for i, n in self.nodes.items() if n.proc is not None and n.proc.poll() is None)
        return ",".join(self.nodes[i].bootstrap for i in ids)

    def record(self, *ids: int) -> Recorder:
        self.recorder = Recorder([self.nodes[i] for i in ids]).start()
        return self.recorder

    def leader(self, ids=None, timeout: float = 90.0):
        """``(node, DescribeQuorum partition)`` of the leader among ``ids`` (live ones)."""
        def find():
            for i in ids or list(self.nodes):
                n = self.nodes[i]
                if n.proc is None or n.proc.poll() is not None:
                    continue
                part = quorum_partition(n)
                if part is not None and part.leader_id == i and part.high_watermark > 0:
                    return n, part
            return None
        return wait_for(find, timeout, f"a leader among {ids or list(self.nodes)}", interval=0.2)

    def wait_voters(self, expected: dict[int, str] | set[int], timeout: float = 90.0):
        want = expected if isinstance(expected, set) else set(expected)
        seen = []

        def ok():
            _, part = self.leader(timeout=timeout)
            got = voters_of(part)
            seen[:] = [got]
            if set(got) != want:
                return None
            if isinstance(expected, dict) and got != expected:
                return None
            return part
        try:
            return wait_for(ok, timeout, f"voters {expected}", interval=0.3)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the leader last reported voters {seen}") from None

    def wait_observer(self, node: LoadNode, timeout: float = 90.0):
        """``node`` fetches from the leader as an observer with its current directory id,
        caught up to within a few hundred records."""
        directory = node.directory_id()

        def ok():
            _, part = self.leader(timeout=timeout)
            for o in part.observers:
                if o.replica_id == node.node_id and observers_of(part)[node.node_id] == directory:
                    return part.high_watermark - o.log_end_offset < 500
            return False
        wait_for(ok, timeout, f"node {node.node_id} ({directory}) to fetch as an observer", interval=0.3)

    def more_commits(self, records: int = 40, timeout: float = 60.0) -> None:
        """The quorum keeps committing: the HWM moves ``records`` past where it is now."""
        _, part = self.leader()
        start = part.high_watermark
        wait_for(lambda: self.recorder.max_hwm >= start + records, timeout,
                 f"the high watermark to pass {start + records}", interval=0.2)

    def finish(self, survivors: list[int]) -> str:
        self.more_commits()
        self.recorder.stop()
        summary = check_no_loss(self.recorder, [self.nodes[i] for i in survivors])
        return summary

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.stop()
        for n in self.nodes.values():
            n.kill()


@pytest.fixture
def scenario(tmp_path, request):
    need_jdk()
    callspec = getattr(request.node, "callspec", None)
    tool = callspec.params.get("tool", "ours") if callspec else "ours"
    s = Scenario(tmp_path, tool)
    yield s
    s.close()
    _report(f"{request.node.name}: {time.monotonic() - s.t0:.1f}s")


def _ok(out, what: str) -> str:
    assert out.returncode == 0, f"{what} exited {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out.stdout


def _dynamic_three(s: Scenario, extra: tuple[str, ...] = ()):
    nodes = [s.node(i, extra) for i in (1, 2, 3)]
    format_dynamic(nodes, s.cluster_id)
    s.start(*nodes)
    agreed_leader(nodes, timeout=90)
    s.record(1, 2, 3)
    return nodes


def _observer(s: Scenario, node_id: int, bootstrap_ids=(1, 2, 3), extra: tuple[str, ...] = ()) -> LoadNode:
    n = s.node(node_id, extra)
    format_observer(n, s.cluster_id, s.bootstrap(*bootstrap_ids))
    return n


# -- (a) auto-join --------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", TOOLS)
def test_a_auto_join_grows_a_standalone_quorum_to_three(scenario, tool):
    s = scenario
    one = s.node(1)
    set_property(one.config, "controller.quorum.bootstrap.servers", one.bootstrap)
    set_property(one.kafka_config, "controller.quorum.bootstrap.servers", one.bootstrap)
    storage_format(one.config, s.cluster_id, "--standalone")
    s.start(one)
    s.leader([1])
    s.record(1)
    joiners = [_observer(s, i, (1,), ("controller.quorum.auto.join.enable=true",)) for i in (2, 3)]
    for n in joiners:
        s.recorder.watch(n)
    s.start(*joiners)
    expected = {n.node_id: n.directory_id() for n in (one, *joiners)}
    # Auto-join: within a few fetch timeouts (1.5 s) of catching up.
    s.wait_voters(expected, timeout=45)
    status = describe(tool, s.bootstrap(1, 2, 3))
    assert status_voter_ids(status) == [1, 2, 3], status
    for node_id, directory in expected.items():
        assert f'"id": {node_id}, "directoryId": "{directory}"' in status["CurrentVoters"], status
    _report(s.finish([1, 2, 3]))


# -- (b) disk failure -------------------------------------------------------------------------------

@pytest.mark.parametrize("tool", OURS_SLOW)
def test_b_disk_failure_replaces_the_voters_directory(scenario, tool):
    s = scenario
    _dynamic_three(s)
    three = s.nodes[3]
    old = three.directory_id()
    three.kill()
    wipe(three)
    format_observer(three, s.cluster_id, s.bootstrap(1, 2, 3))
    new = three.directory_id()
    assert new != old
    three.start()
    s.wait_observer(three)
    boot = s.bootstrap(1, 2, 3)

    dup = add_controller(tool, boot, three)
    assert dup.returncode == 1, (dup.stdout, dup.stderr)
    assert first_error_line(dup.stderr).startswith(
        "org.apache.kafka.common.errors.DuplicateVoterException: "), dup.stderr

    out = _ok(remove_controller(tool, boot, 3, old), "remove-controller")
    assert out == f"Removed KRaft controller 3 with directory id {old}\n", out
    s.wait_voters({1, 2})
    s.wait_observer(three)
    out = _ok(add_controller(tool, boot, three), "add-controller")
    assert out == (f"Added controller 3 with directory id {new} and endpoints: "
                   f"CONTROLLER://{three.bootstrap}\n"), out
    part = s.wait_voters({1: s.nodes[1].directory_id(), 2: s.nodes[2].directory_id(), 3: new})
    assert 3 not in observers_of(part)
    status = describe(tool, boot)
    assert f'"id": 3, "directoryId": "{new}"' in status["CurrentVoters"] and old not in status["CurrentVoters"]
    _report(s.finish([1, 2, 3]))


# -- (c) node failure -------------------------------------------------------------------------------

@pytest.mark.parametrize("tool", OURS_SLOW)
def test_c_node_failure_adds_4_and_removes_dead_3(scenario, tool):
    s = scenario
    _dynamic_three(s)
    four = _observer(s, 4)
    s.recorder.watch(four)
    four.start()
    three = s.nodes[3]
    old = three.directory_id()
    three.kill()
    s.wait_observer(four)
    boot = s.bootstrap(1, 2, 4)
    out = _ok(add_controller(tool, boot, four), "add-controller")
    assert out.startswith(f"Added controller 4 with directory id {four.directory_id()}"), out
    s.wait_voters({1, 2, 3, 4})
    out = _ok(remove_controller(tool, boot, 3, old), "remove-controller")
    assert out == f"Removed KRaft controller 3 with directory id {old}\n", out
    s.wait_voters({1, 2, 4})
    assert status_voter_ids(describe(tool, boot)) == [1, 2, 4]
    _report(s.finish([1, 2, 4]))


# -- (d) removing the leader ------------------------------------------------------------------------

@pytest.mark.parametrize("tool", OURS_SLOW)
def test_d_removing_the_current_leader(scenario, tool):
    s = scenario
    _dynamic_three(s)
    leader, part = s.leader()
    gone = leader.node_id
    out = _ok(remove_controller(tool, s.bootstrap(1, 2, 3), gone, leader.directory_id()), "remove-controller")
    assert out == f"Removed KRaft controller {gone} with directory id {leader.directory_id()}\n", out
    rest = [i for i in (1, 2, 3) if i != gone]
    new_leader, part = s.leader(rest, timeout=90)
    assert new_leader.node_id in rest and part.leader_epoch > 0
    s.wait_voters(set(rest))
    status = describe(tool, s.bootstrap(*rest))
    assert status_voter_ids(status) == rest and int(status["LeaderId"]) in rest, status
    _report(s.finish(rest))


# -- (e) reassign (ours only) -----------------------------------------------------------------------

def test_e_reassign_1_2_3_to_4_5_6_without_long_leaderless_windows(scenario):
    s = scenario
    _dynamic_three(s)
    recorder = s.recorder
    recorder.poll_s = 0.02
    targets = [_observer(s, i) for i in (4, 5, 6)]
    for n in targets:
        recorder.watch(n)
    s.start(*targets)
    for n in targets:
        s.wait_observer(n, timeout=120)
    before = len(recorder.leaderless)
    t = time.monotonic()
    out = _ok(metadata_quorum("ours", "--bootstrap-controller", s.bootstrap(1, 2, 3, 4, 5, 6),
                              "reassign", "--voters", "4,5,6", timeout=600), "reassign")
    took = time.monotonic() - t
    assert out.splitlines()[-1] == "The controller quorum's voters are [4, 5, 6]: reassignment complete.", out
    s.wait_voters({4, 5, 6})
    _, part = s.leader([4, 5, 6])
    assert part.leader_id in (4, 5, 6)
    summary = s.finish([4, 5, 6])
    windows = [b - a for a, b in recorder.leaderless[before:]]
    _report(f"reassign took {took:.1f}s; leaderless windows {[round(w, 2) for w in windows]}; {summary}")
    assert max(windows, default=0.0) <= 2 * ELECTION_TIMEOUT_MS / 1000, windows


# -- (f) two concurrent adds --------------------------------------------------------------------------

def _established_to(port: int) -> int:
    """ESTABLISHED TCP sockets whose local port is ``port`` (accepted or still in the
    accept queue of a stopped process)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "01" and int(fields[1].split(":")[1], 16) == port:
                count += 1
    return count


@pytest.mark.parametrize("tool", TOOLS)
def test_f_two_concurrent_adds_one_succeeds_one_is_refused(scenario, tool):
    s = scenario
    # A long pending-operation timer, so the paused add stays pending while the other runs.
    slow_ops = ("controller.quorum.request.timeout.ms=60000",)
    _dynamic_three(s, slow_ops)
    four, five = _observer(s, 4, extra=slow_ops), _observer(s, 5, extra=slow_ops)
    s.start(four, five)
    s.wait_observer(four)
    s.wait_observer(five)
    boot = s.bootstrap(1, 2, 3)
    four.pause()
    try:
        before = _established_to(four.port)
        first = metadata_quorum_popen(tool, "--bootstrap-controller", boot, "--command-config",
                                      str(four.kafka_config), "add-controller")
        try:
            # The leader's ApiVersions probe to 4 is connected (in 4's accept queue): the add is pending.
            wait_for(lambda: first.poll() is None and _established_to(four.port) > before, 120,
                     "the leader to probe node 4")
            second = add_controller(tool, boot, five)
        finally:
            four.resume()
        out, err = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(10)
    assert first.returncode == 0, (out, err)
    assert out.startswith(f"Added controller 4 with directory id {four.directory_id()}"), out
    assert second.returncode == 1, (second.stdout, second.stderr)
    line = first_error_line(second.stderr)
    assert line == ("org.apache.kafka.common.errors.TimeoutException: "
                    "Request timed out waiting for leader to handle previous voter change request"), second.stderr
    s.wait_voters({1, 2, 3, 4})
    _report(f"second add ({tool}) printed: {line}")
    _report(s.finish([1, 2, 3, 4]))


# -- (g) static quorum upgraded, then grown ---------------------------------------------------------

def _static_three_upgraded(s: Scenario) -> list[LoadNode]:
    nodes = [s.node(i) for i in (1, 2, 3)]
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.port}" for n in nodes)
    for n in nodes:
        for cfg in (n.config, n.kafka_config):
            set_property(cfg, "controller.quorum.voters", voters)
            set_property(cfg, "controller.quorum.bootstrap.servers", "")
        storage_format(n.config, s.cluster_id)
    s.start(*nodes)
    agreed_leader(nodes, timeout=90)
    s.record(1, 2, 3)
    boot = s.bootstrap(1, 2, 3)

    def upgraded():
        out = run_tool("kafka-features", "--bootstrap-controller", boot, "upgrade",
                       "--feature", "kraft.version=1", timeout=180, check=False)
        return out if out.returncode == 0 else None
    # Followers report their directory ids (UpdateRaftVoter) within a fetch timeout or two.
    out = wait_for(upgraded, 120, "kafka-features to upgrade kraft.version", interval=1.0)
    assert "kraft.version was upgraded to 1." in out.stdout, out.stdout
    s.wait_voters({1, 2, 3})
    return nodes


@pytest.mark.parametrize("tool", OURS_SLOW)
def test_g_static_quorum_upgraded_to_kraft_version_1_then_grown(scenario, tool):
    s = scenario
    _static_three_upgraded(s)
    boot = s.bootstrap(1, 2, 3)
    four = _observer(s, 4)
    s.recorder.watch(four)
    four.start()
    s.wait_observer(four)
    out = _ok(add_controller(tool, boot, four), "add-controller")
    assert out == (f"Added controller 4 with directory id {four.directory_id()} and endpoints: "
                   f"CONTROLLER://{four.bootstrap}\n"), out
    part = s.wait_voters({1, 2, 3, 4})
    assert voters_of(part)[4] == four.directory_id()
    assert status_voter_ids(describe(tool, s.bootstrap(1, 2, 3, 4))) == [1, 2, 3, 4]
    _report(s.finish([1, 2, 3, 4]))



def test_g_upgraded_voters_are_described_with_their_directory_ids(scenario):
    s = scenario
    nodes = _static_three_upgraded(s)
    s.wait_voters({n.node_id: n.directory_id() for n in nodes}, timeout=30)
    status = describe("kafka", s.bootstrap(1, 2, 3))
    for n in nodes:
        assert f'"id": {n.node_id}, "directoryId": "{n.directory_id()}"' in status["CurrentVoters"], status
