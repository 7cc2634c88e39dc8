"""Moving a live cluster's controller quorum (issue 39): Kafka's controllers (a dynamic
quorum, or a static one upgraded to kraft.version 1 on the way), brokers on them under
load, and the procedure of docs/operations/migrate.md run with the page's own commands
(:func:`documented`, so the page cannot drift from what is tested): the new controllers
as observers, the rolling restart that points the brokers at them, the voter move; then
what is checked in the metadata log (fencing, offline partitions) and in the producer's
acknowledgements (the longest gap)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from kraft_server.controller.image import records as rec
from kraft_server.controller.image.brokers import FENCE
from kraft_server.log.meta_properties import read_meta_properties
from tests.interop.test_kafka_brokers_mixed_quorum import image_of
from tests.support.doc_commands import documented_command
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import REPO, agreed_leader, read_batches, set_property, wait_for
from tests.support.replication_run import check, finish
from tests.support.verifiable import VerifiableConsumer, VerifiableProducer
from tools.kafka_dist.controller import KafkaController, free_port, run_tool
from tools.metadata_quorum.brokers import BOOTSTRAP_KEY, VOTERS_KEY, fetching_observers
from tools.metadata_quorum.client import AdminClient
from wire.records import batch_records, decode_metadata_record, walk
from wire.uuids import random_directory_id, uuid_to_str

# Kafka's controllers elect as quickly as ours do in the tests (FAST_QUORUM).
KAFKA_FAST = {"controller.quorum.election.timeout.ms": "750", "controller.quorum.fetch.timeout.ms": "1500",
              "metadata.max.idle.interval.ms": "50"}
NO_LEADER = -1
CLUSTER = "TW92ZUxpdmVDbHVzdGVyUXU"
BROKERS = [100, 101, 102]
TOPIC = "moving"
THROUGHPUT = 100  # messages a second: 9 JVMs and 3 nodes share two cores


PAGE, PROCEDURE = "operations/migrate.md", "The procedure"  # the documented commands' home


def documented(starts: str, values: dict[str, str]) -> list[str]:
    """The command of docs/operations/migrate.md's procedure that begins with ``starts``,
    with the test's values in place of the page's placeholders."""
    return documented_command(PAGE, PROCEDURE, starts, values)


def run_documented(words: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """A documented command run as written: Kafka's tools from the pinned distribution,
    ours as the console scripts ``pip install`` puts beside this interpreter."""
    if words[0].startswith("kafka-"):
        return run_tool(words[0], *words[1:], timeout=timeout, check=False)
    script = Path(sys.executable).parent / words[0]
    assert script.exists(), f"{words[0]} is not installed beside {sys.executable} (pip install -e .)"
    return subprocess.run([str(script), *words[1:]], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def kafka_quorum(tmp: Path, cluster_id: str, ids=(1, 2, 3),
                 static: bool = False) -> tuple[list[KafkaController], dict[str, str]]:
    """Kafka controllers ``ids``, not started: one dynamic quorum (``--initial-controllers``),
    or with ``static`` one set by ``controller.quorum.voters`` (kraft.version 0); and the
    quorum settings a broker of theirs starts with."""
    ports = {i: free_port() for i in ids}
    bootstrap = addresses(ports.values())
    if static:
        voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in ports.items())
        settings = {VOTERS_KEY: voters, BOOTSTRAP_KEY: ""}
        ctls = [KafkaController(tmp / f"kafka{i}", node_id=i, port=p, cluster_id=cluster_id, format_mode="static",
                                overrides={**KAFKA_FAST, **settings}) for i, p in ports.items()]
        return ctls, settings
    dirs = {i: uuid_to_str(random_directory_id()) for i in ids}
    voters = ",".join(f"{i}@127.0.0.1:{p}:{dirs[i]}" for i, p in ports.items())
    ctls = [KafkaController(tmp / f"kafka{i}", node_id=i, port=p, cluster_id=cluster_id,
                            format_mode="initial-controllers", initial_controllers=voters,
                            bootstrap_servers=bootstrap, overrides=KAFKA_FAST) for i, p in ports.items()]
    return ctls, {BOOTSTRAP_KEY: bootstrap}


def addresses(ports) -> str:
    return ",".join(f"127.0.0.1:{p}" for p in ports)


class TimedProducer(VerifiableProducer):
    """Also keeps the time (ms, the tool's clock) of every acknowledgement."""

    def __init__(self, *args, **kwargs) -> None:
        self.ack_times: list[int] = []
        super().__init__(*args, **kwargs)

    def on_event(self, event: dict) -> None:
        if event.get("name") == "producer_send_success":
            self.ack_times.append(event["timestamp"])
        super().on_event(event)


def longest_gap_ms(times: list[int], start_ms: int | None = None, end_ms: int | None = None) -> int:
    """The longest time between two acknowledgements (and from ``start_ms`` to the first,
    from the last to ``end_ms``) in the window."""
    return longest_gap(times, start_ms, end_ms)[0]


def longest_gap(times: list[int], start_ms: int | None = None, end_ms: int | None = None) -> tuple[int, int]:
    """The longest gap in the window (as :func:`longest_gap_ms`) and when it began (ms, the
    producer's clock), to line it up with the logs."""
    inside = sorted(t for t in times if (start_ms is None or t >= start_ms) and (end_ms is None or t <= end_ms))
    edges = ([start_ms] if start_ms is not None else []) + inside + ([end_ms] if end_ms is not None else [])
    return max(((b - a, a) for a, b in zip(edges, edges[1:])), default=(0, start_ms or 0))


def log_events(data: Path) -> list[tuple[int, str, int]]:
    """``(offset, what, id)`` for each record that fences a broker (``fence``), registers
    one anew (``register``, a restart), or leaves a partition without a leader
    (``offline``, the id is the partition), in a node's metadata log."""
    out = []
    for raw in read_batches(data).values():
        for info in walk(raw):
            if info.is_control:
                continue
            for i, (_, value) in enumerate(batch_records(raw, info)):
                offset = info.base_offset + i
                api_key = rec.unframe(value)[0]
                if api_key not in (rec.FENCE_BROKER_RECORD, rec.BROKER_REGISTRATION_CHANGE_RECORD,
                                   rec.REGISTER_BROKER_RECORD, rec.PARTITION_RECORD, rec.PARTITION_CHANGE_RECORD):
                    continue
                r = decode_metadata_record(value).message
                if api_key == rec.FENCE_BROKER_RECORD:
                    out.append((offset, "fence", r.id))
                elif api_key == rec.BROKER_REGISTRATION_CHANGE_RECORD and r.fenced == FENCE:
                    out.append((offset, "fence", r.broker_id))
                elif api_key == rec.REGISTER_BROKER_RECORD:
                    out.append((offset, "register", r.broker_id))
                elif api_key in (rec.PARTITION_RECORD, rec.PARTITION_CHANGE_RECORD) and r.leader == NO_LEADER:
                    out.append((offset, "offline", r.partition_id))
    return sorted(out)


def healthy(node, brokers, topic: str) -> bool:
    """In ``node``'s log: every broker registered and unfenced, every ISR of ``topic`` full."""
    img = image_of(node)
    if sorted(b.broker_id for b in img.brokers if not b.fenced) != sorted(brokers):
        return False
    parts = img.topics.by_name[topic].partitions.values()
    return all(p.leader >= 0 and sorted(p.isr) == sorted(brokers) for p in parts)


def rolling_restart(brokers, controllers: str, node, topic: str, timeout: float = 180) -> None:
    """The documented step: each broker in turn stopped (controlled shutdown), given
    ``controller.quorum.bootstrap.servers=controllers`` (and no ``controller.quorum.voters``)
    and started again; the next one only once it is registered anew, unfenced, and every
    ISR of ``topic`` is full (read from ``node``'s log), so that no partition goes below
    two in-sync replicas; then the page's under-replicated check prints nothing."""
    ids = [b.node_id for b in brokers]
    under = documented("kafka-topics --bootstrap-server <brokers> --describe --under-replicated-partitions",
                       {"<brokers>": bootstrap_servers(brokers)})
    for b in brokers:
        epoch = image_of(node).brokers.get(b.node_id).epoch
        b.stop(graceful=True, timeout=60)
        for key in (VOTERS_KEY, BOOTSTRAP_KEY):
            b.overrides.pop(key, None)
        b.controllers = controllers
        b.start()

        def back(b=b, epoch=epoch):
            assert b.running, b.log_tail()
            now = image_of(node).brokers.get(b.node_id)
            return now is not None and now.epoch > epoch and healthy(node, ids, topic)
        wait_for(back, timeout, f"broker {b.node_id} back on {controllers} with every ISR full", interval=0.5)
        out = run_documented(under)
        assert out.returncode == 0 and not out.stdout.strip(), out.stdout + out.stderr


def log_end(data: Path) -> int:
    """The end offset of the complete batches in a node's metadata log."""
    from wire.records import read_header
    batches = read_batches(data)
    return max((read_header(raw).next_offset for raw in batches.values()), default=0)


class Controllers:
    """Three controllers of one kind ("kafka" or "ours"): the old voters (a quorum of
    their own: dynamic, or with ``static`` Kafka's at kraft.version 0) or new observers of
    ``observe`` (the old voters' bootstrap list), ours formatted by the page's command.
    ``reader`` is a node whose log holds everything from the start; ``broker_settings``
    the quorum settings a broker of the old voters starts with."""

    def __init__(self, tmp: Path, kind: str, ids, cluster_id: str, observe: str | None = None,
                 static: bool = False) -> None:
        from tests.support.kraft_nodes import FAST_QUORUM, OurNode, make_quorum
        self.kind, self.ids = kind, list(ids)
        self.broker_settings: dict[str, str] = {}
        if kind == "kafka" and observe is None:
            self.nodes, self.broker_settings = kafka_quorum(tmp, cluster_id, self.ids, static)
            for c in self.nodes:
                c.format()
            self.dirs = {c.node_id: uuid_to_str(read_meta_properties(c.data_dir).directory_id) for c in self.nodes}
        elif kind == "kafka":
            self.nodes = [KafkaController(tmp / f"kafka{i}", node_id=i, cluster_id=cluster_id,
                                          format_mode="no-initial-controllers", bootstrap_servers=observe,
                                          overrides=KAFKA_FAST) for i in self.ids]
            for c in self.nodes:
                c.format()
        elif observe is None:
            assert self.ids == [1, 2, 3], "make_quorum numbers its nodes from 1"
            self.nodes = make_quorum(tmp, "dynamic", cluster_id, n=3)
        else:
            self.nodes = []
            for i in self.ids:
                (tmp / f"ours{i}").mkdir()
                node = OurNode(tmp / f"ours{i}", node_id=i, extra=FAST_QUORUM)
                for path in (node.config, node.kafka_config):
                    set_property(path, BOOTSTRAP_KEY, observe)
                out = run_documented(documented(
                    "kraft-storage format", {"<cluster id>": cluster_id, "<controller properties>": str(node.config)}))
                assert out.returncode == 0, out.stdout + out.stderr
                self.nodes.append(node)
        if kind == "ours":
            self.dirs = {n.node_id: uuid_to_str(read_meta_properties(n.data).directory_id) for n in self.nodes}
        self.bootstrap = ",".join(n.bootstrap for n in self.nodes)

    @property
    def reader(self):
        from types import SimpleNamespace
        node = self.nodes[0]
        return SimpleNamespace(data=node.data_dir) if self.kind == "kafka" else node

    def start(self) -> None:
        for n in self.nodes:
            n.start()

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()

    def close(self) -> None:
        for n in self.nodes:
            n.close() if self.kind == "kafka" else n.kill()

    def command_config(self, node_id: int) -> str:
        """The properties Kafka's ``add-controller`` reads for one of these controllers."""
        node = next(n for n in self.nodes if n.node_id == node_id)
        return str(node.config_path if self.kind == "kafka" else node.kafka_config)


def kafka_tools_move(old: Controllers, new: Controllers, leader: int) -> str:
    """Kafka's own way: ``add-controller`` for each new controller, then ``remove-controller``
    for each old one, the leader last; their output."""
    both = old.bootstrap + "," + new.bootstrap
    out = []
    for i in new.ids:
        out.append(run_tool("kafka-metadata-quorum", "--bootstrap-controller", old.bootstrap, "--command-config",
                            new.command_config(i), "add-controller", timeout=180).stdout)
    for i in [i for i in old.ids if i != leader] + [leader]:
        out.append(run_tool("kafka-metadata-quorum", "--bootstrap-controller", both, "remove-controller",
                            "--controller-id", str(i), "--controller-directory-id", old.dirs[i],
                            timeout=180).stdout)
    return "".join(out)


def _wall_ms() -> int:
    return int(time.time() * 1000)


def observers_in_describe(text: str) -> dict[int, int]:
    """``{id: lag}`` of the Observer rows of ``describe --replication [--human-readable]``."""
    rows = [line.split() for line in text.splitlines()[1:]]
    return {int(r[0]): int(r[3]) for r in rows if r and r[-1] == "Observer"}


class MoveRun:
    """One run of the documented procedure from ``old_kind``'s three controllers (ids 1,
    2, 3; with ``static`` Kafka's at kraft.version 0, upgraded on the way) to
    ``new_kind``'s (``new_ids``), under load; :meth:`run` returns the longest gaps
    between acknowledgements (ms) in each part."""

    def __init__(self, tmp: Path, old_kind: str, new_kind: str, new_ids, use_kafka_tools: bool = False,
                 static: bool = False, observe_upgrade: bool = False) -> None:
        assert not static or (old_kind == "kafka" and not use_kafka_tools), "static: Kafka's, moved by ours"
        assert static or not observe_upgrade, "only a static quorum is upgraded"
        self.tmp, self.new_kind, self.new_ids = tmp, new_kind, tuple(new_ids)
        self.use_kafka_tools, self.static, self.observe_upgrade = use_kafka_tools, static, observe_upgrade
        self.old = Controllers(tmp, old_kind, (1, 2, 3), CLUSTER, static=static)
        self.new = None
        self.brokers: list = []
        self.producer = self.consumer = None
        self.windows: dict[str, tuple[int, int]] = {}  # part -> (start, end), wall ms
        self.restart_offsets = (0, 0)  # the reader's log end before and after the restarts

    def run(self) -> dict:
        try:
            self.start_cluster()
            self.start_load()
            if self.observe_upgrade:  # ours observe the static quorum, then its upgrade
                self.start_new()
            if self.static:
                self.upgrade_kraft_version()
            if not self.observe_upgrade:
                self.start_new()
            self.restart_brokers()
            self.move()
            self.stop_old()
            return self.verify()
        finally:
            self.close()

    def values(self, *placeholders: str, **more: str) -> dict[str, str]:
        """The page's ``placeholders``, as this run fills them (a command names only some)."""
        known = {"<kafka controllers>": self.old.bootstrap, "<brokers>": self.servers}
        return {**{p: known[p] for p in placeholders}, **more}

    def start_cluster(self) -> None:
        """The old controllers, the brokers on them, the topic (read from an old
        controller's log until the new controllers take over)."""
        old = self.old
        old.start()
        if old.kind == "kafka":
            old.nodes[0].wait_active(120)
        else:
            agreed_leader(old.nodes, 120)
        self.brokers = start_brokers(self.tmp, 3, CLUSTER, old.bootstrap,
                                     overrides={"initial.broker.registration.timeout.ms": "180000",
                                                **old.broker_settings})
        self.servers = bootstrap_servers(self.brokers)
        self.reader = reader = old.reader
        wait_for(lambda: sorted(b.broker_id for b in image_of(reader).brokers if not b.fenced) == BROKERS,
                 120, "three unfenced brokers")
        run_tool("kafka-topics", "--bootstrap-server", self.servers, "--create", "--topic", TOPIC, "--partitions", "3",
                 "--replication-factor", "3", "--config", "min.insync.replicas=2", timeout=120)
        wait_for(lambda: healthy(reader, BROKERS, TOPIC), 60, "every ISR full", interval=0.5)

    def start_new(self) -> None:
        """Step 2: the new controllers as observers, caught up, as the page's
        ``describe --replication`` shows them."""
        old = self.old
        self.new = Controllers(self.tmp, self.new_kind, self.new_ids, CLUSTER, observe=old.bootstrap)
        self.new.start()
        with AdminClient(old.bootstrap, controllers=True) as admin:
            wait_for(lambda: set(self.new_ids) | set(BROKERS) <= fetching_observers(admin.describe_quorum()), 180,
                     "the new controllers and the brokers fetching from the old leader", interval=0.5)
        command = documented("kraft-metadata-quorum --bootstrap-controller <kafka controllers> describe",
                             self.values("<kafka controllers>"))
        last = []  # an observer that fetches may not have appended yet: ask again until each is caught up

        def caught_up() -> bool:
            out = run_documented(command)
            assert out.returncode == 0, out.stdout + out.stderr
            last[:] = [out.stdout]
            lags = observers_in_describe(out.stdout)
            return all(lags.get(i, 1 << 30) < 100 for i in self.new_ids)

        try:
            wait_for(caught_up, 120, "the new controllers within 100 records of the leader", interval=1)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{''.join(last)}") from None
        self.reader = reader = self.new.reader  # a new controller's log: everything from the start
        wait_for(lambda: healthy(reader, BROKERS, TOPIC), 60, "the new controllers' log: every ISR full", interval=0.5)

    def acked_at_least(self, n: int) -> bool:
        self.consumer.poll()
        assert self.producer.alive() and self.consumer.alive()
        return self.producer.num_acked() >= n

    def more_acks(self, n: int, timeout: float, what: str) -> None:
        target = self.producer.num_acked() + n
        wait_for(lambda: self.acked_at_least(target), timeout, what, interval=0.5)

    def start_load(self) -> None:
        work = self.tmp / "clients"
        work.mkdir()
        self.consumer = VerifiableConsumer(work, self.servers, TOPIC, group="move-group")
        self.producer = TimedProducer(work, self.servers, TOPIC, THROUGHPUT)
        wait_for(lambda: self.acked_at_least(200) and self.consumer.consumed, 120, "the first messages", interval=0.5)

    def upgrade_kraft_version(self) -> None:
        """Step 1 on a static quorum, under load: ``reassign`` refuses, naming the upgrade;
        the page's ``kafka-features`` upgrade, retried until Kafka's voters have all told
        their leader their directory ids (UpdateRaftVoter); then the voters carry them.
        Our observers join the upgraded quorum next (step 2), or, with ``observe_upgrade``,
        have followed since before it and must still fetch after it."""
        refused = run_documented(self.reassign_words())
        assert refused.returncode == 1, refused.stdout + refused.stderr
        upgrade = documented("kafka-features --bootstrap-controller <kafka controllers> upgrade",
                             self.values("<kafka controllers>"))
        assert f"  {' '.join(upgrade)}\n" in refused.stderr, refused.stderr
        assert not refused.stdout.strip(), refused.stdout  # refused before any plan
        start = _wall_ms()
        deadline = time.monotonic() + 120
        while True:
            out = run_documented(upgrade)
            if out.returncode == 0 or time.monotonic() > deadline:
                break
            sys.stderr.write(f"[move] kafka-features upgrade not yet: {out.stdout.strip()} {out.stderr.strip()[-300:]}\n")
            time.sleep(1)  # poll interval: a voter has not reported its directory id yet
        assert out.returncode == 0 and "kraft.version was upgraded to 1." in out.stdout, out.stdout + out.stderr
        with AdminClient(self.old.bootstrap, controllers=True) as admin:
            assert admin.kraft_version() == 1
            voters = {v.replica_id: uuid_to_str(v.directory_id) for v in admin.describe_quorum().voters}
            if self.observe_upgrade:  # ours still follow, now on kraft.version 1
                wait_for(lambda: set(self.new_ids) <= fetching_observers(admin.describe_quorum()), 60,
                         "our observers fetching after the upgrade", interval=0.5)
        assert voters == self.old.dirs, f"the voters after the upgrade {voters}, formatted {self.old.dirs}"
        self.more_acks(50, 60, "messages after the upgrade")
        self.windows["kraft.version upgrade"] = (start, _wall_ms())

    def restart_brokers(self) -> None:
        start, self.restart_offsets = _wall_ms(), (log_end(self.reader.data), 0)
        rolling_restart(self.brokers, self.new.bootstrap, self.reader, TOPIC)
        self.restart_offsets = (self.restart_offsets[0], log_end(self.reader.data))
        self.windows["restarts"] = (start, _wall_ms())
        self.more_acks(100, 90, "messages after the restarts")

    def reassign_words(self) -> list[str]:
        return documented("kraft-metadata-quorum --bootstrap-controller <kafka controllers> reassign",
                          self.values("<kafka controllers>", "<brokers>", **{"4,5,6": ",".join(map(str, self.new_ids))}))

    def move(self) -> None:
        """Every broker must follow the new leader (ours waits for it itself)."""
        old, new = self.old, self.new
        self.move_start = _wall_ms()
        if self.use_kafka_tools:
            with AdminClient(old.bootstrap, controllers=True) as admin:
                leader = admin.describe_quorum().leader_id
            sys.stderr.write(f"\n[move] Kafka's tools:\n{kafka_tools_move(old, new, leader)}")
            with AdminClient(new.bootstrap, controllers=True) as admin:
                wait_for(lambda: set(BROKERS) <= fetching_observers(admin.describe_quorum()), 60,
                         "every broker fetching from the new leader", interval=0.2)
        else:
            tool = run_documented(self.reassign_words(), timeout=600)
            sys.stderr.write(f"\n[move] reassign:\n{tool.stdout}{tool.stderr}")
            assert tool.returncode == 0, tool.stdout + tool.stderr
            assert "Brokers [100, 101, 102]: each names a voter that stays" in tool.stdout
            assert "Observers [100, 101, 102] fetch from leader" in tool.stdout
        with AdminClient(new.bootstrap, controllers=True) as admin:
            q = admin.describe_quorum()
            assert sorted(v.replica_id for v in q.voters) == list(self.new_ids) and q.leader_id in self.new_ids

    def stop_old(self) -> None:
        """The old controllers stopped; served past the brokers' session timeout (9 s),
        and a topic created through the brokers."""
        self.old.stop()
        stopped = _wall_ms()
        self.windows["move"] = (self.move_start, stopped)
        self.more_acks(12 * THROUGHPUT, 120, "12 s of messages after the old controllers stopped")
        self.windows["after the old controllers stopped"] = (stopped, _wall_ms())
        run_tool("kafka-topics", "--bootstrap-server", self.servers, "--create", "--topic", "after-move",
                 "--partitions", "3", "--replication-factor", "3", timeout=120)
        wait_for(lambda: healthy(self.reader, BROKERS, "after-move") and healthy(self.reader, BROKERS, TOPIC), 60,
                 "the new topic led by every broker, every ISR full", interval=0.5)

    def verify(self) -> dict:
        found = finish(self.producer, self.consumer, 120)
        check(found)
        events = log_events(self.reader.data)
        offline = [e for e in events if e[1] == "offline"]
        assert not offline, f"partitions left without a leader: {offline}"
        first, last = self.restart_offsets
        outside = [e for e in events if e[1] in ("fence", "register") and e[0] >= first and not first <= e[0] < last]
        assert not outside, f"brokers fenced or registered outside their restart: {outside}"
        during = sorted({b for o, what, b in events if what == "register" and first <= o < last})
        assert during == BROKERS, f"each broker restarted once, re-registering: {during}"
        found_gaps = {part: longest_gap(self.producer.ack_times, a, b) for part, (a, b) in self.windows.items()}
        gaps = {part: gap for part, (gap, _) in found_gaps.items()}
        began = {part: f"{at - self.windows[part][0]} ms in (at {at})" for part, (_, at) in found_gaps.items()}
        sys.stderr.write(f"[move] {self.old.kind}{' (static)' if self.static else ''} -> {self.new_kind}: "
                         f"{len(found['acked'])} acknowledged, all consumed; "
                         f"longest gap between acknowledgements (ms): {gaps}; each began {began}\n")
        return gaps

    def close(self) -> None:
        for tool_proc in (self.producer, self.consumer):
            if tool_proc is not None:
                tool_proc.close()
        for b in self.brokers:
            b.close()
        for side in (self.old, self.new):
            if side is not None:
                side.close()


def run_move(tmp_path, old_kind: str, new_kind: str, new_ids, use_kafka_tools: bool = False,
             static: bool = False, observe_upgrade: bool = False) -> dict:
    """The procedure from ``old_kind``'s three controllers to ``new_kind``'s (ids
    ``new_ids``), under load; the longest gaps between acknowledgements (ms)."""
    return MoveRun(tmp_path, old_kind, new_kind, new_ids, use_kafka_tools, static, observe_upgrade).run()
