"""``recover``: bring back a quorum that lost a majority of its voters for good.

Run on the stopped survivor(s). The survivor with the longest log (Raft's order:
last epoch, then end offset) gets one control batch at its log end, a VotersRecord
naming only the survivors, in a new leader epoch above every epoch seen (the
survivors', and the brokers' when their metadata log dirs are given, plus a gap
for elections the lost voters may have held without the survivor). Its
``quorum-state`` moves to that epoch. When it starts, the survivors are the whole
voter set: they elect a leader, which commits its log, and ``add-controller`` grows
the quorum back.

What may be lost is printed first: the survivor keeps its whole log, but cannot
know what the lost voters committed after it stopped hearing from them. Below the
highest snapshot any survivor or broker holds (snapshots hold only committed
records) its log is the committed one; from there on, the lost majority may have
committed records it never received (from its log end on), or others in place of
its uncommitted ones. A broker's log past its common prefix with the recovered log
is truncated when the broker follows the new leader: those records are named.

A broker (an observer) may hold records past the survivor's log end that the lost
leader wrote last, on the survivor's history (the same epoch at the survivor's last
offset): it fetched them, the survivor had not yet. They are appended to the survivor's
log before the recovery batch (``adoptable``; ``--leave-broker-records`` does not), so
they are kept, and the brokers need not truncate them: a running Kafka broker asked to
truncate below the high watermark it saw stops itself ("The leader requested truncation
to offset N, which is below the current high watermark").

Crash safety: the batches are appended and fsync'd (a torn batch is cut at start-up,
by the node's log recovery and by this tool's reading: the old state), then the
quorum-state is replaced (tmp, fsync, rename). A log holding the batch is the new
state whatever the quorum-state says (a log epoch above the stored one wins, in
Kafka and here); a rerun finds the survivors already alone and says so.
"""
from __future__ import annotations

import bisect
import socket
import time
from dataclasses import dataclass, field

from kraft_server.common.values import ElectionState, OffsetAndEpoch
from kraft_server.log.hwm_hint import epoch_below, read_hint
from kraft_server.raft.voters import VoterKey, VoterSet, majority
from wire.records import ControlRecordType, build_control_batch
from wire.uuids import ZERO_UUID, uuid_to_str

from .errors import TerseError
from .reachability import socket_error_text

EPOCH_GAP = 1000
LOST_VOTERS_FLAG = "--lost-voters-are-gone"


@dataclass(frozen=True)
class LogFacts:
    """What one node's metadata log directory says, as far as recovery needs it."""

    node_id: int
    directory_id: object
    where: str  # the directory, for messages
    start_offset: int
    end_offset: int
    last_epoch: int
    epochs: tuple[tuple[int, int], ...]  # (epoch, start offset)
    snapshot: OffsetAndEpoch | None  # the latest snapshot: committed below its offset
    election: ElectionState | None
    voters: VoterSet | None = None  # the latest voter set (controllers only)
    voters_offset: int = -1
    kraft_version: int = 1
    problem: str | None = None  # a torn tail the node will cut at start-up
    describe: object = None  # (start, end) -> text naming the records there
    hint: OffsetAndEpoch | None = None  # the high watermark it recorded (log/hwm_hint.py), checked
    batches: object = None  # (start, end) -> (base, last, epoch, bytes) of the batches there

    @property
    def stored_epoch(self) -> int:
        return self.election.epoch if self.election is not None else -1

    @property
    def committed_known(self) -> int:
        """Its log holds committed records only below this: its snapshot, its checked hint."""
        return max(self.snapshot.offset if self.snapshot is not None else 0,
                   self.hint.offset if self.hint is not None else 0)

    def rank(self) -> tuple[int, int]:
        return (self.last_epoch, self.end_offset)


def checked_hint(hint, epochs, end_offset: int):
    """``hint`` when the log still holds it: within the log, the same epoch just below it."""
    if hint is None or hint.offset > end_offset:
        return None
    return hint if epoch_below(list(epochs), hint.offset) == hint.epoch else None


