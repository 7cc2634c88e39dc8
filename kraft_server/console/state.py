"""The console's snapshot of the node: plain JSON-able data built on the event loop
from the views the API handlers read (``api/views.py``'s ``NodeView``: the quorum
as DescribeQuorum answers it), the core's voter sets, the committed metadata
image and the console's own ``Timeline``.

Building it is cheap (tens to hundreds of microseconds on a small cluster; the
image part is capped, ``MAX_TOPICS`` and ``MAX_PARTITIONS``) and each snapshot
carries ``buildMicros``, what it cost, so the cost is measured where it is paid.
"""
from __future__ import annotations

import time

from wire.uuids import uuid_to_str

from .timeline import describe_set

MAX_TOPICS = 50
MAX_PARTITIONS = 20  # per topic
MAX_BROKERS = 100


class StateBuilder:
    def __init__(self, view, core, raft_log, controller, timeline, peers: dict[int, str]):
        self.view = view  # kraft_server.shell.core_view.CoreView
        self.core = core
        self.log = raft_log
        self.controller = controller
        self.timeline = timeline
        self.peers = peers  # node id -> console URL (kraft.console.peers)

    def build(self, now_ms: int, since_seq: int = 0, since_sample_ms: int = -1) -> dict:
        """The whole snapshot; records after ``since_seq`` and chart points after
        ``since_sample_ms`` only (a page keeps the earlier ones)."""
        started = time.perf_counter()
        core, view, timeline = self.core, self.view, self.timeline
        hwm = core.high_watermark
        leader = view.leader_id()
        state = {
            "nodeId": view.node_id, "clusterId": view.cluster_id, "now": now_ms,
            "role": core.role.name, "epoch": core.epoch, "leaderId": leader,
            "leaderConsole": self.peers.get(leader), "leaderEndpoints": self._leader_endpoints(leader),
            "highWatermark": -1 if hwm is None else hwm,
            "logStartOffset": self.log.start_offset(), "logEndOffset": self.log.end_offset(),
            "kraftVersion": core.kraft_version(), "isVoter": core.is_voter(),
            "quorum": self._quorum(now_ms),
            "latestVoters": describe_set(core.voter_set()),
            "committedVoters": None if hwm is None else describe_set(core.committed_voter_set()),
            "transitions": list(timeline.transitions),
            "voterHistory": timeline.voter_history(),
            "samples": [s for s in timeline.samples if s[0] > since_sample_ms],
            "records": timeline.tail.since(since_seq),
            "recordSeq": timeline.tail.seq, "recordsSkipped": timeline.tail.skipped,
            "image": self._image(),
        }
        state["buildMicros"] = int((time.perf_counter() - started) * 1e6)
        return state

    def _leader_endpoints(self, leader: int) -> list[str]:
        if leader < 0:
            return []
        node = self.core.voter_set().node(leader)
        return [] if node is None else [f"{e.name}://{e.host}:{e.port}" for e in node.endpoints]

    def _quorum(self, now_ms: int) -> dict:
        """``describe --replication``'s rows: the leader knows every replica's log end
        offset and fetch times; elsewhere only the voters and our own log end. Lag is the
        leader's log end offset minus the replica's, unclamped, as Kafka's tool prints it
        (``MetadataQuorumCommand.quorumInfoToRows``)."""
        quorum = self.view.quorum(now_ms)
        if not quorum.is_leader:
            return {"known": False, "voters": [], "observers": []}
        leo = max((r.log_end_offset for r in quorum.voters if r.replica_id == quorum.leader_id), default=-1)
        endpoints = {v.node_id: [f"{e.name}://{e.host}:{e.port}" for e in v.endpoints]
                     for v in quorum.voter_nodes}

        def row(r, status):
            return {"id": r.replica_id, "directoryId": uuid_to_str(r.directory_id),
                    "logEndOffset": r.log_end_offset,
                    "lag": leo - r.log_end_offset,
                    "lastFetch": r.last_fetch_timestamp, "lastCaughtUp": r.last_caught_up_timestamp,
                    "status": "Leader" if r.replica_id == quorum.leader_id and status == "Follower" else status,
                    "endpoints": endpoints.get(r.replica_id, []), "console": self.peers.get(r.replica_id)}
        return {"known": True, "voters": [row(r, "Follower") for r in quorum.voters],
                "observers": [row(r, "Observer") for r in quorum.observers]}

    def _image(self) -> dict | None:
        controller = self.controller
        if controller is None:
            return None
        image = controller.image
        levels, _ = controller.finalized_features()
        brokers = []
        for b in list(image.brokers)[:MAX_BROKERS]:
            brokers.append({"id": b.broker_id, "epoch": b.epoch, "fenced": b.fenced,
                            "inControlledShutdown": b.in_controlled_shutdown, "rack": b.rack,
                            "endpoints": [f"{e.name}://{e.host}:{e.port}" for e in b.record.end_points]})
        topics = []
        for t in image.topics:
            if len(topics) >= MAX_TOPICS:
                break
            parts = t.partitions
            topics.append({"name": t.name, "id": uuid_to_str(t.topic_id), "partitions": len(parts),
                           "rows": [{"partition": p.partition_id, "leader": p.leader, "leaderEpoch": p.leader_epoch,
                                     "replicas": list(p.replicas), "isr": list(p.isr)}
                                    for p in (parts[i] for i in sorted(parts)[:MAX_PARTITIONS])]})
        return {"offset": image.offset, "epoch": image.epoch, "lastTimestamp": image.last_timestamp,
                "features": levels, "brokers": brokers, "brokerCount": len(image.brokers),
                "topics": topics, "topicCount": len(image.topics)}
