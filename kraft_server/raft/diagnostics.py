"""What a node is waiting for (read-only, for logs and failed liveness checks): role,
epoch, leader, log positions, every timer of its state relative to now, requests in
flight and destinations backing off."""
from __future__ import annotations

from kraft_server.raft.roles import LeaderState


def describe(node, now_ms: int) -> dict:
    state = node.quorum.state
    timers = {name: value - now_ms for name, value in vars(state).items()
              if name.endswith("_ms") and isinstance(value, int)}
    flags = {name: value for name, value in vars(state).items() if isinstance(value, bool) and value}
    if isinstance(state, LeaderState):  # each replica: end offset, ms since its last fetch
        flags["replicas"] = {s.key.node_id: (s.end_offset, now_ms - s.last_fetch_ms
                                             if s.last_fetch_ms >= 0 else None)
                             for s in list(state.voters.values()) + list(state.observers.values())}
        flags["unacked_voters"] = sorted(state.unacked_voters)
    log = node.log
    return {
        "role": node.role.value, "epoch": node.epoch, "leader": node.leader_id,
        "voter": node.is_voter(), "log": (log.start_offset(), log.end_offset(), log.flushed_offset()),
        "hwm": node.high_watermark, "timers_ms": timers, "flags": flags,
        "inflight": [(i.api_key, i.destination.node_id, now_ms - i.sent_ms) for i in node.inflight_requests()],
        "backoff_ms": {k: v - now_ms for k, v in node.backoff_items() if v > now_ms},
    }
