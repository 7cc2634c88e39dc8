"""The consumer-group protocol of our node (``kraft_server/api/groups``) against real
clients, over a real node process on free loopback ports:

- kafka-python 3.x ``KafkaConsumer(group_id=...)`` subscribing: FindCoordinator, JoinGroup
  (with MEMBER_ID_REQUIRED), SyncGroup, Heartbeat, OffsetCommit, OffsetFetch, LeaveGroup;
  a second member joins and leaves again.
- Apache Kafka 4.3.1's ``kafka-consumer-groups`` (``ConsumerGroupCommand``, run through the
  distribution's ``kafka-run-class`` as ``kafka-consumer-groups.sh`` runs it): ``--list``,
  ``--describe --members --verbose``, ``--describe --state``, ``--delete-offsets``,
  ``--delete``; ListGroups, DescribeGroups, FindCoordinator, OffsetFetch, OffsetDelete and
  DeleteGroups from the Java admin client.
- Kafka 4.3.1's Java consumer (the console consumer in subscribe mode) joins, and leaves
  on close; as a static member (``group.instance.id``) killed with SIGKILL it is removed
  when its session times out, or, restarted in time, takes its place back with no
  rebalance.
- Committed offsets survive ``kill -9`` and a restart of the node (they were fsync'd
  before OffsetCommit was answered), and a torn tail in their file is cut off at start.
- End to end (records consumed in a group and committed, then resumed by the next member;
  ``kafka-consumer-groups --describe`` offsets and lag; the Java console consumer and
  ``kcat -G`` in subscribe mode) needs the client listener to serve ``__cluster_metadata``
  (Metadata, ListOffsets, Fetch: another part of issue 10). Those tests skip, printing
  why, while Metadata answers UNKNOWN_TOPIC_OR_PARTITION for the topic (all of them
  passed on a trial merge with the branch that serves it).
"""
from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import threading
import time

import pytest

from tests.support.jdk import need_jdk
from tests.support.kraft_nodes import OurNode, TOPIC, _roundtrip, wait_for
from tools.kafka_dist import bin_path
from tools.kafka_dist.controller import random_cluster_id, run_tool, tool_env

kafka = pytest.importorskip("kafka")
from kafka import KafkaConsumer, TopicPartition  # noqa: E402
from kafka.structs import OffsetAndMetadata  # noqa: E402

TP = TopicPartition(TOPIC, 0)


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    ours = OurNode(tmp_path_factory.mktemp("groups"), extra=(
        # Kafka's default 3 s first-join delay only slows the test down; Kafka's own
        # integration tests set it to 0 too.
        "group.initial.rebalance.delay.ms=0",))
    ours.format_with_ours(random_cluster_id())
    ours.start()
    try:
        ours.wait_leader()
        yield ours
    finally:
        ours.kill()


def bootstrap(node) -> str:
    return f"127.0.0.1:{node.client_port}"


def consumer(node, group: str, **kw) -> KafkaConsumer:
    return KafkaConsumer(bootstrap_servers=bootstrap(node), group_id=group, enable_auto_commit=False,
                         client_id=kw.pop("client_id", "groups-test"),
                         session_timeout_ms=10000, heartbeat_interval_ms=500, **kw)


def subscribed(node, group: str, **kw) -> KafkaConsumer:
    """A consumer subscribed to the topic, with the topic's metadata fetched first, so that
    a leader's first assignment already sees its partition. Otherwise that leader rejoins
    once the metadata arrives, and when that rejoin finishes after a poll has timed out,
    kafka-python 3.0.12 stays in REBALANCING with the join done (its join loop runs only
    while need_rejoin(), which the assignment itself made False): every commit raises
    RebalanceInProgressError and no record is fetched although the group is Stable. Seen
    on a fast machine in about a third of the runs, and in a fresh-clone run
    ("No partition metadata for topic __cluster_metadata", then no records for 60 s)."""
    c = consumer(node, group, **kw)
    try:
        assert c.partitions_for_topic(TOPIC) == {0}
        c.subscribe([TOPIC])
    except BaseException:
        c.close()
        raise
    return c