def facts_of_dir(d, with_voters: bool = True) -> LogFacts:
    """``LogFacts`` of a ``metadata_dir.MetadataDir``."""
    history = d.voter_history() if with_voters else None
    return LogFacts(
        node_id=d.meta.node_id, directory_id=d.meta.directory_id, where=str(d.root),
        start_offset=d.start_offset(), end_offset=d.end_offset(), last_epoch=d.last_fetched_epoch(),
        epochs=tuple(d.epoch_entries()), snapshot=d.latest_snapshot(), election=d.election,
        voters=history.latest() if history else None,
        voters_offset=history.latest_offset() if history else -1,
        kraft_version=history.kraft_version() if history else 1,
        problem=d.problem, describe=d.describe_records, batches=d.batches,
        hint=checked_hint(read_hint(d.directory), d.epoch_entries(), d.end_offset()))


# -- Raft's comparisons ------------------------------------------------------------------
def longest(survivors: list[LogFacts]) -> tuple[LogFacts, str]:
    """The survivor whose log wins Raft's comparison, and why, in words."""
    ranked = sorted(survivors, key=lambda f: (f.last_epoch, f.end_offset, -f.node_id), reverse=True)
    chosen = ranked[0]
    if len(ranked) == 1:
        return chosen, f"node {chosen.node_id} is the only survivor"
    others = "; ".join(f"node {f.node_id}: last epoch {f.last_epoch}, end offset {f.end_offset}"
                       for f in ranked[1:])
    tie = " (a tie: the lowest node id)" if ranked[1].rank() == chosen.rank() else ""
    return chosen, (f"node {chosen.node_id} has the longest log as Raft compares them (last epoch, then end "
                    f"offset): last epoch {chosen.last_epoch}, end offset {chosen.end_offset}{tie}; {others}")


def _epoch_at(entries, starts: list[int], offset: int):
    i = bisect.bisect_right(starts, offset) - 1
    return entries[i][0] if i >= 0 else None


def common_end(a, a_end: int, b, b_end: int, floor: int = 0) -> int:
    """Where two logs stop agreeing: the first offset whose epoch differs (same
    offset and epoch means the same record, Raft's log matching), else the shorter
    end. ``a`` and ``b`` are (epoch, start offset) entries; below ``floor`` both
    hold the same committed records (snapshots). A follower truncated by Raft's
    divergence check ends exactly here."""
    hi = min(a_end, b_end)
    a_starts, b_starts = [s for _, s in a], [s for _, s in b]
    for point in sorted({floor} | {s for s in a_starts + b_starts if floor < s < hi}):
        if point >= hi:
            break
        if _epoch_at(a, a_starts, point) != _epoch_at(b, b_starts, point):
            return point
    return hi


def holds_snapshot(chosen: LogFacts, snap: OffsetAndEpoch) -> bool:
    """Whether ``chosen``'s log holds the committed records of another node's snapshot
    ``snap``: below its own snapshot (committed records are the same everywhere), or
    with the snapshot's epoch at its last offset (the same epoch at the same offset
    means the same records up to there: Raft's log matching)."""
    if chosen.snapshot is not None and chosen.snapshot.offset >= snap.offset:
        return True
    if snap.offset > chosen.end_offset:
        return False
    if snap.offset <= chosen.start_offset:
        return snap.offset <= chosen.committed_known
    return _epoch_at(chosen.epochs, [s for _, s in chosen.epochs], snap.offset - 1) == snap.epoch


# -- the plan ------------------------------------------------------------------------------
@dataclass
class BrokerLoss:
    broker: LogFacts
    keeps_to: int  # the broker keeps [.., keeps_to); it truncates the rest

    @property
    def loses(self) -> bool:
        return self.keeps_to < self.broker.end_offset


