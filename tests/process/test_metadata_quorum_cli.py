"""``kraft-metadata-quorum`` without servers: output formats, the add-controller
config reader, the reassignment planner and flag handling. The same outputs are
compared with Kafka's own tool on live quorums in
``tests/interop/test_metadata_quorum_cli_interop.py``."""
from __future__ import annotations

import uuid

import pytest

from kraft_server.log.meta_properties import MetaProperties, write_meta_properties
from wire.uuids import uuid_to_str
from tools.metadata_quorum import controller_config as cc
from tools.metadata_quorum.__main__ import main
from tools.metadata_quorum.client import Endpoint, QuorumInfo, Replica, _quorum_info
from tools.metadata_quorum.describe import max_follower_lag, replication_text, status_text
from tools.metadata_quorum.errors import KafkaApiError, TerseError
from tools.metadata_quorum.reassign import Refused, parse_voter_endpoint, parse_voters, plan
from wire.uuids import ZERO_UUID
from wire.messages import DescribeQuorumResponse
from wire.messages import describe_quorum_response as dq

D1, D2, D3, D4 = (uuid.UUID(int=1000 + i) for i in range(4))
NOW = 1_795_000_000_000


def replica(node_id, directory, leo, fetch=NOW, caught=NOW):
    return Replica(node_id, directory, leo, fetch, caught)


def quorum(voters, observers=(), committed=None, leader=1, nodes=None):
    nodes = nodes if nodes is not None else {
        v.replica_id: [Endpoint("CONTROLLER", "127.0.0.1", 9090 + v.replica_id)] for v in voters}
    return QuorumInfo(leader_id=leader, leader_epoch=5, high_watermark=100, voters=list(voters),
                      observers=list(observers), committed_voters=committed, nodes=nodes, version=3)


# -- describe --status ---------------------------------------------------------------------------

def test_status_text_is_kafkas_layout():
    q = quorum([replica(1, D1, 120), replica(2, D2, 118, caught=NOW - 40)],
               observers=[replica(3, D3, 90, caught=NOW - 900)])
    q.committed_voters = None  # a v2 server: Kafka's lines only
    assert status_text("abc", q).split("\n") == [
        "ClusterId:              abc",
        "LeaderId:               1",
        "LeaderEpoch:            5",
        "HighWatermark:          100",
        "MaxFollowerLag:         2",
        "MaxFollowerLagTimeMs:   40",
        'CurrentVoters:          [{"id": 1, "directoryId": "%s", "endpoints": ["CONTROLLER://127.0.0.1:9091"]}, '
        '{"id": 2, "directoryId": "%s", "endpoints": ["CONTROLLER://127.0.0.1:9092"]}]'
        % (uuid_to_str(D1), uuid_to_str(D2)),
        'CurrentObservers:       [{"id": 3, "directoryId": "%s"}]' % uuid_to_str(D3),
    ]


def test_status_shows_committed_voters_and_the_uncommitted_change():
    """KIP-853's example output: the voter being added, the voter being removed."""
    one, two, three = replica(1, D1, 50), replica(2, D2, 50), replica(3, D3, 50)
    adding = quorum([one, two, three], committed=[one, two])
    lines = status_text("c", adding).split("\n")
    assert lines[8].startswith('CommittedVoters:        [{"id": 1, ') and '"id": 3' not in lines[8]
    assert lines[9] == ('UncommittedAddedVoter:  {"id": 3, "directoryId": "%s", '
                        '"endpoints": ["CONTROLLER://127.0.0.1:9093"]}' % uuid_to_str(D3))
    assert len(lines) == 10

    removing = quorum([one, two], committed=[one, two, three])
    lines = status_text("c", removing).split("\n")
    # The removed voter is no longer in Nodes: no endpoints to show.
    assert lines[9] == 'UncommittedRemovedVoter: {"id": 3, "directoryId": "%s"}' % uuid_to_str(D3)

    settled = quorum([one, two], committed=[one, two])
    assert "Uncommitted" not in status_text("c", settled)


def test_zero_directory_id_and_ipv6_endpoints():
    q = quorum([replica(1, ZERO_UUID, 5)], nodes={1: [Endpoint("CONTROLLER", "::1", 9093)]})
    q.committed_voters = None
    assert status_text("c", q).split("\n")[6] == 'CurrentVoters:          [{"id": 1, "endpoints": ["CONTROLLER://[::1]:9093"]}]'


def test_max_follower_lag_takes_the_first_lowest_voter_like_stream_min():
    # Voter 2 comes first with the leader's LEO: Kafka's min() picks it, lag 0,
    # and the lag time is the caught-up difference, not 0.
    q = quorum([replica(2, D2, 10, caught=NOW - 7), replica(1, D1, 10)])
    assert max_follower_lag(q) == (0, 7)
    q = quorum([replica(1, D1, 10), replica(2, D2, 10, caught=NOW - 7)])
    assert max_follower_lag(q) == (0, 0)
    q = quorum([replica(1, D1, 10), replica(2, D2, 4, caught=None)])
    assert max_follower_lag(q) == (6, -1)


def test_leader_missing_from_voters_fails_as_kafkas_optional_get():
    with pytest.raises(TerseError, match="No value present"):
        status_text("c", quorum([replica(2, D2, 1)], leader=1))


# -- describe --replication ----------------------------------------------------------------------

def test_replication_table_pads_cells_and_ends_each_with_a_tab():
    q = quorum([replica(2, D2, 7, fetch=None, caught=None), replica(1, D1, 12)],
               observers=[replica(3, D3, 12, fetch=NOW - 5, caught=NOW - 5)])
    text = replication_text(q, human=False, now_ms=NOW)
    lines = text.split("\n")
    assert lines[0] == ("NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\t"
                        "LastCaughtUpTimestamp\tStatus  \t")
    assert lines[1] == f"1     \t{uuid_to_str(D1)}\t12          \t0  \t{NOW}     \t{NOW}        \tLeader  \t"
    assert lines[2].split("\t")[3:7] == ["5  ", "-1                ", "-1                   ", "Follower"]
    assert lines[3].endswith("Observer\t")
    human = replication_text(q, human=True, now_ms=NOW).split("\n")
    assert human[3].split("\t")[4].strip() == "5 ms ago"
    assert human[2].split("\t")[4].strip() == "-1"