class PollingConsumer:
    """A kafka-python consumer polled continuously by its own thread, as an application
    does (one thread polling two consumers starves each one's join and heartbeats).
    ``call(fn)`` runs ``fn(consumer)`` on that thread between polls."""

    def __init__(self, node, group: str, client_id: str):
        self.consumer = subscribed(node, group, client_id=client_id)
        self._calls: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"poll-{client_id}", daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.consumer.poll(timeout_ms=50 if self.settled() else 2000)
            while not self._calls.empty():
                fn, box = self._calls.get()
                try:
                    box.put((True, fn(self.consumer)))
                except Exception as exc:  # handed back to the caller
                    box.put((False, exc))

    def settled(self) -> bool:
        """Whether the member itself has finished its last join. kafka-python 3.0.12 loses a
        JoinGroup/SyncGroup round that completes between two polls: the next poll finds the
        round done and sends a fresh JoinGroup, and a leader's JoinGroup in a Stable group
        starts a new generation (Kafka does the same). With 50 ms polls on a loaded machine
        that repeats for as long as the load lasts (each round waits for the other member's
        next heartbeat), so while a round is in flight the poll waits long enough for it."""
        coordinator = self.consumer._coordinator
        return coordinator.generation_if_stable() is not None and not coordinator.need_rejoin()

    def call(self, fn, timeout: float = 60.0):
        box: queue.Queue = queue.Queue()
        self._calls.put((fn, box))
        ok, value = box.get(timeout=timeout)
        if not ok:
            raise value
        return value

    def close(self):
        """Stop polling, then close (LeaveGroup) on the caller's thread."""
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()


def commit_between_polls(c: KafkaConsumer, offsets=None, timeout: float = 60.0) -> None:
    """Commit as an application does: a commit refused because the member is rejoining
    (RebalanceInProgressError, or CommitFailedError for a generation the coordinator has
    left) is retried after the next poll, which finishes the rejoin."""
    def attempt():
        try:
            c.commit(offsets)
            return True
        except (kafka.errors.RebalanceInProgressError, kafka.errors.CommitFailedError):
            c.poll(timeout_ms=500)
            return False
    try:
        wait_for(attempt, timeout, "a commit in a stable generation")
    except AssertionError as exc:  # say whose view of the group is stuck: ours or the client's
        raise AssertionError(f"{exc}\n{group_views(c)}") from None


def group_views(c: KafkaConsumer) -> str:
    """The coordinator's view of c's group (DescribeGroups) beside kafka-python's own."""
    coordinator = c._coordinator  # kafka-python keeps its member state there
    mine = (f"kafka-python: state {coordinator.state}, generation {coordinator._generation.generation_id}, "
            f"member {coordinator._generation.member_id!r}, rejoin needed {coordinator.need_rejoin()}")
    try:
        from wire.messages import DescribeGroupsRequest
        port = int(c.config["bootstrap_servers"].rsplit(":", 1)[1])
        g = _roundtrip(port, DescribeGroupsRequest(groups=[coordinator.group_id]), 5).groups[0]
        ours = (f"coordinator: state {g.group_state}, members "
                f"{[m.member_id for m in g.members]}")
    except Exception as e:  # noqa: BLE001 - a diagnostic must not hide the failure
        ours = f"coordinator: DescribeGroups failed: {e!r}"
    return f"{mine}\n{ours}"


def describe(node, group: str):
    from wire.messages import DescribeGroupsRequest
    return _roundtrip(node.client_port, DescribeGroupsRequest(groups=[group]), 5).groups[0]


def stable_with(node, group: str, n: int):
    """The group's description once it is Stable with n members."""
    def check():
        g = describe(node, group)
        return g if g.group_state == "Stable" and len(g.members) == n else None
    return wait_for(check, 60, f"{group} Stable with {n} members", interval=0.05)


def consumer_groups(*args: str) -> str:
    proc = run_tool("kafka-run-class", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                    *args, check=False, timeout=120)
    assert proc.returncode == 0, f"kafka-consumer-groups {args} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines() if line.strip()]


def topic_served(node) -> str | None:
    """None when Metadata lists __cluster_metadata; otherwise why not (the skip reason)."""
    from wire.messages import MetadataRequest
    from wire.messages.metadata_request import MetadataRequestTopic
    body = _roundtrip(node.client_port, MetadataRequest(
        topics=[MetadataRequestTopic(name=TOPIC)], allow_auto_topic_creation=False), 12)
    t = body.topics[0]
    if t.error_code == 0 and t.partitions:
        return None
    return (f"the client listener does not serve {TOPIC} yet (Metadata error {t.error_code}): "
            "consuming in a group needs the topic-serving part of issue 10")


