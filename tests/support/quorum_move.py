"""Moving a live cluster's controller quorum (issue 39): Kafka's controllers as a dynamic
quorum, brokers on them, the rolling restart that points the brokers at the new
controllers, and what is checked afterwards in the metadata log (fencing, offline
partitions) and in the producer's acknowledgements (the longest gap)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from kraft_server.controller.image import records as rec
from kraft_server.controller.image.brokers import FENCE
from tests.interop.test_kafka_brokers_mixed_quorum import image_of
from tests.support.kafka_brokers import bootstrap_servers, start_brokers
from tests.support.kraft_nodes import REPO, agreed_leader, read_batches, wait_for
from tests.support.replication_run import check, finish
from tests.support.verifiable import VerifiableConsumer, VerifiableProducer
from tools.kafka_dist.controller import KafkaController, free_port, run_tool
from tools.metadata_quorum.brokers import fetching_observers
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


def kafka_quorum(tmp: Path, cluster_id: str, ids=(1, 2, 3)) -> tuple[list[KafkaController], dict[int, str]]:
    """Kafka controllers ``ids`` formatted as one dynamic quorum (``--initial-controllers``),
    not started; and their directory ids."""
    ports = {i: free_port() for i in ids}
    dirs = {i: uuid_to_str(random_directory_id()) for i in ids}
    voters = ",".join(f"{i}@127.0.0.1:{p}:{dirs[i]}" for i, p in ports.items())
    bootstrap = addresses(ports.values())
    ctls = [KafkaController(tmp / f"kafka{i}", node_id=i, port=p, cluster_id=cluster_id,
                            format_mode="initial-controllers", initial_controllers=voters,
                            bootstrap_servers=bootstrap, overrides=KAFKA_FAST) for i, p in ports.items()]
    return ctls, dirs


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
    inside = sorted(t for t in times if (start_ms is None or t >= start_ms) and (end_ms is None or t <= end_ms))
    edges = ([start_ms] if start_ms is not None else []) + inside + ([end_ms] if end_ms is not None else [])
    return max((b - a for a, b in zip(edges, edges[1:])), default=0)


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
    ``controller.quorum.bootstrap.servers=controllers`` and started again; the next one
    only once it is registered anew, unfenced, and every ISR of ``topic`` is full
    (read from ``node``'s log), so that no partition goes below two in-sync replicas."""
    ids = [b.node_id for b in brokers]
    for b in brokers:
        epoch = image_of(node).brokers.get(b.node_id).epoch
        b.stop(graceful=True, timeout=60)
        b.controllers = controllers
        b.start()

        def back(b=b, epoch=epoch):
            assert b.running, b.log_tail()
            now = image_of(node).brokers.get(b.node_id)
            return now is not None and now.epoch > epoch and healthy(node, ids, topic)
        wait_for(back, timeout, f"broker {b.node_id} back on {controllers} with every ISR full", interval=0.5)


def log_end(data: Path) -> int:
    """The end offset of the complete batches in a node's metadata log."""
    from wire.records import read_header
    batches = read_batches(data)
    return max((read_header(raw).next_offset for raw in batches.values()), default=0)


class Controllers:
    """Three controllers of one kind ("kafka" or "ours"): the old voters (``voters=True``,
    a dynamic quorum of their own) or new observers of ``observe`` (the old voters'
    bootstrap list). ``reader`` is a node whose log holds everything from the start."""

    def __init__(self, tmp: Path, kind: str, ids, cluster_id: str, observe: str | None = None) -> None:
        from kraft_server.log.meta_properties import read_meta_properties
        from tests.support.kraft_nodes import FAST_QUORUM, OurNode, make_quorum
        self.kind, self.ids = kind, list(ids)
        if kind == "kafka" and observe is None:
            self.nodes, self.dirs = kafka_quorum(tmp, cluster_id, self.ids)
            for c in self.nodes:
                c.format()
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
                node.format_as_observer_of(observe, cluster_id)
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


