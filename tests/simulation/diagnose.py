"""What each node of a stuck simulation is waiting for, printed when a liveness
check fails: role, epoch, leader, log positions and high watermark, its timers
(relative to now: negative means overdue), requests in flight, destinations backing
off, a parked fsync, and the last messages it sent and received."""
from __future__ import annotations

from tests.support.kafka_api_keys import API_KEYS


def _api(key: int) -> str:
    info = API_KEYS.get(key)
    return info.name if info is not None else str(key)


def _traffic(entries, now: int, arrow: str) -> str:
    return ", ".join(f"{kind} {_api(api)} {arrow} {peer} {what} ({now - at} ms ago)"
                     for at, kind, api, peer, what in entries) or "nothing"


def describe(sim) -> str:
    lines = [f"at {sim.now} ms, partition {sim.partition or 'none'}:"]
    for node_id, node in sorted(sim.nodes.items()):
        if node.raft is None:
            lines.append(f"  node {node_id}: down")
            continue
        d = node.raft.diagnostics(sim.now)
        inflight = ", ".join(f"{_api(api)} to {dst} for {age} ms" for api, dst, age in d["inflight"])
        lines.append(
            f"  node {node_id}: {d['role']} epoch {d['epoch']} leader {d['leader']}"
            f"{'' if d['voter'] else ' (observer)'}; log start/end/flushed {d['log']}, hwm {d['hwm']}")
        lines.append(f"    timers (ms from now) {d['timers_ms']}; {d['flags'] or 'no flags'}")
        lines.append(f"    in flight: {inflight or 'nothing'}; backing off: {d['backoff_ms'] or 'none'}; "
                     f"fsync parked: {node.io_pending is not None}; wakes at "
                     f"{node.wake_at - sim.now if node.wake_at is not None else None} ms")
        lines.append(f"    sent: {_traffic(node.sent, sim.now, 'to')}")
        lines.append(f"    received: {_traffic(node.received, sim.now, 'from')}")
    return "\n".join(lines)
