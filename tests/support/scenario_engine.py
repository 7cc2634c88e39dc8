"""A small datadriven engine for core scenarios (etcd raft's ``testdata/*.txt`` style).

A file is a list of stanzas::

    # comments narrate
    command arg key=value
    ----
    expected output

Commands: ``add-nodes N [kraft-version=0]``, ``time MS`` (set the clock),
``tick ID...``, ``process-ready ID...``, ``deliver-msgs ID... [drop=true]``,
``stabilize [rounds=N]``, ``propose ID record...``, ``state``; membership (KIP-853):
``add-nodes N kraft-version=1 observers=K [auto-join=true]``, ``add-voter LEADER ID
[ack=false] [dir=N] [listener=NAME]``, ``remove-voter LEADER ID [dir=N]``,
``update-features LEADER kraft.version=L [type=T]``, ``voters ID``, ``describe ID``
(requests from an admin client answer to ``admin``; ApiVersions probes are answered
by the engine, as the shell's dispatcher does). Every message crosses
the generated codec at the latest version. ``KRAFT_REWRITE=1 pytest
tests/scenarios/test_scenarios.py`` rewrites the expected outputs for review.
"""
from __future__ import annotations

import uuid

from wire.messages import REQUESTS, RESPONSES

from kraft_server.log.memory import MemoryLog
from kraft_server.raft.quorum_config import QuorumConfig, StaticVoter
from kraft_server.raft.boundary import Endpoint, InboundRequest, InboundResponse
from kraft_server.raft.node import RaftNode
from tests.support.raft_harness import start
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet
from wire.messages import KRaftVersionRecord, SnapshotHeaderRecord
from wire.records import ControlRecordType, build_control_batch


def _endpoint(i: int) -> Endpoint:
    return Endpoint("CONTROLLER", f"n{i}", 9000 + i)

NAMES = {1: "Fetch", 52: "Vote", 53: "BeginQuorumEpoch", 54: "EndQuorumEpoch", 59: "FetchSnapshot",
         82: "UpdateRaftVoter", 18: "ApiVersions", 57: "UpdateFeatures", 80: "AddRaftVoter",
         81: "RemoveRaftVoter"}
LATEST = {1: 18, 52: 2, 53: 1, 54: 1, 59: 1, 82: 0, 18: 4, 57: 2, 80: 1, 81: 0}


def parse(text: str):
    stanzas, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        comments = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith("#")):
            if lines[i].strip():
                comments.append(lines[i])
            i += 1
        if i >= len(lines):
            stanzas.append((comments, None, None))
            break
        command = lines[i]
        i += 1
        assert lines[i] == "----", f"expected ---- after {command!r}"
        i += 1
        out = []
        while i < len(lines) and lines[i].strip():
            out.append(lines[i])
            i += 1
        stanzas.append((comments, command, "\n".join(out)))
    return stanzas


def render(stanzas) -> str:
    parts = []
    for comments, command, out in stanzas:
        if parts:
            parts.append("")
        parts.extend(comments)
        if command is not None:
            parts.append(command)
            parts.append("----")
            parts.append(out if out else "ok")
    return "\n".join(parts).rstrip("\n") + "\n"


def _summary(api_key, body, is_request) -> str:
    if api_key == 1:
        if is_request:
            p = body.topics[0].partitions[0]
            return f"epoch={p.current_leader_epoch} offset={p.fetch_offset} last_epoch={p.last_fetched_epoch}"
        if body.error_code:
            return f"error={body.error_code}"
        p = body.responses[0].partitions[0]
        extra = ""
        if p.diverging_epoch.epoch >= 0:
            extra += f" diverging=({p.diverging_epoch.epoch},{p.diverging_epoch.end_offset})"
        if p.snapshot_id.epoch >= 0:
            extra += f" snapshot=({p.snapshot_id.end_offset},{p.snapshot_id.epoch})"
        records = len(p.records or b"")
        return (f"error={p.error_code} leader={p.current_leader.leader_id}@{p.current_leader.leader_epoch} "
                f"hwm={p.high_watermark} bytes={records}{extra}")
    if api_key in (18, 57, 80, 81, 82):
        return _membership_summary(api_key, body, is_request)
    if getattr(body, "error_code", 0):
        return f"error={body.error_code}"
    p = body.topics[0].partitions[0]
    if api_key == 52 and is_request:
        return (f"epoch={p.replica_epoch} pre_vote={p.pre_vote} last=({p.last_offset_epoch},{p.last_offset})")
    if api_key == 52:
        return f"error={p.error_code} granted={p.vote_granted} leader={p.leader_id}@{p.leader_epoch}"
    if is_request and api_key in (53, 54):
        return f"leader={p.leader_id}@{p.leader_epoch}"
    return f"error={p.error_code} leader={p.leader_id}@{p.leader_epoch}"


