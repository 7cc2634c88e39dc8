"""The ``recover`` fault of the membership profile (issue 39): once in a run, a
majority of the voters is lost for good (crashed, disks gone, never back), and the
survivors are brought back by ``kraft-metadata-quorum recover``'s own plan and
writes (``tools/metadata_quorum/recover.py``: ``make_plan``, ``write_recovery``) on
their simulated disks, the running observers read as the brokers. The survivors then
lead alone, and the membership events grow the quorum back from the observers.

Each node keeps the high-watermark hint the real node writes (``log/hwm_hint.py``), at
most once a simulated second, with its disk (a crash keeps it, a replaced disk loses
it); the plan checks it against the log as the tool does.

The checker allows loss only of what the plan printed: every batch committed before
the loss that lies below the plan's ``lost_from`` must still be on the recovered
survivor byte for byte (or under its snapshot); committed batches from ``lost_from``
on may be gone, and are forgotten (counted: ``recover_lost_batches``). The recovery's
own VotersRecord is exempt from SafeVotersCommit (it is the one change whose
majorities need not meet: the old majority is gone). Every other invariant keeps
running, through the recovery and after it.

Records an observer fetched past the survivor's log end, on its history, are taken
into the recovered log by the plan (``adoptable``; counted per recovery as ``taken``).
Observers that saw commits the recovered log lacks would still have to truncate below
their high watermark; a running Kafka broker refuses to (it stops itself), so this
fault restarts every observer.
"""
from __future__ import annotations

import random

from kraft_server.common.values import OffsetAndEpoch
from kraft_server.log.hwm_hint import WRITE_EVERY_MS as HINT_EVERY_MS, epoch_below
from kraft_server.raft.log_view import LogView
from kraft_server.raft.voter_history import load_history
from kraft_server.raft.voters import majority
from tools.metadata_quorum import recover as tool
from tools.metadata_quorum.errors import TerseError
from wire.records import read_header

from tests.simulation.invariants import InvariantViolation
from tests.simulation.membership import MembershipChecker, MembershipSimulation, run_membership_seed

RECOVER_AT_MS = (2000, 6000)  # when the majority is lost (simulated time)
RETRY_MS = 300  # no leader with a high watermark yet, or a disk being replaced: try again


def facts(node, voters: bool = True) -> tool.LogFacts:
    """What the tool reads of a simulated node's disk."""
    log = node.log
    history = load_history(node.config, LogView(log)) if voters else None
    return tool.LogFacts(
        node_id=node.node_id, directory_id=node.config.directory_id, where=f"sim node {node.node_id}",
        start_offset=log.start_offset(), end_offset=log.end_offset(), last_epoch=log.last_fetched_epoch(),
        epochs=tuple(log.epoch_entries()), snapshot=log.latest_snapshot(), election=node.store.read(),
        voters=history.latest() if history else None,
        voters_offset=history.latest_offset() if history else -1,
        kraft_version=history.kraft_version() if history else 1,
        hint=tool.checked_hint(getattr(log, "hwm_hint", None), log.epoch_entries(), log.end_offset()),
        batches=lambda start, end: [b for b in log.batches_from(start) if b[0] < end])