@dataclass
class Plan:
    chosen: LogFacts
    why: str
    survivors: list[LogFacts]
    voters_before: VoterSet
    voters_after: VoterSet
    lost: list  # VoterNode
    epoch: int  # the epoch of the new batch and of quorum-state; the node leads at epoch + 1
    committed_known: int  # the chosen log holds committed records only below this
    brokers: list[BrokerLoss] = field(default_factory=list)
    # (node, marker, kind): another node knew records committed below marker that the chosen log lacks
    foreign_snapshots: list = field(default_factory=list)
    gap: int = EPOCH_GAP  # the new epoch is this far above the highest seen
    adopted: "Adopted | None" = None  # a broker's records past the survivor's log end, appended first

    @property
    def offset(self) -> int:
        """Where the recovery batch goes: the survivor's log end, past what it adopts."""
        return self.adopted.end if self.adopted is not None else self.chosen.end_offset

    @property
    def lost_from(self) -> int:
        """The lowest offset at which a record the old quorum committed may be lost."""
        return min(self.committed_known, self.offset)

    def batch(self, now_ms: int) -> bytes:
        return recovery_batch(self.voters_after, self.offset, self.epoch, now_ms)

    def election(self) -> ElectionState:
        return ElectionState(epoch=self.epoch, leader_id=-1, voted_id=-1, voted_directory_id=ZERO_UUID,
                             data_version=1)

    def new_epochs(self) -> list[tuple[int, int]]:
        taken = list(self.adopted.epochs) if self.adopted is not None else []
        return list(self.chosen.epochs) + taken + [(self.epoch, self.offset)]

    def text(self) -> str:
        c = self.chosen
        out = [f"Survivor{'s' if len(self.survivors) > 1 else ''}: "
               + ", ".join(f"node {f.node_id} ({f.where})" for f in self.survivors),
               f"Chosen: {self.why}.",
               f"Voters now: {_ids(self.voters_before)}; lost for good: {[n.key.node_id for n in self.lost]}; "
               f"after recovery: {_ids(self.voters_after)}.",
               f"Node {c.node_id}'s log: offsets {c.start_offset} to {c.end_offset} (end), last epoch "
               f"{c.last_epoch}; quorum-state epoch {c.stored_epoch}"
               + (f", leader {c.election.leader_id}" if c.election and c.election.leader_id >= 0 else "")
               + (f"; latest snapshot at {c.snapshot.offset}" if c.snapshot else "; no snapshot")
               + (f"; high watermark recorded at {c.hint.offset}" if c.hint else "") + "."]
        if c.problem:
            out.append(f"Its log has a torn or corrupt tail that will be cut first: {c.problem}.")
        out.append("What may be lost (the old quorum's commits the survivors cannot know):")
        if self.committed_known > 0:
            out.append(f"  offsets below {min(self.committed_known, self.offset)}: nothing (known committed: a "
                       "snapshot holds them, or a high watermark a node recorded passed them).")
        if self.committed_known < c.end_offset:
            what = c.describe(self.committed_known, c.end_offset) if c.describe else ""
            out.append(f"  offsets {self.committed_known} to {c.end_offset} ({what}): kept from node {c.node_id}'s "
                       "log and committed when it leads. Whether the old quorum had committed them, the survivors "
                       "cannot tell: if the lost voters committed other records at these offsets (a leader "
                       f"elected without node {c.node_id}), those are lost.")
        a = self.adopted
        if a is not None:
            out.append(f"  offsets {c.end_offset} to {a.end} ({a.what}): the lost voters' last records, which broker "
                       f"{a.broker.node_id} fetched and node {c.node_id} did not (the same history: epoch "
                       f"{c.last_epoch} at offset {c.end_offset - 1} on both). Taken from broker {a.broker.node_id}'s "
                       f"log ({a.broker.where}) and appended to node {c.node_id}'s before the recovery batch: "
                       "kept, and committed when it leads.")
        heard = f"node {c.node_id}" + (f" and broker {a.broker.node_id}" if a is not None else "")
        out.append(f"  offsets {self.offset} and on: anything the lost voters committed after {heard} "
                   "last heard from them is lost (no survivor has it).")
        for f, m, kind in self.foreign_snapshots:
            out.append(f"  below {m.offset}: node {f.node_id}'s {kind} ({m.offset}, epoch {m.epoch}) says records "
                       f"were committed there that node {c.node_id}'s log does not have (its log ends before, or "
                       "holds another epoch there): some of them are lost for certain.")
        for b in self.brokers:
            f = b.broker
            if b.loses:
                what = f.describe(b.keeps_to, f.end_offset) if f.describe else ""
                out.append(f"  broker {f.node_id} ({f.where}): holds offsets {b.keeps_to} to {f.end_offset} (last "
                           f"epoch {f.last_epoch}) that the recovered log does not; it will truncate them: {what}.")
            else:
                out.append(f"  broker {f.node_id} ({f.where}): log ends at {f.end_offset}, within the recovered "
                           "log: nothing beyond it.")
        out.append(f"So the loss, if any, is of committed records from offset {self.lost_from} on.")
        out.append(f"To write: at offset {self.offset} of node {c.node_id}'s log"
                   + (f" (after broker {a.broker.node_id}'s offsets {c.end_offset} to {a.end})" if a else "")
                   + ", a control batch of leader epoch "
                   f"{self.epoch} holding a VotersRecord of {_ids(self.voters_after)}; quorum-state epoch "
                   f"{self.epoch} (the highest epoch seen is {self.epoch - self.gap}; "
                   f"the gap covers elections the lost voters may have held without a survivor).")
        return "\n".join(out)