def test_human_readable_refuses_timestamps_from_the_future():
    q = quorum([replica(1, D1, 1, fetch=NOW + 10)])
    with pytest.raises(TerseError, match="possible drift in system clock"):
        replication_text(q, human=True, now_ms=NOW)


# -- the DescribeQuorum answer, as the admin client checks it -------------------------------------

def _response(**partition):
    p = dq.PartitionData(partition_index=0, leader_id=1, leader_epoch=3, high_watermark=9,
                         current_voters=[dq.ReplicaState(replica_id=1, replica_directory_id=D1,
                                                         log_end_offset=9, last_fetch_timestamp=-1,
                                                         last_caught_up_timestamp=NOW)], **partition)
    return DescribeQuorumResponse(topics=[dq.TopicData(topic_name="__cluster_metadata", partitions=[p])],
                                  nodes=[dq.Node(node_id=1, listeners=[dq.Listener(name="CONTROLLER",
                                                                                   host="h", port=1)])])


def test_quorum_info_from_v3_and_v2_answers():
    body = _response(committed_voters=[])
    info = _quorum_info(DescribeQuorumResponse.decode(body.encode(3), 3), 3)
    assert info.committed_voters == [] and info.voters[0].last_fetch_timestamp is None
    assert info.voters[0].last_caught_up_timestamp == NOW
    assert info.nodes == {1: [Endpoint("CONTROLLER", "h", 1)]}
    body = _response()
    info = _quorum_info(DescribeQuorumResponse.decode(body.encode(2), 2), 2)
    assert info.committed_voters is None


def test_quorum_info_errors_are_kafka_exceptions():
    body = _response(error_code=6)
    with pytest.raises(KafkaApiError) as err:
        _quorum_info(body, 2)
    assert err.value.java_text().startswith("org.apache.kafka.common.errors.NotLeaderOrFollowerException: ")
    body.topics[0].topic_name = "other"
    with pytest.raises(KafkaApiError, match="received a topic with name other when __cluster_metadata"):
        _quorum_info(body, 2)


# -- add-controller's config reader ----------------------------------------------------------------

def test_controller_config_reads_id_directory_and_endpoints(tmp_path):
    write_meta_properties(tmp_path, MetaProperties(cluster_id="c", node_id=4, directory_id=D4))
    props = {"node.id": "4", "process.roles": "broker,controller", "log.dirs": f"{tmp_path},/other",
             "controller.listener.names": "controller,ctl2",
             "listeners": "CONTROLLER://:9093,CTL2://0.0.0.0:9094,PLAIN://:9092",
             "advertised.listeners": "CONTROLLER://host4:19093"}
    assert cc.controller_id(props) == 4
    assert cc.metadata_directory(props) == str(tmp_path)
    assert cc.metadata_directory_id(cc.metadata_directory(props)) == D4
    eps = cc.controller_endpoints(props)
    assert eps == [Endpoint("CONTROLLER", "host4", 19093), Endpoint("CTL2", "0.0.0.0", 9094)]
    assert cc.endpoints_text(eps) == "CONTROLLER://host4:19093, CTL2://0.0.0.0:9094"
    props["advertised.listeners"] = ""
    assert cc.controller_endpoints(props)[0] == Endpoint("CONTROLLER", "localhost", 9093)


@pytest.mark.parametrize("props, message", [
    ({"process.roles": "controller"}, "node.id not found in configuration file."),
    ({"node.id": "-1", "process.roles": "controller"}, "node.id was negative"),
    ({"node.id": "1", "process.roles": "broker"}, "process.roles did not contain 'controller'"),
    ({"node.id": "1", "process.roles": "controller", "listeners": "CONTROLLER://:1"},
     "controller.listener.names was not found."),
    ({"node.id": "1", "process.roles": "controller", "controller.listener.names": "C",
      "listeners": "D://:1"}, "Cannot find information about controller listener name: C"),
])
def test_controller_config_errors(props, message):
    with pytest.raises(TerseError, match=message):
        cc.controller_id(props)
        cc.controller_endpoints(props)


def test_metadata_directory_errors(tmp_path):
    with pytest.raises(TerseError, match="Neither metadata.log.dir nor log.dirs were found"):
        cc.metadata_directory({})
    with pytest.raises(TerseError, match=f"Unable to read meta.properties from {tmp_path}"):
        cc.metadata_directory_id(str(tmp_path))
    write_meta_properties(tmp_path, MetaProperties(cluster_id="c", node_id=4))
    with pytest.raises(TerseError, match="No directory id found in"):
        cc.metadata_directory_id(str(tmp_path))


# -- reassign's planner ----------------------------------------------------------------------------

EPS = {n: (Endpoint("CONTROLLER", "h", 9000 + n),) for n in range(10)}


def test_plan_adds_caught_up_observers_first_and_removes_the_leader_last():
    q = quorum([replica(1, D1, 50), replica(2, D2, 50), replica(3, D3, 50)],
               observers=[replica(4, D4, 50, caught=NOW - 100), replica(5, uuid.UUID(int=5), 50),
                          replica(6, uuid.UUID(int=6), 49)], leader=2)
    steps = plan(q, [4, 5, 6], EPS, max_lag_ms=1000)
    assert [(s.kind, s.replica.replica_id) for s in steps] == [
        ("add", 4), ("add", 5), ("add", 6), ("remove", 1), ("remove", 3), ("remove", 2)]
    assert steps[0].endpoints == EPS[4]
    assert plan(q, [3, 2, 1], EPS, max_lag_ms=1000) == []
    assert [(s.kind, s.replica.replica_id) for s in plan(q, [2], EPS, 1000)] == [("remove", 1), ("remove", 3)]