def run_move(tmp_path, old_kind: str, new_kind: str, new_ids, use_kafka_tools: bool = False) -> dict:
    """The procedure from ``old_kind``'s three controllers to ``new_kind``'s (ids
    ``new_ids``), under load; the longest gaps between acknowledgements (ms)."""
    old = Controllers(tmp_path, old_kind, (1, 2, 3), CLUSTER)
    new, brokers, producer, consumer = None, [], None, None
    try:
        old.start()
        if old_kind == "kafka":
            old.nodes[0].wait_active(120)
        else:
            agreed_leader(old.nodes, 120)
        brokers = start_brokers(tmp_path, 3, CLUSTER, old.bootstrap,
                                overrides={"initial.broker.registration.timeout.ms": "180000"})
        servers = bootstrap_servers(brokers)
        new = Controllers(tmp_path, new_kind, new_ids, CLUSTER, observe=old.bootstrap)
        new.start()
        with AdminClient(old.bootstrap, controllers=True) as admin:
            wait_for(lambda: set(new_ids) | set(BROKERS) <= fetching_observers(admin.describe_quorum()), 180,
                     "the new controllers and the brokers fetching from the old leader", interval=0.5)
        reader = new.reader  # a new controller's log: everything from the start
        wait_for(lambda: sorted(b.broker_id for b in image_of(reader).brokers if not b.fenced) == BROKERS,
                 120, "three unfenced brokers")
        run_tool("kafka-topics", "--bootstrap-server", servers, "--create", "--topic", TOPIC, "--partitions", "3",
                 "--replication-factor", "3", "--config", "min.insync.replicas=2", timeout=120)
        wait_for(lambda: healthy(reader, BROKERS, TOPIC), 60, "every ISR full", interval=0.5)

        work = tmp_path / "clients"
        work.mkdir()
        consumer = VerifiableConsumer(work, servers, TOPIC, group="move-group")
        producer = TimedProducer(work, servers, TOPIC, THROUGHPUT)

        def acked_at_least(n):
            consumer.poll()
            assert producer.alive() and consumer.alive()
            return producer.num_acked() >= n
        wait_for(lambda: acked_at_least(200) and consumer.consumed, 120, "the first messages", interval=0.5)

        # the rolling restart onto the new controllers' addresses
        restart_from, restart_start = log_end(reader.data), _wall_ms()
        rolling_restart(brokers, new.bootstrap, reader, TOPIC)
        restart_to, restart_end = log_end(reader.data), _wall_ms()
        target = producer.num_acked() + 100
        wait_for(lambda: acked_at_least(target), 90, "messages after the restarts", interval=0.5)

        # the move: every broker must follow the new leader
        move_start = _wall_ms()
        if use_kafka_tools:
            with AdminClient(old.bootstrap, controllers=True) as admin:
                leader = admin.describe_quorum().leader_id
            sys.stderr.write(f"\n[move] Kafka's tools:\n{kafka_tools_move(old, new, leader)}")
            with AdminClient(new.bootstrap, controllers=True) as admin:
                wait_for(lambda: set(BROKERS) <= fetching_observers(admin.describe_quorum()), 60,
                         "every broker fetching from the new leader", interval=0.2)
        else:
            tool = subprocess.run([sys.executable, "-m", "tools.metadata_quorum", "--bootstrap-controller",
                                   old.bootstrap, "reassign", "--voters", ",".join(map(str, new_ids)),
                                   "--broker-bootstrap-server", servers],
                                  cwd=REPO, capture_output=True, text=True, timeout=600)
            sys.stderr.write(f"\n[move] reassign:\n{tool.stdout}{tool.stderr}")
            assert tool.returncode == 0, tool.stdout + tool.stderr
            assert "Brokers [100, 101, 102]: each names a voter that stays" in tool.stdout
            assert "Observers [100, 101, 102] fetch from leader" in tool.stdout
        with AdminClient(new.bootstrap, controllers=True) as admin:
            q = admin.describe_quorum()
            assert sorted(v.replica_id for v in q.voters) == list(new_ids) and q.leader_id in new_ids

        # the old controllers stopped; served past the brokers' session timeout (9 s)
        old.stop()
        stopped = _wall_ms()
        target = producer.num_acked() + 12 * THROUGHPUT
        wait_for(lambda: acked_at_least(target), 120,
                 "12 s of messages after the old controllers stopped", interval=0.5)
        move_end = _wall_ms()
        run_tool("kafka-topics", "--bootstrap-server", servers, "--create", "--topic", "after-move",
                 "--partitions", "3", "--replication-factor", "3", timeout=120)
        wait_for(lambda: healthy(reader, BROKERS, "after-move") and healthy(reader, BROKERS, TOPIC), 60,
                 "the new topic led by every broker, every ISR full", interval=0.5)

        found = finish(producer, consumer, 120)
        check(found)
        events = log_events(reader.data)
        offline = [e for e in events if e[1] == "offline"]
        assert not offline, f"partitions left without a leader: {offline}"
        outside = [e for e in events if e[1] in ("fence", "register") and e[0] >= restart_from
                   and not restart_from <= e[0] < restart_to]
        assert not outside, f"brokers fenced or registered outside their restart: {outside}"
        during = sorted({b for o, what, b in events if what == "register" and restart_from <= o < restart_to})
        assert during == BROKERS, f"each broker restarted once, re-registering: {during}"

        gaps = {"restarts": longest_gap_ms(producer.ack_times, restart_start, restart_end),
                "move": longest_gap_ms(producer.ack_times, move_start, stopped),
                "after the old controllers stopped": longest_gap_ms(producer.ack_times, stopped, move_end)}
        sys.stderr.write(f"[move] {old_kind} -> {new_kind}: {len(found['acked'])} acknowledged, all consumed; "
                         f"longest gap between acknowledgements (ms): {gaps}\n")
        return gaps
    finally:
        for tool_proc in (producer, consumer):
            if tool_proc is not None:
                tool_proc.close()
        for b in brokers:
            b.close()
        for side in (old, new):
            if side is not None:
                side.close()