def _ids(voters: VoterSet) -> list[int]:
    return voters.ids()


def recovery_batch(voters: VoterSet, offset: int, epoch: int, now_ms: int) -> bytes:
    """The control batch that makes ``voters`` the voter set from ``offset`` on."""
    return build_control_batch(offset, epoch, now_ms, [(ControlRecordType.KRAFT_VOTERS, voters.to_voters_record())])


@dataclass
class Adopted:
    """A broker's records past the survivor's log end, on the survivor's history."""

    broker: LogFacts
    end: int
    datas: list  # the batches' bytes, in order
    epochs: tuple  # (epoch, start offset) entries of the range that begin in it
    what: str  # the records there, by kind


def adoptable(chosen: LogFacts, broker: LogFacts) -> Adopted | None:
    """What ``broker``'s log holds past ``chosen``'s end on the same history, up to its
    first voter change (a VotersRecord or KRaftVersionRecord the survivors never saw
    stays out: the voter set recovered is the one the survivor knows); None if nothing.

    An observer (a broker) fetches the leader's records, committed or not, as a
    follower does, and truncates what diverges. Its log agrees with the survivor's up
    to the survivor's end (the same epoch at every epoch start, Raft's log matching), so
    the records after that are the ones the lost leader wrote next: they may have been
    committed without the survivor. A running Kafka broker that saw them committed would
    stop itself when told to truncate them."""
    if broker.batches is None or broker.end_offset <= chosen.end_offset or broker.start_offset > chosen.end_offset:
        return None
    floor = max(broker.start_offset, chosen.start_offset)
    if common_end(chosen.epochs, chosen.end_offset, broker.epochs, broker.end_offset, floor) != chosen.end_offset:
        return None
    if chosen.end_offset > floor and _epoch_at(broker.epochs, [o for _, o in broker.epochs],
                                                chosen.end_offset - 1) != chosen.last_epoch:
        return None
    datas, end = [], chosen.end_offset
    for base, last, _, data in broker.batches(chosen.end_offset, broker.end_offset):
        if base != end or _changes_voters(data):
            break
        datas.append(data)
        end = last + 1
    if not datas:
        return None
    epochs = tuple((e, o) for e, o in broker.epochs if chosen.end_offset <= o < end)
    at_start = _epoch_at(broker.epochs, [o for _, o in broker.epochs], chosen.end_offset)
    if at_start != chosen.last_epoch and (not epochs or epochs[0][1] != chosen.end_offset):
        epochs = ((at_start, chosen.end_offset),) + epochs
    from .metadata_dir import describe_batches
    return Adopted(broker, end, datas, epochs, describe_batches(datas))


def _changes_voters(data: bytes) -> bool:
    from wire.records import control_records, walk
    for info in walk(data):
        if info.is_control and any(kind in (ControlRecordType.KRAFT_VOTERS, ControlRecordType.KRAFT_VERSION)
                                    for kind, _ in control_records(data, info)):
            return True
    return False


class AlreadyRecovered(TerseError):
    """The survivors are already the whole voter set: nothing to write."""