def test_plan_refuses_unsafe_targets_with_every_reason():
    q = quorum([replica(1, D1, 50)],
               observers=[replica(4, D4, 50, caught=NOW - 60_000), replica(5, uuid.UUID(int=5), 50, caught=None),
                          replica(6, uuid.UUID(int=6), 50), replica(6, uuid.UUID(int=66), 50),
                          replica(7, uuid.UUID(int=7), 50)])
    with pytest.raises(Refused) as err:
        plan(q, [4, 5, 6, 8, 7], {k: v for k, v in EPS.items() if k != 7}, max_lag_ms=10_000)
    text = str(err.value)
    assert "controller 4 is not a caught-up observer: it last caught up 60000 ms ago (limit 10000 ms)" in text
    assert "controller 5 is not a caught-up observer: it has never caught up" in text
    assert "controller 6 has several observer directories" in text
    assert "controller 8 is unknown" in text
    assert "cannot find the endpoint of controller 7" in text
    with pytest.raises(Refused, match="at least one controller"):
        plan(q, [], EPS, 1000)


def test_parse_voters_and_endpoints():
    assert parse_voters("4, 5,6,4") == [4, 5, 6]
    for bad, message in (("", "at least one"), (" , ", "at least one"), ("a", "Invalid controller id"),
                         ("-3", "negative")):
        with pytest.raises(Refused, match=message):
            parse_voters(bad)
    assert parse_voter_endpoint("4@controller://[::1]:9093") == (4, Endpoint("CONTROLLER", "::1", 9093))
    with pytest.raises(Refused, match="ID@NAME://HOST:PORT"):
        parse_voter_endpoint("4@host:9093")


# -- flags and exit codes ----------------------------------------------------------------------------

def test_flag_errors_exit_1(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["describe", "--status"])
    assert exit_.value.code == 1
    assert "one of the arguments --bootstrap-server --bootstrap-controller is required" in capsys.readouterr().err
    assert main(["--bootstrap-controller", "h:1", "remove-controller", "-i", "1", "-d", "x"]) == 1
    assert capsys.readouterr().err.startswith("Failed to parse --controller-directory-id: ")
    assert main(["--bootstrap-controller", "h:1", "reassign", "--voters", ""]) == 1
    assert "at least one controller" in capsys.readouterr().err


def test_unreachable_bootstrap_warns_once_then_says_what_to_check(tmp_path, capsys):
    """Issue 14, item 4: a warning naming the address and the socket error on the
    first failure (not on every retry), then one line on what to check, exit 1."""
    from tools.kafka_dist.controller import free_port
    config = tmp_path / "admin.properties"
    config.write_text("default.api.timeout.ms=600\nretry.backoff.ms=50\nretry.backoff.max.ms=50\n")
    address = f"127.0.0.1:{free_port()}"
    for flag, kind, check in (
            ("--bootstrap-controller", "bootstrap controller",
             "the controller is running and that --bootstrap-controller gives the host:port of its controller "
             "listener"),
            ("--bootstrap-server", "bootstrap server",
             "the broker is running and that --bootstrap-server gives the host:port of one of its listeners")):
        code = main([flag, address, "--command-config", str(config), "describe", "--status"])
        assert code == 1
        assert capsys.readouterr().err.splitlines() == [
            f"WARN Cannot connect to {kind} {address}: connection refused; "
            "retrying for up to 600 ms (default.api.timeout.ms)",
            f"Could not connect to any {kind} within 600 ms ({address}: connection refused): "
            f"check that {check}, reachable from this machine",
        ]


