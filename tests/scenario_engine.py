"""A small datadriven engine for core scenarios (etcd raft's ``testdata/*.txt`` style).

A file is a list of stanzas::

    # comments narrate
    command arg key=value
    ----
    expected output

Commands: ``add-nodes N [kraft-version=0]``, ``time MS`` (set the clock),
``tick ID...``, ``process-ready ID...``, ``deliver-msgs ID... [drop=true]``,
``stabilize [rounds=N]``, ``propose ID record...``, ``state``. Every message crosses
the generated codec at the latest version. ``KRAFT_REWRITE=1 pytest
tests/test_scenarios.py`` rewrites the expected outputs for review.
"""
from __future__ import annotations

import random

from wire.messages import REQUESTS, RESPONSES

from kraft_server.log.memory import MemoryLog, MemoryQuorumStateStore
from kraft_server.raft.config import QuorumConfig, StaticVoter
from kraft_server.raft.io import Endpoint, InboundRequest, InboundResponse
from kraft_server.raft.node import RaftNode

NAMES = {1: "Fetch", 52: "Vote", 53: "BeginQuorumEpoch", 54: "EndQuorumEpoch", 59: "FetchSnapshot",
         82: "UpdateRaftVoter"}
LATEST = {1: 18, 52: 2, 53: 1, 54: 1, 59: 1, 82: 0}


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
        for i in range(1, n + 1):
            cfg = QuorumConfig(node_id=i, cluster_id="scenario-cluster-AAAAAA",
                               static_voters=tuple(StaticVoter(j, f"n{j}", 9000 + j) for j in range(1, n + 1)),
                               listeners=(Endpoint("CONTROLLER", f"n{i}", 9000 + i),))
            self.nodes[i] = RaftNode(cfg, MemoryLog(), MemoryQuorumStateStore(), random.Random(i), self.now)
        return self.cmd_state([], {})

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
            ready = node.ready()
            if ready.flush:
                node.log.flush()
            node.advance(ready, self.now)
            for r in ready.requests:
                version = max(LATEST[r.api_key], r.min_version)
                self.mailbox.append((r.destination.node_id, "req", i, r, version))
                out.append(f"{i}->{r.destination.node_id} {NAMES[r.api_key]} {_summary(r.api_key, r.body, True)}")
            for r in ready.responses:
                src, corr_req = r.handle
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
            if drop:
                out.append(f"dropped {src}->{dst}")
                continue
            node = self.nodes[dst]
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
