"""What an operator reads in the log about the quorum, called after every Ready
cycle: each state transition with its reason (Kafka logs its ``QuorumState``
transitions at INFO), and each voter-set change when the node appends it and when
it commits (who was added or removed, with directory id and endpoints, the new
set, the offset), as Kafka's ``KRaftControlRecordStateMachine`` users log them."""
from __future__ import annotations

import logging

log = logging.getLogger("kraft_server.quorum")


def describe_voter(node) -> str:
    endpoints = ", ".join(f"{e.name}://{e.host}:{e.port}" for e in node.endpoints) or "no endpoints"
    return f"{node.key.node_id} (directory {node.key.directory_id}, {endpoints})"


def voter_change(before, after) -> str:
    """``added 4 (directory …, CONTROLLER://h:p); removed 1 (…); voters now [2, 3, 4]``."""
    old = {n.key: n for n in before.nodes}
    new = {n.key: n for n in after.nodes}
    parts = [f"added {describe_voter(n)}" for k, n in new.items() if k not in old]
    parts += [f"removed {describe_voter(n)}" for k, n in old.items() if k not in new]
    parts += [f"updated {describe_voter(n)}" for k, n in new.items() if k in old and old[k] != n]
    parts.append(f"voters now {after.ids()}")
    return "; ".join(parts)


class TransitionLog:
    def __init__(self, core, node_id: int):
        self.core = core
        self.node_id = node_id
        self._last_transition = -1
        self._last_state = None
        self._latest = core.voter_set()
        self._committed = None  # unknown until the high watermark is

    def __call__(self, now_ms: int) -> None:
        core, prefix = self.core, f"[RaftNode id={self.node_id}]"
        logged = False
        for number, role, epoch, leader, reason in core.transitions:
            if number > self._last_transition:
                self._last_transition = number
                log.info("%s %s in epoch %d, leader %s: %s", prefix, role.name, epoch,
                         leader if leader >= 0 else "unknown", reason)
                logged = True
        state = (core.role, core.epoch, core.leader_id)
        if state != self._last_state and not logged:  # at start-up: resumed from quorum-state
            log.info("%s %s in epoch %d, leader %s, high watermark %s", prefix, core.role.name,
                     core.epoch, core.leader_id if core.leader_id >= 0 else "unknown",
                     core.high_watermark)
        self._last_state = state
        latest = core.voter_set()
        if latest != self._latest:
            log.info("%s voter set change appended at offset %d: %s", prefix,
                     core.history.latest_offset(), voter_change(self._latest, latest))
            self._latest = latest
        if core.high_watermark is None:
            return
        committed = core.committed_voter_set()
        if self._committed is None:
            self._committed = committed  # what was committed before we knew: not news
        elif committed != self._committed:
            log.info("%s voter set change committed (high watermark %s): %s", prefix,
                     core.high_watermark, voter_change(self._committed, committed))
            self._committed = committed