def test_socket_errors_in_plain_words():
    import errno
    import socket
    from tools.metadata_quorum.reachability import socket_error_text
    assert socket_error_text(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")) == "connection refused"
    assert socket_error_text(socket.timeout("timed out")) == "timed out"
    assert socket_error_text(TimeoutError()) == "timed out"
    assert socket_error_text(OSError(errno.ENETUNREACH, "Network is unreachable")) == "network unreachable"
    assert socket_error_text(OSError(errno.EHOSTUNREACH, "No route to host")) == "host unreachable"
    assert socket_error_text(socket.gaierror(-2, "Name or service not known")) == \
        "unknown host (Name or service not known)"
    assert socket_error_text(OSError(errno.EACCES, "Permission denied")) == "Permission denied"


def test_the_first_failure_is_reported_at_once(tmp_path):
    """With the default 60 s timeout, the warning comes within seconds, not at the end."""
    import selectors
    import subprocess
    import sys
    import time
    from tests.support.kraft_nodes import REPO
    from tools.kafka_dist.controller import free_port
    address = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen([sys.executable, "-m", "tools.metadata_quorum", "--bootstrap-controller", address,
                             "describe", "--status"], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stderr, selectors.EVENT_READ)
        # well inside the 60 s timeout, with room for the interpreter to start on a busy machine
        deadline = time.monotonic() + 30.0
        line = b""
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            if sel.select(timeout=deadline - time.monotonic()):
                chunk = proc.stderr.read1(4096)
                if not chunk:
                    break
                line += chunk
        assert line.decode().splitlines()[:1] == [
            f"WARN Cannot connect to bootstrap controller {address}: connection refused; "
            "retrying for up to 60000 ms (default.api.timeout.ms)"]
        assert proc.poll() is None  # still retrying
    finally:
        proc.kill()
        proc.wait(10)


# -- reassign's driver, on a scripted quorum ------------------------------------------------------

class ScriptedQuorum:
    """Stands in for our AdminClient: a quorum whose voter changes commit one
    DescribeQuorum later (CommittedVoters lags CurrentVoters once), and whose
    leader, once removed, hands over to the lowest remaining voter."""

    controllers = False
    bootstrap = [("127.0.0.1", 9091)]
    kraft = 1  # the kraft.version its ApiVersions finalizes

    def __init__(self, voters, observers, leader, pending_add=None):
        self.replicas = {r.replica_id: r for r in [*voters, *observers]}
        self.voters = [r.replica_id for r in voters]
        self.committed = list(self.voters)
        self.leader = leader
        if pending_add is not None:  # an uncommitted change left by an earlier run
            self.voters.append(pending_add)
        self.calls: list[tuple[str, int]] = []
        self.fail_next_add_with: int | None = None

    def describe_quorum(self):
        info = quorum([self.replicas[i] for i in self.voters],
                      observers=[r for i, r in self.replicas.items() if i not in self.voters],
                      committed=[self.replicas[i] for i in self.committed], leader=self.leader)
        self.committed = list(self.voters)  # commits by the next look
        if self.leader not in self.committed:
            self.leader = min(self.committed)
        return info

    def kraft_version(self):
        return self.kraft

    def add_raft_voter(self, voter_id, directory_id, endpoints):
        if self.fail_next_add_with is not None:
            code, self.fail_next_add_with = self.fail_next_add_with, None
            raise KafkaApiError(code)
        self.calls.append(("add", voter_id))
        self.voters.append(voter_id)

    def remove_raft_voter(self, voter_id, directory_id):
        self.calls.append(("remove", voter_id))
        self.voters.remove(voter_id)


def _reassigner(admin, target, out, force=False):
    from tools.metadata_quorum.reassign import Reassigner
    return Reassigner(admin, target, explicit_endpoints={n: EPS[n][0] for n in range(10)},
                      max_lag_ms=1000, step_timeout_ms=5000, force=force, out=out)


def test_reassign_waits_for_a_pending_change_then_steps_with_the_leader_last(monkeypatch):
    import io
    import tools.metadata_quorum.reassign as reassign
    monkeypatch.setattr(reassign, "POLL_S", 0.0)
    admin = ScriptedQuorum([replica(1, D1, 50), replica(2, D2, 50)],
                           [replica(3, D3, 50), replica(4, D4, 50)], leader=1, pending_add=3)
    out = io.StringIO()
    assert _reassigner(admin, [3, 4], out, force=True).run(dry_run=False) == 0  # 3 voters to 2
    assert admin.calls == [("add", 4), ("remove", 2), ("remove", 1)]
    lines = out.getvalue().splitlines()
    assert lines[0] == "Waiting for an uncommitted voter change (adding 3) to commit"
    assert lines[1] == "Reassigning the controller quorum from [1, 2, 3] to [3, 4] in 3 step(s):"
    assert lines[4].startswith("  Step 3 of 3: removing controller 1 ") and lines[4].endswith(", the current leader")
    assert lines[5] == ("Fault tolerance: 3 voters survive 1 failure now; 2 voters survive 0 failures after "
                        "(lower); --force given")
    assert lines[6].startswith("Step 1 of 3: adding controller 4 ")
    assert lines[6].endswith("; lag 0 records, last caught up 0 ms ago")
    assert lines[8].startswith("Step 2 of 3: removing controller 2 ")
    assert lines[10].startswith("Step 3 of 3: removing controller 1 ") and "the current leader" in lines[10]
    assert lines[-1] == "The controller quorum's voters are [3, 4]: reassignment complete."


def test_reassign_refuses_a_static_quorum_naming_the_kraft_version_upgrade(monkeypatch):
    """kraft.version 0 (controller.quorum.voters): no voter can be added or removed, so
    the tool refuses before any plan or change, with the kafka-features command that
    lifts it; a quorum already at the target needs no upgrade."""
    import io
    import tools.metadata_quorum.reassign as reassign
    monkeypatch.setattr(reassign, "POLL_S", 0.0)
    admin = ScriptedQuorum([replica(1, D1, 50), replica(2, D2, 50), replica(3, D3, 50)],
                           [replica(n, uuid.UUID(int=n), 50) for n in (4, 5, 6)], leader=1)
    admin.kraft = 0
    out = io.StringIO()
    for dry_run in (True, False):
        with pytest.raises(Refused) as err:
            _reassigner(admin, [4, 5, 6], out).run(dry_run=dry_run)
        assert str(err.value) == (
            "Refusing to reassign: the controller quorum is static (kraft.version 0, its voters set by "
            "controller.quorum.voters), and voters can be added or removed only at kraft.version 1 (KIP-853). "
            "Upgrade it first, with Kafka 4.1 or later on every controller, then run this command again:\n"
            "  kafka-features --bootstrap-controller 127.0.0.1:9091 upgrade --feature kraft.version=1\n"
            "(docs/operations/migrate.md, step 1)")
    assert admin.calls == [] and out.getvalue() == ""
    assert _reassigner(admin, [1, 2, 3], out).run(dry_run=False) == 0
    assert out.getvalue() == "The controller quorum's voters are [1, 2, 3]: nothing to do.\n"
    admin.kraft = 1
    assert _reassigner(admin, [4, 5, 6], out, force=True).run(dry_run=False) == 0
    assert admin.calls == [("add", 4), ("add", 5), ("add", 6), ("remove", 2), ("remove", 3), ("remove", 1)]


def test_reassign_retries_a_busy_leader_and_resumes_from_the_current_state(monkeypatch):
    import io
    import tools.metadata_quorum.reassign as reassign
    monkeypatch.setattr(reassign, "POLL_S", 0.0)
    admin = ScriptedQuorum([replica(1, D1, 50)], [replica(2, D2, 50)], leader=1)
    admin.fail_next_add_with = 7  # REQUEST_TIMED_OUT: the leader was busy
    assert _reassigner(admin, [1, 2], io.StringIO()).run(dry_run=False) == 0
    assert admin.calls == [("add", 2)]
    out = io.StringIO()
    assert _reassigner(admin, [2, 1], out).run(dry_run=False) == 0  # rerun: nothing left
    assert out.getvalue() == "The controller quorum's voters are [1, 2]: nothing to do.\n"
    admin.fail_next_add_with = 42  # INVALID_REQUEST is not retried
    admin.replicas[3] = replica(3, D3, 50)
    with pytest.raises(KafkaApiError, match="InvalidRequestException"):
        _reassigner(admin, [1, 2, 3], io.StringIO()).run(dry_run=False)


# -- fault tolerance (issue 14, item 1) and step wording (item 3) --------------------------------------

@pytest.mark.parametrize("before, after, tolerance, reason", [
    (3, 1, "3 voters survive 1 failure now; 1 voter survives 0 failures after (lower)",
     "Refusing to shrink the controller quorum from 3 voters to 1: fewer than 3 voters survive 0 failures "
     "instead of 1; pass --force to do it anyway"),
    (5, 3, "5 voters survive 2 failures now; 3 voters survive 1 failure after (lower)",
     "Refusing to lower the controller quorum's fault tolerance from 2 failures to 1 (5 voters to 3); "
     "pass --force to do it anyway"),
    (3, 4, "3 voters survive 1 failure now; 4 voters survive 1 failure after (unchanged)", None),
    (4, 3, "4 voters survive 1 failure now; 3 voters survive 1 failure after (unchanged)", None),
    (1, 3, "1 voter survives 0 failures now; 3 voters survive 1 failure after (higher)", None),
    (2, 1, "2 voters survive 0 failures now; 1 voter survives 0 failures after (unchanged)", None),
])
def test_fault_tolerance_text_and_refusals(before, after, tolerance, reason):
    from tools.metadata_quorum.reassign import fault_tolerance, tolerance_text, unsafe_reason
    assert [fault_tolerance(n) for n in range(1, 8)] == [0, 0, 1, 1, 2, 2, 3]
    assert tolerance_text(before, after) == "Fault tolerance: " + tolerance
    assert unsafe_reason(before, after) == reason


class _ToolQuorum(ScriptedQuorum):
    """A ScriptedQuorum that the command line itself opens (``with AdminClient(...)``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

    def __call__(self, bootstrap, *, controllers, config):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def _three_voters():
    return _ToolQuorum([replica(1, D1, 50), replica(2, D2, 50), replica(3, D3, 50)], [], leader=1)


def test_reassign_refuses_to_shrink_three_voters_to_one_without_force(monkeypatch, capsys):
    import tools.metadata_quorum.__main__ as cli
    import tools.metadata_quorum.reassign as reassign
    monkeypatch.setattr(reassign, "POLL_S", 0.0)
    plan_lines = [
        "  Step 1 of 2: removing controller 3 (directory id %s)" % uuid_to_str(D3),
        "  Step 2 of 2: removing controller 1 (directory id %s), the current leader" % uuid_to_str(D1),
        "Fault tolerance: 3 voters survive 1 failure now; 1 voter survives 0 failures after (lower)",
    ]
    refusal = ("Refusing to shrink the controller quorum from 3 voters to 1: fewer than 3 voters survive "
               "0 failures instead of 1; pass --force to do it anyway\n")
    for dry_run in ([], ["--dry-run"]):
        admin = _three_voters()
        monkeypatch.setattr(cli, "AdminClient", admin)
        assert main(["--bootstrap-controller", "h:1", "reassign", "--voters", "2", *dry_run]) == 1
        out, err = capsys.readouterr()
        head = "DRY RUN of reassigning" if dry_run else "Reassigning"
        assert out.splitlines() == [f"{head} the controller quorum from [1, 2, 3] to [2] in 2 step(s):", *plan_lines]
        assert err == refusal
        assert admin.calls == []

    admin = _three_voters()  # --dry-run --force: the same plan, accepted, nothing done
    monkeypatch.setattr(cli, "AdminClient", admin)
    assert main(["--bootstrap-controller", "h:1", "reassign", "--voters", "2", "--dry-run", "--force"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == plan_lines[-1] + "; --force given" and err == "" and admin.calls == []

    admin = _three_voters()
    monkeypatch.setattr(cli, "AdminClient", admin)
    assert main(["--bootstrap-controller", "h:1", "reassign", "--voters", "2", "--force"]) == 0
    assert admin.calls == [("remove", 3), ("remove", 1)]
    assert capsys.readouterr().out.splitlines()[-1] == "The controller quorum's voters are [2]: reassignment complete."


def test_reassign_keeping_fault_tolerance_needs_no_force(monkeypatch, capsys):
    import tools.metadata_quorum.__main__ as cli
    import tools.metadata_quorum.reassign as reassign
    monkeypatch.setattr(reassign, "POLL_S", 0.0)
    admin = _ToolQuorum([replica(1, D1, 50), replica(2, D2, 50), replica(3, D3, 50)], [replica(4, D4, 50)], leader=2)
    monkeypatch.setattr(cli, "AdminClient", admin)
    assert main(["--bootstrap-controller", "h:1", "reassign", "--voters", "2,3,4",
                 "--voter-endpoint", "4@CONTROLLER://h:9004"]) == 0
    assert admin.calls == [("add", 4), ("remove", 1)]
    out = capsys.readouterr().out
    assert "Fault tolerance: 3 voters survive 1 failure now; 3 voters survive 1 failure after (unchanged)\n" in out


class _FakeTime:
    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds

    def time(self):
        return self.now


def test_removing_the_leader_times_the_commit_apart_from_finding_the_new_leader(monkeypatch):
    """The leader answers RemoveRaftVoter on commit (32 ms here); the tool then needs
    1 s of polls to reach the new leader: both are printed, each for what it is."""
    import io
    import tools.metadata_quorum.reassign as reassign
    clock = _FakeTime()
    monkeypatch.setattr(reassign, "time", clock)
    monkeypatch.setattr(reassign, "POLL_S", 0.0)

    class Slow(ScriptedQuorum):
        def remove_raft_voter(self, voter_id, directory_id):
            clock.now += 0.032
            super().remove_raft_voter(voter_id, directory_id)

        def describe_quorum(self):
            clock.now += 0.5  # a client retry with back-off
            return super().describe_quorum()

    admin = Slow([replica(1, D1, 50), replica(2, D2, 50), replica(3, D3, 50)], [], leader=1)
    out = io.StringIO()
    assert _reassigner(admin, [2, 3], out, force=True).run(dry_run=False) == 0
    lines = out.getvalue().splitlines()
    step = lines.index(next(x for x in lines if x.startswith("Step 1 of 1: removing controller 1 ")))
    assert lines[step + 1] == "  committed at the quorum 32 ms after the request: voters [2, 3], high watermark 100"
    assert lines[step + 2] == ("  the tool found the new leader 2 (epoch 5) 1.0 s after the request (its polling "
                               "and retry back-off included: the election itself can be quicker)")


def test_resume_hint_names_force_when_an_interrupted_add_may_have_committed(monkeypatch):
    """1 -> [2, 3] is three steps: add 2, add 3, remove 1. Interrupted while adding 3
    (sent, not yet seen committed), the quorum has 2 voters or, if the add commits,
    3, and then removing 1 lowers the fault tolerance: the hint says so."""
    import io
    import tools.metadata_quorum.reassign as reassign
    monkeypatch.setattr(reassign, "POLL_S", 0.0)

    class Interrupted(ScriptedQuorum):
        def add_raft_voter(self, voter_id, directory_id, endpoints):
            super().add_raft_voter(voter_id, directory_id, endpoints)
            if voter_id == 3:
                raise KeyboardInterrupt

    admin = Interrupted([replica(1, D1, 50)], [replica(2, D2, 50), replica(3, D3, 50)], leader=1)
    runner = _reassigner(admin, [2, 3], io.StringIO())
    with pytest.raises(KeyboardInterrupt):
        runner.run(dry_run=False)
    assert runner.done == 1 and admin.calls == [("add", 2), ("add", 3)]
    assert runner.resume_hint() == (
        "Run the same command again to resume; if adding controller 3 committed before the interruption, "
        "the quorum has 3 voters and the rerun needs --force (the removals left lower its fault tolerance).")
    runner.adding = None  # interrupted between steps instead: two voters, no --force needed
    assert runner.resume_hint() == "Run the same command again to resume."
    runner.voter_count = 3  # the add was seen committed
    assert runner.resume_hint() == ("Run the same command with --force to resume: the quorum has 3 voters now, "
                                    "so the removals left lower its fault tolerance.")


# -- brokers across a move (issue 39): their bootstrap servers before, their fetches after ----------

def test_bootstrap_problems_name_brokers_that_would_ask_only_leaving_controllers():
    from tools.metadata_quorum.brokers import bootstrap_problems, quorum_addresses
    staying = [("h", 9004), ("h", 9005)]
    configs = {
        100: {"controller.quorum.bootstrap.servers": "h:9001,h:9002", "controller.quorum.voters": ""},
        101: {"controller.quorum.bootstrap.servers": "h:9001, H:9005", "controller.quorum.voters": None},
        102: {"controller.quorum.bootstrap.servers": "", "controller.quorum.voters": "4@h:9004,1@h:9001"},
        103: {"controller.quorum.bootstrap.servers": None, "controller.quorum.voters": None},
        104: "unreachable (h:9104: connection refused)",
    }
    assert quorum_addresses(configs[102]) == [("h", 9004), ("h", 9001)]
    assert bootstrap_problems(configs, staying) == [
        "broker 100 asks only h:9001,h:9002 for the leader, none of the voters that stay",
        "broker 103 asks only nothing for the leader, none of the voters that stay",
        "broker 104: its settings could not be read: unreachable (h:9104: connection refused)",
    ]


def test_fetching_observers_are_those_the_leader_saw_lately():
    from tools.metadata_quorum.brokers import fetching_observers
    q = quorum([replica(1, D1, 50)], observers=[replica(100, ZERO_UUID, 50, fetch=NOW - 200),
                                                replica(101, ZERO_UUID, 50, fetch=NOW - 60_000),
                                                replica(102, ZERO_UUID, 50, fetch=None)])
    assert fetching_observers(q) == {100}
    assert fetching_observers(quorum([replica(1, D1, 50, caught=None)], observers=q.observers)) == set()


class _Brokers:
    """Stands in for the brokers' AdminClient: their quorum settings."""

    def __init__(self, configs):
        self.configs = configs

    def broker_configs(self, keys):
        assert keys == ["controller.quorum.bootstrap.servers", "controller.quorum.voters"]
        return self.configs


def _with_brokers(stale_after_move=False):
    """Kafka's three voters (1 leads), our observers 4, 5, 6 and brokers 100, 101 that
    fetch from the leader; ``stale_after_move``: once 1 is removed the brokers' last
    fetches stay where they were (they never find the new leader)."""
    brokers = [replica(100, ZERO_UUID, 50), replica(101, ZERO_UUID, 50)]

    class Quorum(ScriptedQuorum):
        def describe_quorum(self):
            info = super().describe_quorum()
            if stale_after_move and 1 not in self.voters:
                info.observers = [o if o.replica_id < 100 else replica(o.replica_id, ZERO_UUID, 50, fetch=NOW - 60_000)
                                  for o in info.observers]
            return info

    return Quorum([replica(1, D1, 50), replica(2, D2, 50), replica(3, D3, 50)],
                  [replica(n, uuid.UUID(int=n), 50) for n in (4, 5, 6)] + brokers, leader=1)


BROKER_CONFIGS = {100: {"controller.quorum.bootstrap.servers": "h:9001,h:9002,h:9003"},
                  101: {"controller.quorum.bootstrap.servers": "h:9004,h:9005,h:9006"}}


def test_reassign_refuses_a_move_that_strands_a_broker_unless_forced(monkeypatch):
    import io
    import tools.metadata_quorum.reassign as reassign
    from tools.metadata_quorum.reassign import Reassigner
    monkeypatch.setattr(reassign, "POLL_S", 0.0)
    admin = _with_brokers()
    runner = Reassigner(admin, [4, 5, 6], explicit_endpoints={n: EPS[n][0] for n in range(10)}, max_lag_ms=1000,
                        step_timeout_ms=5000, out=io.StringIO(), broker_admin=_Brokers(BROKER_CONFIGS))
    with pytest.raises(Refused) as err:
        runner.run(dry_run=False)
    assert str(err.value) == (
        "After this move these brokers could not find the leader:\n"
        "  broker 100 asks only h:9001,h:9002,h:9003 for the leader, none of the voters that stay\n"
        "First restart each broker, one at a time, with controller.quorum.bootstrap.servers=h:9004,h:9005,h:9006 "
        '(docs/operations/migrate.md); or pass --force to move anyway')
    assert admin.calls == []

    out = io.StringIO()
    forced = Reassigner(admin, [4, 5, 6], explicit_endpoints={n: EPS[n][0] for n in range(10)}, max_lag_ms=1000,
                        step_timeout_ms=5000, out=out, force=True, broker_admin=_Brokers(BROKER_CONFIGS))
    assert forced.run(dry_run=False) == 0
    assert admin.calls == [("add", 4), ("add", 5), ("add", 6), ("remove", 2), ("remove", 3), ("remove", 1)]
    lines = out.getvalue().splitlines()
    assert any(line.startswith("Warning: After this move these brokers could not find the leader:") for line in lines)
    assert lines[-2] == "Observers [100, 101] fetch from leader 4 (0 ms after the last step)."
    assert lines[-1] == "The controller quorum's voters are [4, 5, 6]: reassignment complete."


def test_reassign_fails_naming_the_brokers_that_do_not_follow_the_new_leader(monkeypatch):
    import io
    import tools.metadata_quorum.reassign as reassign
    from tools.metadata_quorum.reassign import Reassigner, Stranded
    clock = _FakeTime()
    monkeypatch.setattr(reassign, "time", clock)
    monkeypatch.setattr(reassign, "POLL_S", 0.5)
    out = io.StringIO()
    runner = Reassigner(_with_brokers(stale_after_move=True), [4, 5, 6],
                        explicit_endpoints={n: EPS[n][0] for n in range(10)}, max_lag_ms=1000,
                        step_timeout_ms=5000, out=out, follow_timeout_ms=10_000)
    with pytest.raises(Stranded) as err:
        runner.run(dry_run=False)
    assert out.getvalue().splitlines()[8] == (
        "Warning: observers [100, 101] (brokers?) fetch from the leader, and their "
        "controller.quorum.bootstrap.servers was not checked (pass --broker-bootstrap-server): a broker that "
        "names only controllers that leave loses the quorum when the leader leaves.")
    assert str(err.value) == (
        "The voters are [4, 5, 6], but observers [100, 101] have not fetched from leader 4 within 10 s: they do "
        "not find the new quorum. A broker asks only its controller.quorum.bootstrap.servers for the leader; "
        "restart each, one at a time, with controller.quorum.bootstrap.servers=h:9004,h:9005,h:9006 "
        '(docs/operations/migrate.md).')

# -- add-controller --controller-id (issue 39, section 3) -----------------------------------------

class _Registrations(_ToolQuorum):
    """A scripted quorum whose controllers answer DescribeCluster on the leader's
    listeners: ``registered[listener name]`` lists ``(id, host, port)``."""

    def __init__(self, voters, observers, leader, registered, nodes=None):
        super().__init__(voters, [], leader)
        self.info = quorum(voters, observers, leader=leader, nodes=nodes)
        self.registered = registered
        self.asked: list[tuple[str, int]] = []
        self.added: list[tuple] = []

    def describe_quorum(self):
        return self.info

    def registered_controllers_at(self, host, port):
        from tools.metadata_quorum.client import ClusterMetadata, NodeAddress
        self.asked.append((host, port))
        name = next(e.name for eps in self.describe_quorum().nodes.values() for e in eps
                    if (e.host, e.port) == (host, port))
        if name not in self.registered:
            raise OSError("connection refused")
        return ClusterMetadata("c", self.leader, [NodeAddress(*n) for n in self.registered[name]])

    def add_raft_voter(self, voter_id, directory_id, endpoints):
        self.added.append((voter_id, directory_id, list(endpoints)))


def _add(monkeypatch, admin, *flags):
    import tools.metadata_quorum.__main__ as cli
    monkeypatch.setattr(cli, "AdminClient", admin)
    return cli.main(["--bootstrap-controller", "127.0.0.1:9091", "add-controller", *flags])


def test_add_controller_by_id_takes_directory_and_endpoints_from_the_quorum(monkeypatch, capsys):
    two_listeners = {1: [Endpoint("CONTROLLER", "127.0.0.1", 9091), Endpoint("CTRL2", "127.0.0.1", 9191)]}
    admin = _Registrations([replica(1, D1, 50)], [replica(4, D4, 50), replica(3, D3, 50)], leader=1,
                           registered={"CONTROLLER": [(1, "127.0.0.1", 9091), (4, "10.0.0.4", 9093)],
                                       "CTRL2": [(4, "10.0.0.4", 9193)]}, nodes=two_listeners)
    assert _add(monkeypatch, admin, "--controller-id", "4") == 0
    endpoints = [Endpoint("CONTROLLER", "10.0.0.4", 9093), Endpoint("CTRL2", "10.0.0.4", 9193)]
    assert admin.added == [(4, D4, endpoints)]
    assert capsys.readouterr().out == (f"Added controller 4 with directory id {uuid_to_str(D4)} and endpoints: "
                                       "CONTROLLER://10.0.0.4:9093, CTRL2://10.0.0.4:9193\n")
    assert admin.asked == [("127.0.0.1", 9091), ("127.0.0.1", 9191)]  # the leader, on each listener
    # --dry-run changes nothing; -i/-d are the short forms, as remove-controller's.
    assert _add(monkeypatch, admin, "-i", "4", "-d", uuid_to_str(D4), "--dry-run") == 0
    assert len(admin.added) == 1
    assert capsys.readouterr().out.startswith("DRY RUN of adding controller 4 with directory id ")


@pytest.mark.parametrize("observers, flags, message", [
    ([replica(3, D3, 50)], ["-i", "4"],
     "Controller 4 is not an observer of the quorum (observers: 3): start it, formatted with "
     "--no-initial-controllers and controller.quorum.bootstrap.servers naming the voters, so that it fetches "
     "from the leader, or pass --command-config with its properties file instead of --controller-id"),
    ([replica(4, D3, 50), replica(4, D4, 50)], ["-i", "4"],
     f"Controller 4 is an observer with several directory ids ({uuid_to_str(D3)}, {uuid_to_str(D4)}): "
     "pass --controller-directory-id to say which one to add"),
    ([replica(4, D4, 50)], ["-i", "4", "-d", uuid_to_str(D3)],
     f"Controller 4 with directory id {uuid_to_str(D3)} is not an observer of the quorum (observers: 4)"),
    ([replica(1, D2, 50)], ["-i", "1"],
     f"Controller 1 is already a voter (directory id {uuid_to_str(D1)}); its observer directory "
     f"{uuid_to_str(D2)} can only join once that voter is removed (remove-controller --controller-id 1 "
     f"--controller-directory-id {uuid_to_str(D1)})"),
    ([replica(5, D4, 50)], ["-i", "5"],
     "Controller 5 is not registered: the leader's controllers report no registration (KIP-919) for it on "
     "CONTROLLER://127.0.0.1:9091. A controller registers once it has caught up, with metadata.version "
     "3.7-IV0 or later; wait for it, or pass --command-config with its properties file instead of "
     "--controller-id"),
    ([replica(4, D4, 50)], ["-i", "-2"], "Invalid negative --controller-id: -2"),
    ([replica(4, D4, 50)], ["-d", uuid_to_str(D4)], "--controller-directory-id needs --controller-id"),
    ([replica(4, D4, 50)], [],
     "You must supply the configuration file of the controller you are adding when using add-controller."),
])
def test_add_controller_by_id_refuses_with_the_reason(monkeypatch, capsys, observers, flags, message):
    admin = _Registrations([replica(1, D1, 50)], observers, leader=1,
                           registered={"CONTROLLER": [(1, "127.0.0.1", 9091), (4, "10.0.0.4", 9093)]})
    assert _add(monkeypatch, admin, *flags) == 1
    assert capsys.readouterr().err.startswith(message)
    assert admin.added == []


def test_add_controller_by_id_names_a_leader_listener_it_cannot_ask(monkeypatch, capsys):
    admin = _Registrations([replica(1, D1, 50)], [replica(4, D4, 50)], leader=1, registered={})
    assert _add(monkeypatch, admin, "-i", "4") == 1
    assert "on CONTROLLER://127.0.0.1:9091 (CONTROLLER://127.0.0.1:9091: connection refused)" \
        in capsys.readouterr().err


class _Removals:
    """An admin whose RemoveRaftVoter / UnregisterController answer with the codes given."""

    def __init__(self, remove_error=None, unregister_error=None):
        self.remove_error, self.unregister_error = remove_error, unregister_error
        self.calls = []

    def __call__(self, *args, **kwargs):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def remove_raft_voter(self, node_id, directory_id):
        self.calls.append(("remove", node_id))
        if self.remove_error:
            raise KafkaApiError(*self.remove_error)

    def unregister_controller(self, node_id):
        self.calls.append(("unregister", node_id))
        if self.unregister_error:
            raise KafkaApiError(*self.unregister_error)


@pytest.mark.parametrize("flags, remove_error, unregister_error, calls, out, err", [
    (["--unregister"], None, None, ["remove", "unregister"],
     f"Removed KRaft controller 3 with directory id {uuid_to_str(D3)}\nUnregistered KRaft controller 3\n", ""),
    ([], (127, "VoterKey 3 not found"), None, ["remove"], "",
     "org.apache.kafka.common.errors.VoterNotFoundException: VoterKey 3 not found"),
    (["--unregister"], (127, "VoterKey 3 not found"), None, ["remove"], "",
     "Failed to remove KRaft voter 3: VoterKey 3 not found. To unregister the controller from the cluster, "
     "run `kafka-cluster.sh unregister-controller --id 3`."),
    (["--unregister"], None, (136, "Controller ID 3 is not currently registered."), ["remove", "unregister"],
     f"Removed KRaft controller 3 with directory id {uuid_to_str(D3)}\n",
     # Kafka's template adds ". " after a message that ends with one: two full stops, as Java prints.
     "Failed to unregister controller 3: Controller ID 3 is not currently registered.. To unregister the "
     "controller from the cluster, run `kafka-cluster.sh unregister-controller --id 3`."),
], ids=["both", "remove-fails", "remove-fails-unregister", "unregister-fails"])
def test_remove_controller_unregister_as_kafka_4_4(monkeypatch, capsys, flags, remove_error, unregister_error,
                                                    calls, out, err):
    """Kafka 4.4.0's ``remove-controller --unregister``: remove, print, unregister, print;
    a voter not found (with the flag) or a failed unregistration names kafka-cluster's command."""
    import tools.metadata_quorum.__main__ as cli
    admin = _Removals(remove_error, unregister_error)
    monkeypatch.setattr(cli, "AdminClient", admin)
    code = cli.main(["--bootstrap-controller", "127.0.0.1:9091", "remove-controller", "-i", "3",
                     "-d", uuid_to_str(D3), *flags])
    captured = capsys.readouterr()
    assert (code, [c for c, _ in admin.calls], captured.out) == (1 if err else 0, calls, out)
    assert captured.err.splitlines()[:1] == ([err] if err else [])