def skip_unless_served(node):
    reason = topic_served(node)
    if reason:
        print("SKIP:", reason)
        pytest.skip(reason)


# -- membership and the Java tools ------------------------------------------------------------

def test_kafka_python_members_join_sync_heartbeat_commit_and_leave(node):
    need_jdk()
    group = "kp-group"
    a = PollingConsumer(node, group, "member-a")
    b = None
    try:
        first = stable_with(node, group, 1)
        (a_id,) = [m.member_id for m in first.members]
        assert a_id.startswith("member-a-")  # the id we handed out with MEMBER_ID_REQUIRED
        assert first.protocol_type == "consumer" and first.protocol_data in ("range", "roundrobin")

        b = PollingConsumer(node, group, "member-b")
        both = stable_with(node, group, 2)
        assert sorted(m.client_id for m in both.members) == ["member-a", "member-b"]
        assert {m.client_host for m in both.members} == {"/127.0.0.1"}

        def commit_in_generation():
            # As a member, in its generation; kafka-python refuses while it is itself
            # rejoining (its leader rejoins once when its metadata settles).
            try:
                a.call(lambda c: c.commit({TP: OffsetAndMetadata(3, "from-a", -1)}))
                return True
            except (kafka.errors.RebalanceInProgressError, kafka.errors.CommitFailedError):
                return False
        wait_for(commit_in_generation, 60, "a commit in a stable generation")
        assert a.call(lambda c: c.committed(TP)) == 3

        listed = consumer_groups("--bootstrap-server", bootstrap(node), "--list")
        assert group in listed.split()
        members = table(consumer_groups("--bootstrap-server", bootstrap(node), "--describe",
                                        "--group", group, "--members"))
        assert members[0][:4] == ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID"]
        assert sorted((r[0], r[2], r[3]) for r in members[1:]) == [
            (group, "/127.0.0.1", "member-a"), (group, "/127.0.0.1", "member-b")]
        state = table(consumer_groups("--bootstrap-server", bootstrap(node), "--describe",
                                      "--group", group, "--state"))
        row = dict(zip(["GROUP", "COORDINATOR", "ID", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"],
                       state[1]))
        assert (row["STATE"], row["#MEMBERS"]) == ("Stable", "2")
        assert row["COORDINATOR"] == bootstrap(node) and row["ID"] == "(1)"

        b.close()  # LeaveGroup: a is alone again after a rebalance
        b = None
        assert [m.client_id for m in stable_with(node, group, 1).members] == ["member-a"]
        a.close()
        a = None
        g = wait_for(lambda: (lambda d: d if d.group_state == "Empty" else None)(describe(node, group)),
                     30, "the group Empty after the last member left")
        assert g.members == []  # it stays, Empty, because it has committed offsets
        state = table(consumer_groups("--bootstrap-server", bootstrap(node), "--describe",
                                      "--group", group, "--state"))
        assert state[1][4:6] == ["Empty", "0"]
    finally:
        for c in (a, b):
            if c is not None:
                c.close()


def console_consumer(node, group: str, *props: str) -> subprocess.Popen:
    """Kafka 4.3.1's console consumer in subscribe mode (no --partition): a classic group
    member (JoinGroup v9, SyncGroup v5, Heartbeat v4, LeaveGroup v5)."""
    args = [str(bin_path("kafka-console-consumer")), "--bootstrap-server", bootstrap(node),
            "--topic", TOPIC, "--group", group]
    for prop in props:
        args += ["--consumer-property", prop]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, env=tool_env(None, fast=True),
                            start_new_session=True)


def member_of(node, group: str, client_id: str):
    g = describe(node, group)
    if g.group_state == "Stable" and [m.client_id for m in g.members] == [client_id]:
        return g.members[0]
    return None