class RecoverSimulation(MembershipSimulation):
    def extra_summary(self) -> dict:
        return {"recoveries": self.recoveries, "recover_refused": dict(self.recover_refused),
                "recover_waits": dict(self.recover_waits)}

    def __init__(self, seed: int, nodes: int = 3, churn: bool = True):
        self.recover_rng = random.Random(seed * 15485863 + 3)  # its own draws: the others stay put
        self.recoveries: list[dict] = []
        self.recover_refused: dict[str, int] = {}
        self.recover_waits: dict[str, int] = {}
        super().__init__(seed, nodes, churn=churn)
        self._push(self.recover_rng.randint(*RECOVER_AT_MS), "recover")

    def checker_swap(self) -> None:
        checker = RecoverChecker()
        checker.sim = self
        self.checker = checker

    def _start(self, node) -> None:
        if node.node_id not in self.gone:
            super()._start(node)

    def _on_recover(self) -> None:
        if self.recoveries:
            return
        leader = self.leader()
        waiting = "no leader" if leader is None else "no high watermark" if leader.raft.high_watermark is None \
            else "a disk being replaced" if self.wiped is not None else None
        if waiting:
            self.recover_waits[waiting] = self.recover_waits.get(waiting, 0) + 1
            self._push(self.now + RETRY_MS, "recover")
            return
        voters = leader.raft.voter_set()
        live = [k for k in voters.keys() if (n := self.nodes.get(k.node_id)) is not None
                and n.config.directory_id == k.directory_id and n.node_id not in self.gone]
        if len(voters) < 2 or not live:
            self._push(self.now + RETRY_MS, "recover")
            return
        count = self.recover_rng.randint(1, max(1, majority(len(voters)) - 1))
        keep = sorted(self.recover_rng.sample(live, min(count, len(live))), key=lambda k: k.node_id)
        voters_now = {k.node_id for k in voters.keys()}
        # Every voter goes down at once (kill -9: what was not fsync'd is lost).
        for node_id in sorted(voters_now):
            self._kill(self.nodes[node_id])
        survivors = [self.nodes[k.node_id] for k in keep]
        brokers = [n for n in self.nodes.values() if n.node_id not in voters_now and n.node_id not in self.gone]
        try:
            plan = tool.make_plan([facts(n) for n in survivors], [facts(n, voters=False) for n in brokers])
        except TerseError as exc:  # e.g. the survivors' newest log names another voter set
            reason = str(exc).split(":")[0][:60]
            self.recover_refused[reason] = self.recover_refused.get(reason, 0) + 1
            for node_id in sorted(voters_now):
                self._push(self.now + self.recover_rng.randint(10, 1000), "restart", node_id)
            self._push(self.now + RETRY_MS, "recover")  # a plain multi-crash; try again later
            return
        gone = (voters_now | set(plan.voters_before.ids())) - {n.node_id for n in survivors}
        self.gone |= gone
        for node_id in gone:
            node = self.nodes[node_id]
            self.checker.lost_disks[(node_id, node.config.directory_id)] = node.log.flushed_offset()
            self.checker.epochs.pop(node_id, None)
        chosen = self.nodes[plan.chosen.node_id]
        chosen.log.failing = None
        history = load_history(chosen.config, LogView(chosen.log))
        self.checker.recovered(plan, chosen.log, [o for o, _ in history.entries()])
        tool.write_recovery(chosen.log, chosen.store, plan, now_ms=self.now)
        self.recoveries.append({"at_ms": self.now, "lost": sorted(gone), "survivors": [n.node_id for n in survivors],
                                "chosen": chosen.node_id, "offset": plan.offset,
                                "taken": plan.offset - plan.chosen.end_offset, "lost_from": plan.lost_from,
                                "epoch": plan.epoch, "lost_batches": self.checker.recover_lost_batches})
        for node in survivors:
            self._push(self.now + self.recover_rng.randint(10, 500), "restart", node.node_id)
        for node in brokers:  # restarted, so none truncates below a high watermark it still holds
            if node.raft is not None:
                self._kill(node)
            self._push(self.now + self.recover_rng.randint(10, 500), "restart", node.node_id)

    def _complete(self, node, ready) -> bool:
        again = super()._complete(node, ready)
        self._write_hint(node)
        return again

    def _write_hint(self, node) -> None:
        """The node's high-watermark hint (``kraft_server/log/hwm_hint.py``), kept with its
        disk (a replaced disk has none), at most once a simulated second."""
        hwm = node.raft.high_watermark if node.raft is not None else None
        if hwm is None or self.now - getattr(node.log, "hwm_hint_at", -HINT_EVERY_MS) < HINT_EVERY_MS:
            return
        epoch = epoch_below(node.log.epoch_entries(), hwm)
        if epoch is not None:
            node.log.hwm_hint, node.log.hwm_hint_at = OffsetAndEpoch(hwm, epoch), self.now

    def _kill(self, node) -> None:
        node.raft = None
        node.io_pending = None
        node.log.failing = None
        node.log.crash()
        self._reset_connections(node)


class RecoverChecker(MembershipChecker):
    def __init__(self):
        super().__init__()
        self.recover_lost_batches = 0
        self.recover_bounds: list[int] = []

    def recovered(self, plan, log, voter_offsets) -> None:
        """Before the recovery is written: hold the plan to what it printed."""
        checker_recovered(self, plan, log, voter_offsets)


def checker_recovered(checker, plan, log, voter_offsets) -> None:
    """Every batch committed below ``plan.lost_from`` is on the survivor; the rest is
    forgotten. The survivor's VotersRecords up to the recovery's are committed by the
    recovery itself, not by a majority of their sets: SafeVotersCommit skips them."""
    bound = plan.lost_from
    start = log.start_offset()
    snap = log.latest_snapshot()
    mine = {base: data for base, _, _, data in log.batches_from(start)}
    lost = 0
    for base in list(checker._bases):
        last, data = checker.committed[base]
        kept = mine.get(base) == data or (last < start and snap is not None and snap.offset > last)
        if base < bound:
            if not kept:
                raise InvariantViolation(f"recover printed that loss starts at offset {bound}, but the batch "
                                         f"committed at {base}-{last} is not on node {plan.chosen.node_id}")
            continue
        lost += not kept
        del checker.committed[base]
    checker._bases = sorted(checker.committed)
    checker.recover_lost_batches = lost
    if checker._bases:
        last, data = checker.committed[checker._bases[-1]]
        checker.committed_end, checker.committed_last_epoch = last + 1, read_header(data).partition_leader_epoch
    else:
        checker.committed_end, checker.committed_last_epoch = 0, -1
    checker.voters_checked = {o for o in checker.voters_checked if o < bound} | {plan.offset} | set(voter_offsets)
    for node_id in list(checker.checked):
        checker.checked[node_id] = min(checker.checked[node_id], bound)
    checker.recover_bounds.append(bound)


def run_recover_seed(seed: int, events: int, nodes: int = 3, churn: bool = True) -> dict:
    return run_membership_seed(seed, events, nodes, churn, simulation=RecoverSimulation)