def _membership_summary(api_key, body, is_request) -> str:
    if is_request:
        if api_key in (80, 81, 82):
            return f"voter={body.voter_id} dir={body.voter_directory_id.int}"
        return ""
    if api_key == 82:
        return f"error={body.error_code} leader={body.current_leader.leader_id}@{body.current_leader.leader_epoch}"
    return f"error={body.error_code}"


class Scenario:
    def __init__(self):
        self.nodes: dict[int, RaftNode] = {}
        self.now = 0
        self.mailbox: list = []  # (dst, kind, payload...)

    def run(self, command: str) -> str:
        words = command.split()
        args = [w for w in words[1:] if "=" not in w]
        kwargs = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        return getattr(self, "cmd_" + words[0].replace("-", "_"))(args, kwargs)

    def cmd_add_nodes(self, args, kwargs):
        n = int(args[0])
        if kwargs.get("kraft-version") == "1":
            return self._add_dynamic(n, int(kwargs.get("observers", "0")), kwargs.get("auto-join") == "true")
        for i in range(1, n + 1):
            cfg = QuorumConfig(node_id=i, cluster_id="scenario-cluster-AAAAAA",
                               directory_id=uuid.UUID(int=i) if kwargs.get("dirs") == "true" else uuid.UUID(int=0),
                               static_voters=tuple(StaticVoter(j, f"n{j}", 9000 + j) for j in range(1, n + 1)),
                               listeners=(Endpoint("CONTROLLER", f"n{i}", 9000 + i),))
            self.nodes[i] = start(cfg, MemoryLog(), seed=i, now=self.now)
        return self.cmd_state([], {})

    def _add_dynamic(self, n: int, observers: int, auto: bool):
        """kraft.version 1: voters 1..n from a bootstrap checkpoint (directory id = node id),
        observers n+1..n+observers that find the leader through the bootstrap servers."""
        voters = VoterSet(tuple(VoterNode(VoterKey(i, uuid.UUID(int=i)), (_endpoint(i),), 0, 1)
                                for i in range(1, n + 1)))
        checkpoint = build_control_batch(0, 0, 0, [
            (ControlRecordType.SNAPSHOT_HEADER, SnapshotHeaderRecord(version=0)),
            (ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1)),
            (ControlRecordType.KRAFT_VOTERS, voters.to_voters_record())])
        for i in range(1, n + observers + 1):
            self._start_dynamic(i, uuid.UUID(int=i), checkpoint, n, auto)
        return self.cmd_state([], {})

    def _start_dynamic(self, i, directory_id, checkpoint, n, auto):
        cfg = QuorumConfig(node_id=i, cluster_id="scenario-cluster-AAAAAA", directory_id=directory_id,
                           bootstrap_servers=tuple((f"n{j}", 9000 + j) for j in range(1, n + 1)),
                           listeners=(_endpoint(i),), auto_join=auto)
        self.nodes[i] = start(cfg, MemoryLog(checkpoint), seed=i, now=self.now)
        self.checkpoint, self.voter_count = checkpoint, n

    def cmd_replace_disk(self, args, kwargs):
        """Restart node ID with an empty log and a new directory id (a lost disk)."""
        i = int(args[0])
        self._start_dynamic(i, uuid.UUID(int=int(kwargs.get("dir", 100 + i))), self.checkpoint,
                            self.voter_count, kwargs.get("auto-join") == "true")
        return self.cmd_state([], {})

    def _admin(self, leader: int, body, version: int):
        body = REQUESTS[body.API_KEY].decode(body.encode(version), version)
        self.nodes[leader].step(InboundRequest(("admin", None), body.API_KEY, version, body), self.now)
        return f"admin->{leader} {NAMES[body.API_KEY]} delivered"

    def cmd_add_voter(self, args, kwargs):
        from wire.messages import add_raft_voter_request as areq
        leader, voter = int(args[0]), int(args[1])
        listener = kwargs.get("listener", "CONTROLLER")
        body = areq.AddRaftVoterRequest(
            cluster_id="scenario-cluster-AAAAAA", timeout_ms=30000, voter_id=voter,
            voter_directory_id=uuid.UUID(int=int(kwargs.get("dir", voter))),
            ack_when_committed=kwargs.get("ack", "true") == "true",
            listeners=[areq.Listener(name=listener, host=f"n{voter}", port=9000 + voter)])
        return self._admin(leader, body, int(kwargs.get("version", "1")))

    def cmd_remove_voter(self, args, kwargs):
        from wire.messages import remove_raft_voter_request as rreq
        leader, voter = int(args[0]), int(args[1])
        body = rreq.RemoveRaftVoterRequest(cluster_id=kwargs.get("cluster", "scenario-cluster-AAAAAA"),
                                           voter_id=voter,
                                           voter_directory_id=uuid.UUID(int=int(kwargs.get("dir", voter))))
        return self._admin(leader, body, 0)

    def cmd_update_features(self, args, kwargs):
        from wire.messages import update_features_request as ureq
        leader = int(args[0])
        updates = [ureq.FeatureUpdateKey(feature=k, max_version_level=int(v),
                                         upgrade_type=int(kwargs.get("type", "1")))
                   for k, v in kwargs.items() if "." in k]
        body = ureq.UpdateFeaturesRequest(timeout_ms=5000, feature_updates=updates)
        return self._admin(leader, body, int(kwargs.get("version", "2")))

    def cmd_elect(self, args, kwargs):
        """Quietly make node ID the leader (its election timer fires first) and let
        everyone catch up; prints the state."""
        self.now += 3000
        self.nodes[int(args[0])].tick(self.now)
        self.cmd_stabilize([], {"rounds": "40"})
        for _ in range(3):  # a little time passes: backoffs end, retries go out
            self.now += 50
            for n in self.nodes.values():
                n.tick(self.now)
            self.cmd_stabilize([], {"rounds": "40"})
        return self.cmd_state([], {})

    def cmd_run_for(self, args, kwargs):
        """Quietly let MS milliseconds pass in 50 ms steps (every node ticks, every
        message is delivered); prints the state."""
        end = self.now + int(args[0])
        while self.now < end:
            self.now = min(end, self.now + 50)
            for n in self.nodes.values():
                n.tick(self.now)
            self.cmd_stabilize([], {"rounds": "40"})
        return self.cmd_state([], {})

    def cmd_describe(self, args, kwargs):
        """The leader's replica states (DescribeQuorum's CurrentVoters / Observers)."""
        states = self.nodes[int(args[0])].replica_states(self.now)
        if states is None:
            return "not the leader"
        voters, observers = states
        fmt = lambda rs: " ".join(f"{r.key.node_id}:{r.end_offset}" for r in sorted(rs, key=lambda r: r.key.node_id))
        return f"voters={fmt(voters)} observers={fmt(observers)}"

    def cmd_voters(self, args, kwargs):
        lines = []
        for i in self._ids(args):
            n = self.nodes[i]
            lines.append(f"{i}: kraft.version={n.kraft_version()} latest={n.voter_set().ids()} "
                         f"committed={n.committed_voter_set().ids()}")
        return "\n".join(lines)

    def _api_versions_answer(self, dst: int, req):
        """What the shell's ApiVersions handler answers for node ``dst``."""
        from wire.messages import api_versions_response as avr
        cfg = self.nodes[dst].config
        return avr.ApiVersionsResponse(supported_features=[avr.SupportedFeatureKey(
            name="kraft.version", min_version=cfg.kraft_version_min, max_version=cfg.kraft_version_max)])

    def cmd_time(self, args, kwargs):
        self.now = int(args[0])
        return f"now={self.now}"

    def _ids(self, args):
        return [int(a) for a in args] if args else sorted(self.nodes)

    def cmd_tick(self, args, kwargs):
        for i in self._ids(args):
            self.nodes[i].tick(self.now)
        return self.cmd_state([], {})

    def cmd_process_ready(self, args, kwargs):
        out = []
        for i in self._ids(args):
            node = self.nodes[i]
            ready = node.shell.take()
            node.shell.finish(ready, self.now, lambda r: None, lambda r: None)  # sent below
            for r in ready.requests:
                version = max(LATEST[r.api_key], r.min_version)
                dst = r.destination.node_id
                if dst < 0:  # a bootstrap address: the node listening on that port
                    dst = r.destination.endpoint.port - 9000
                self.mailbox.append((dst, "req", i, r, version))
                out.append(f"{i}->{dst} {NAMES[r.api_key]} {_summary(r.api_key, r.body, True)}")
            for r in ready.responses:
                src, corr_req = r.handle
                if src == "admin":
                    out.append(f"{i}->admin {NAMES[r.api_key]}Response {_summary(r.api_key, r.body, False)}")
                    continue
                self.mailbox.append((src, "resp", i, (corr_req, r), r.api_version))
                out.append(f"{i}->{src} {NAMES[r.api_key]}Response {_summary(r.api_key, r.body, False)}")
            if ready.flush:
                out.append(f"{i} flushed to {node.log.flushed_offset()}")
        return "\n".join(out)

    def cmd_deliver_msgs(self, args, kwargs):
        ids, drop = set(self._ids(args)), kwargs.get("drop") == "true"
        out, keep = [], []
        for item in self.mailbox:
            dst = item[0]
            if dst not in ids:
                keep.append(item)
                continue
            _, kind, src, payload, version = item
            if drop or dst not in self.nodes:
                out.append(f"dropped {src}->{dst}")
                continue
            node = self.nodes[dst]
            if kind == "req" and payload.api_key == 18:  # the shell answers ApiVersions itself
                req = payload
                body = self._api_versions_answer(dst, req)
                self.nodes[src].step(InboundResponse(req.correlation, req.destination, 18,
                                                     body=RESPONSES[18].decode(body.encode(version), version)),
                                     self.now)
                out.append(f"{src}->{dst} ApiVersions answered")
                continue
            if kind == "req":
                req = payload
                body = REQUESTS[req.api_key].decode(req.body.encode(version), version)
                node.step(InboundRequest((src, req), req.api_key, version, body), self.now)
                out.append(f"{src}->{dst} {NAMES[req.api_key]} delivered")
            else:
                req, resp = payload
                body = RESPONSES[resp.api_key].decode(resp.body.encode(version), version)
                node.step(InboundResponse(req.correlation, req.destination, req.api_key, body=body), self.now)
                out.append(f"{src}->{dst} {NAMES[resp.api_key]}Response delivered")
        self.mailbox = keep
        return "\n".join(out)

    def cmd_stabilize(self, args, kwargs):
        out = []
        for _ in range(int(kwargs.get("rounds", "10"))):
            step = self.cmd_process_ready([], {})
            if not self.mailbox:
                if step:
                    out.append(step)
                break
            out.append(step)
            self.cmd_deliver_msgs([], {})
        return "\n".join(o for o in out if o)

    def cmd_propose(self, args, kwargs):
        first, last = self.nodes[int(args[0])].propose([a.encode() for a in args[1:]], self.now)
        return f"offsets {first}..{last}"

    def cmd_state(self, args, kwargs):
        lines = []
        for i, n in sorted(self.nodes.items()):
            lines.append(f"{i}: {n.role.value} epoch={n.epoch} leader={n.leader_id} "
                         f"hwm={n.high_watermark} leo={n.log.end_offset()}")
        return "\n".join(lines)