def make_plan(survivors: list[LogFacts], brokers: list[LogFacts] = (), epoch_gap: int = EPOCH_GAP,
              adopt: bool = True) -> Plan:
    """The recovery, or ``TerseError`` saying why there is none to make. With ``adopt``,
    the records a broker holds past the chosen survivor's log end on its history are
    taken into the recovered log (``adoptable``)."""
    if not survivors:
        raise TerseError("recover needs the properties of at least one surviving controller (--config)")
    ids = [f.node_id for f in survivors]
    if len(set(ids)) != len(ids):
        raise TerseError(f"The same node id was given twice: {ids}")
    if epoch_gap < 1:
        raise TerseError("--epoch-gap must be at least 1")
    chosen, why = longest(survivors)
    voters = chosen.voters
    if chosen.kraft_version < 1 or voters is None or len(voters) == 0:
        raise TerseError(f"Node {chosen.node_id}'s quorum has static voters (kraft.version 0, "
                         "controller.quorum.voters): recover writes a VotersRecord, which needs kraft.version 1. "
                         "Upgrade with kafka-features upgrade --feature kraft.version=1 before a loss, or set "
                         "controller.quorum.voters on the survivors to the survivors alone.")
    for f in survivors:
        if not voters.is_voter(VoterKey(f.node_id, f.directory_id)):
            raise TerseError(f"Node {f.node_id} ({f.where}) is not a voter of node {chosen.node_id}'s latest voter "
                             f"set {_ids(voters)} (with its directory id {uuid_to_str(f.directory_id)}): give only "
                             "surviving voters")
    lost = [n for n in voters.nodes if n.key.node_id not in ids]
    if not lost:
        raise AlreadyRecovered(
            f"The voter set in node {chosen.node_id}'s log ({_ids(voters)}, from offset {chosen.voters_offset}) is "
            "already the survivors: nothing to recover (a finished recover, or no voter lost). Start the node.")
    if len(survivors) >= majority(len(voters)):
        raise TerseError(f"{len(survivors)} of the {len(voters)} voters {_ids(voters)} survive, a majority: start "
                         "them and they elect a leader; then remove the lost voters with remove-controller")
    after = VoterSet(tuple(voters.node(i) for i in ids))
    seen = [e for f in (*survivors, *brokers) for e in (f.stored_epoch, f.last_epoch)]
    epoch = max(seen) + epoch_gap
    # what other nodes know committed (a snapshot, a recorded high watermark), and whether the chosen log has it
    markers = [(f, m, kind) for f in (*survivors, *brokers) if f is not chosen
               for m, kind in ((f.snapshot, "snapshot"), (f.hint, "recorded high watermark")) if m is not None]
    foreign = [(f, m, kind) for f, m, kind in markers if not holds_snapshot(chosen, m)]
    committed = max([chosen.committed_known, chosen.start_offset]
                    + [m.offset for f, m, kind in markers if holds_snapshot(chosen, m)])
    plan = Plan(chosen, why, sorted(survivors, key=lambda f: f.node_id), voters, after, lost, epoch,
                min(committed, chosen.end_offset), gap=epoch_gap, foreign_snapshots=foreign)
    if adopt:
        found = [a for a in (adoptable(chosen, b) for b in brokers) if a is not None]
        if found:
            plan.adopted = max(found, key=lambda a: (a.epochs[-1][0] if a.epochs else chosen.last_epoch, a.end,
                                                     -a.broker.node_id))
            taken = plan.adopted
            # the adopted broker's own snapshot or hint within what is taken is held now
            plan.foreign_snapshots = [(f, m, kind) for f, m, kind in foreign
                                      if not (f is taken.broker and m.offset <= taken.end)]
    plan.brokers = []
    for b in brokers:
        # below both log starts: committed records (snapshots), the same when the broker's snapshot is held
        keeps = common_end(plan.new_epochs(), plan.offset + 1, list(b.epochs), b.end_offset,
                           max(b.start_offset, chosen.start_offset))
        if any(f is b for f, _, _ in foreign):
            keeps = min(keeps, plan.committed_known)
        # the new batch's epoch is above every broker's, so no broker keeps anything from its offset on
        plan.brokers.append(BrokerLoss(b, min(plan.offset, keeps)))
    return plan


# -- checks against the live network ----------------------------------------------------------
def answering(nodes, timeout_s: float) -> tuple[list[str], list[str]]:
    """Try each endpoint of ``nodes`` (VoterNode). Returns (what answered, what did not and why)."""
    live, dead = [], []
    for node in nodes:
        for ep in node.endpoints:
            where = f"node {node.key.node_id} at {ep.host}:{ep.port} ({ep.name})"
            try:
                socket.create_connection((ep.host, ep.port), timeout=timeout_s).close()
                live.append(where)
            except OSError as exc:
                dead.append(f"{where}: {socket_error_text(exc)}")
    return live, dead


def write_recovery(log, store, plan: Plan, now_ms: int | None = None) -> None:
    """Append the batch (fsync'd), then replace quorum-state. ``log`` is a
    ``ReplicatedLog`` (the file log, or a simulation's), ``store`` its quorum-state store."""
    c = plan.chosen
    if log.end_offset() != c.end_offset or log.last_fetched_epoch() != c.last_epoch:
        raise TerseError(f"Node {c.node_id}'s log changed since it was read (end offset "
                         f"{log.end_offset()}, last epoch {log.last_fetched_epoch()}; expected {c.end_offset}, "
                         f"{c.last_epoch}): is the node running? Nothing was written.")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    for data in plan.adopted.datas if plan.adopted is not None else ():
        log.append(data)  # killed after these, a rerun finds them in the survivor's log
    log.append(plan.batch(now))
    log.flush()
    store.write(plan.election())