def stop_process(proc: subprocess.Popen, sig=signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def test_java_consumer_joins_and_leaves(node):
    """The Java consumer joins even though the topic has no partitions for it yet; on a
    clean close it sends LeaveGroup, so the group empties at once (its session timeout is
    Java's default 45 s, far longer than the wait)."""
    need_jdk()
    proc = console_consumer(node, "java-group")
    try:
        member = wait_for(lambda: member_of(node, "java-group", "console-consumer"), 60,
                          "the console consumer Stable in its group")
        assert member.member_id.startswith("console-consumer-") and member.group_instance_id is None
        stop_process(proc)  # SIGTERM: the consumer closes and leaves
        wait_for(lambda: describe(node, "java-group").members == [], 10, "the group empty after LeaveGroup")
    finally:
        stop_process(proc, signal.SIGKILL)


def test_java_static_member_expires_after_its_session_timeout(node):
    """KIP-345 static member (group.instance.id): killed without a word, it leaves the
    group only when its 6 s session times out (the coordinator's timer, not a request)."""
    need_jdk()
    proc = console_consumer(node, "static-group", "group.instance.id=static-1",
                            "session.timeout.ms=6000", "heartbeat.interval.ms=500")
    try:
        member = wait_for(lambda: member_of(node, "static-group", "console-consumer"), 60,
                          "the static member Stable")
        assert member.group_instance_id == "static-1" and member.member_id.startswith("static-1-")
        stop_process(proc, signal.SIGKILL)
        killed = time.monotonic()
        assert describe(node, "static-group").members != []  # still there: no LeaveGroup was sent
        wait_for(lambda: describe(node, "static-group").members == [], 30, "the session to expire")
        assert time.monotonic() - killed >= 4.0  # expired by the session timer, not at once
    finally:
        stop_process(proc, signal.SIGKILL)


def test_java_static_member_restarts_without_a_rebalance(node):
    """KIP-345: a static member restarted within its session timeout takes its old
    place under a new member id, in the same generation (no rebalance)."""
    need_jdk()
    props = ("group.instance.id=static-2", "session.timeout.ms=30000")
    first = console_consumer(node, "static-restart", *props)
    try:
        old = wait_for(lambda: member_of(node, "static-restart", "console-consumer"), 60,
                       "the static member Stable")
    finally:
        stop_process(first, signal.SIGKILL)
    second = console_consumer(node, "static-restart", *props)
    try:
        new = wait_for(lambda: (lambda m: m if m and m.member_id != old.member_id else None)(
            member_of(node, "static-restart", "console-consumer")), 60, "the restarted member")
        assert new.group_instance_id == "static-2" and new.member_id.startswith("static-2-")
        log_text = node.log_path.read_text()
        assert f"static member static-2 rejoined as {new.member_id} without a rebalance" in log_text
        assert "group static-restart: generation 2" not in log_text
    finally:
        stop_process(second, signal.SIGKILL)


def test_committed_offsets_survive_kill_and_restart(node):
    group = "restart-group"
    c = consumer(node, group)
    try:
        # Outside any generation (no subscribe): Kafka's "simple" group commit.
        c.commit({TP: OffsetAndMetadata(41, "before-restart", -1)})
        assert c.committed(TP) == 41
    finally:
        c.close()
    node.kill()  # SIGKILL: only what was fsync'd survives
    offsets = node.data / "kraft-group-offsets.log"
    whole = offsets.stat().st_size
    with open(offsets, "ab") as f:  # and a commit torn by the crash: half a frame
        f.write(b"\x00\x00\x00\x40\x12\x34")
    node.start()
    node.wait_leader()
    again = consumer(node, group)
    try:
        assert wait_for(lambda: again.committed(TP), 30, "the committed offset after restart") == 41
    finally:
        again.close()
    g = describe(node, group)
    assert (g.error_code, g.group_state) == (0, "Empty")
    assert offsets.stat().st_size == whole  # the torn tail was cut off at start
    assert "truncating a torn tail of 6 bytes" in node.log_path.read_text()


def test_kafka_consumer_groups_deletes_offsets_and_groups(node):
    """``--delete-offsets`` (OffsetDelete) and ``--delete`` (DeleteGroups) on an Empty group."""
    need_jdk()
    for group in ("delete-me", "delete-offsets"):
        c = consumer(node, group)
        try:
            c.commit({TP: OffsetAndMetadata(9, "", -1)})
        finally:
            c.close()
    out = consumer_groups("--bootstrap-server", bootstrap(node), "--delete-offsets", "--group",
                          "delete-offsets", "--topic", f"{TOPIC}:0")
    assert "Request succeeded for deleting offsets from group delete-offsets." in out, out
    assert table(out)[-1] == [TOPIC, "0", "Successful"]
    fetched = consumer(node, "delete-offsets")
    try:
        assert fetched.committed(TP) is None
    finally:
        fetched.close()
    out = consumer_groups("--bootstrap-server", bootstrap(node), "--delete", "--group", "delete-me")
    assert "Deletion of requested consumer groups ('delete-me') was successful." in out, out
    assert describe(node, "delete-me").group_state == "Dead"  # unknown again
    assert "delete-me" not in consumer_groups("--bootstrap-server", bootstrap(node), "--list").split()


def test_commit_to_another_topic_is_refused(node):
    """Only __cluster_metadata/0 takes commits (kafka-python would retry this retriable
    error until its timeout, so the request goes through our codecs)."""
    from wire.messages import OffsetCommitRequest
    from wire.messages.offset_commit_request import OffsetCommitRequestPartition as P
    from wire.messages.offset_commit_request import OffsetCommitRequestTopic as T
    body = OffsetCommitRequest(group_id="other-topic-group", topics=[
        T(name="orders", partitions=[P(partition_index=0, committed_offset=1)]),
        T(name=TOPIC, partitions=[P(partition_index=0, committed_offset=1),
                                  P(partition_index=1, committed_offset=1)])])
    answer = _roundtrip(node.client_port, body, 9)
    assert [[p.error_code for p in t.partitions] for t in answer.topics] == [[3], [0, 3]]


# -- end to end: needs the topic served on the client listener --------------------------------

def test_kafka_python_group_consumes_commits_and_the_next_member_resumes(node):
    skip_unless_served(node)
    group = "e2e-kp"
    c = subscribed(node, group, auto_offset_reset="earliest")
    try:
        got = []
        wait_for(lambda: got.extend(r.offset for rs in c.poll(timeout_ms=200).values() for r in rs)
                 or len(got) >= 3, 60, "three records")
        commit_between_polls(c)
        position = c.position(TP)
        assert c.committed(TP) == position and position > 0
    finally:
        c.close()
    d = subscribed(node, group, auto_offset_reset="earliest")
    try:
        wait_for(lambda: d.poll(timeout_ms=200) is not None and d.assignment(), 60, "an assignment")
        assert d.position(TP) >= position  # resumed at the committed offset, not the beginning
    finally:
        d.close()


def test_kafka_consumer_groups_describe_shows_offsets_and_lag(node):
    skip_unless_served(node)
    need_jdk()
    group = "describe-offsets"
    c = consumer(node, group)
    try:
        c.commit({TP: OffsetAndMetadata(1, "", -1)})
    finally:
        c.close()
    rows = table(consumer_groups("--bootstrap-server", bootstrap(node), "--describe", "--group", group))
    header, row = rows[0], dict(zip(rows[0], rows[1]))
    assert header[:6] == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG"]
    assert (row["TOPIC"], row["PARTITION"], row["CURRENT-OFFSET"]) == (TOPIC, "0", "1")
    assert int(row["LAG"]) == int(row["LOG-END-OFFSET"]) - 1


def test_java_console_consumer_subscribes_and_commits(node):
    skip_unless_served(node)
    need_jdk()
    group = "console-group"
    proc = run_tool("kafka-console-consumer", "--bootstrap-server", bootstrap(node), "--topic", TOPIC,
                    "--group", group, "--from-beginning", "--max-messages", "2",
                    "--property", "print.offset=true", "--property", "print.value=false",
                    "--timeout-ms", "60000", check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len([l for l in proc.stdout.splitlines() if l.startswith("Offset:")]) == 2
    c = consumer(node, group)
    try:
        assert (c.committed(TP) or 0) > 0  # committed on close by the console consumer
    finally:
        c.close()


def test_kcat_balanced_consumer_commits(node):
    skip_unless_served(node)
    if shutil.which("kcat") is None:
        print("SKIP: kcat is not installed (apt-get install -y kcat)")
        pytest.skip("kcat is not installed (apt-get install -y kcat)")
    group = "kcat-group"
    proc = subprocess.run(["kcat", "-b", bootstrap(node), "-G", group, "-o", "beginning", "-c", "2",
                           "-f", "%o\n", TOPIC],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.split()) == 2
    c = consumer(node, group)
    try:
        assert wait_for(lambda: c.committed(TP), 30, "kcat's committed offset") > 0
    finally:
        c.close()