# -- the command ------------------------------------------------------------------------------
@dataclass
class Survivor:
    config: str
    props: dict
    facts: LogFacts
    endpoints: list  # its own controller endpoints (client.Endpoint), which must not answer


def load_survivor(config_path: str) -> Survivor:
    from . import controller_config as cc
    from .metadata_dir import MetadataDir

    props = cc.load_command_config(config_path)
    node_id = cc.controller_id(props)
    d = MetadataDir(cc.metadata_directory(props))
    if d.meta.node_id != node_id:
        raise TerseError(f"{config_path} says node.id={node_id} but {d.root}/meta.properties says {d.meta.node_id}")
    return Survivor(config_path, props, facts_of_dir(d), cc.controller_endpoints(props))


def load_broker(directory: str) -> LogFacts:
    from .metadata_dir import MetadataDir

    return facts_of_dir(MetadataDir(directory), with_voters=False)


def run(configs: list[str], broker_dirs: list[str], gone: bool, dry_run: bool, epoch_gap: int = EPOCH_GAP,
        timeout_ms: int = 2000, out=print, adopt: bool = True) -> int:
    """``kraft-metadata-quorum recover``: 0 when recovered (or already, or a dry run), 1 when refused."""
    from kraft_server.log.file_log import FileReplicatedLog
    from kraft_server.log.quorum_state_file import FileQuorumStateStore

    survivors = [load_survivor(c) for c in configs]
    by_id = {s.facts.node_id: s for s in survivors}
    try:
        plan = make_plan([s.facts for s in survivors], [load_broker(d) for d in broker_dirs], epoch_gap, adopt)
    except AlreadyRecovered as done:  # the state wanted is there already (a rerun): not a refusal
        out(str(done))
        return 0
    out(plan.text())
    timeout = timeout_ms / 1000
    own_live = []
    for s in survivors:
        for ep in s.endpoints:
            try:
                socket.create_connection((ep.host, ep.port), timeout=timeout).close()
                own_live.append(f"node {s.facts.node_id} at {ep.host}:{ep.port}")
            except OSError:
                pass
    if own_live:
        raise TerseError(f"Refusing: a survivor still answers on its controller listener ({'; '.join(own_live)}). "
                         "Stop it first: recover works on a stopped node's directory.")
    live, dead = answering(plan.lost, timeout)
    if live:
        raise TerseError(f"Refusing: a lost voter still answers on its controller endpoint ({'; '.join(live)}). "
                         "A voter that answers is not gone: recovering now would make two quorums. Stop it, "
                         "or let the quorum heal.")
    out("Lost voters checked unreachable: " + "; ".join(dead) + ".")
    if dry_run:
        out("Dry run: nothing written.")
        return 0
    if not gone:
        raise TerseError(f"Refusing: nothing written. Pass {LOST_VOTERS_FLAG} to confirm that voters "
                         f"{[n.key.node_id for n in plan.lost]} and their disks will never come back (one that "
                         "came back with its old log could elect a second leader).")
    chosen = by_id[plan.chosen.node_id]
    from . import controller_config as cc

    with FileReplicatedLog.open(cc.metadata_directory(chosen.props)) as log:
        write_recovery(log, FileQuorumStateStore(log.directory), plan)
    others = [s.facts.node_id for s in survivors if s is not chosen]
    out(f"Recovered: node {plan.chosen.node_id}'s log holds the voter set {_ids(plan.voters_after)} at offset "
        f"{plan.offset} (leader epoch {plan.epoch}); its quorum-state epoch is {plan.epoch}.")
    start = f"Start node {plan.chosen.node_id}" + (f" and nodes {others}" if others else "")
    out(f"{start}: {'they elect a leader' if others else 'it leads alone'} at epoch {plan.epoch + 1} or later. "
        "Then grow the quorum back, one new controller at a time: kraft-metadata-quorum --bootstrap-controller "
        "<survivor's controller host:port> add-controller --command-config <new controller's properties>.")
    return 0
