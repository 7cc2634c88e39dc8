"""``reassign --voters 4,5,6``: reach a target voter set by single-member changes
(KIP-642's reassignment, driven from the client with KIP-853's AddRaftVoter and
RemoveRaftVoter, since no released Kafka has a server-side reassignment).

The plan is a pure function of one DescribeQuorum answer (:func:`plan`), and the
driver (:func:`run`) recomputes it before every step, so an interrupted run
resumes from wherever the quorum is when it is started again:

1. If the server reports ``CommittedVoters`` (DescribeQuorum v3) and they differ
   from ``CurrentVoters``, a change is still uncommitted: wait for it first.
2. Refuse unsafe targets before touching anything: an empty set, an id that is
   neither a voter nor an observer, an observer that is not caught up (its last
   caught-up time more than ``max_lag_ms`` behind the leader's), an id with two
   observer directories, a joining voter whose endpoint cannot be found.
3. Add the target voters that are not voters yet (each a caught-up observer),
   then remove the voters not in the target, the current leader last: the
   quorum only ever grows before it shrinks, one member at a time.
4. After each change, wait until it is committed: the voter appears in (or
   leaves) ``CommittedVoters``, or, from a server without v3, ``CurrentVoters``
   shows it and the high watermark reaches the leader's log end offset as seen
   right after the change was acknowledged.

A joining voter's endpoint (AddRaftVoter needs it) comes from ``--voter-endpoint
ID@NAME://HOST:PORT`` or else from DescribeCluster: with
``--bootstrap-controller`` a Kafka controller lists every registered controller,
observers included, on the listener asked; the name is the leader's first
listener name in DescribeQuorum's ``Nodes``.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from kraft_server.log.uuids import uuid_to_str
from wire.errors import ErrorCode

from .client import AdminClient, Endpoint, QuorumInfo, Replica
from .describe import uncommitted_changes
from .errors import KafkaApiError, TerseError

POLL_S = 0.2  # how often commit progress is polled


class Refused(TerseError):
    """The target is unsafe or cannot be reached; nothing was changed."""


@dataclass(frozen=True)
class Step:
    kind: str  # "add" or "remove"
    replica: Replica
    endpoints: tuple[Endpoint, ...] = ()

    def describe(self) -> str:
        verb = "adding" if self.kind == "add" else "removing"
        return f"{verb} controller {self.replica.replica_id} (directory id {uuid_to_str(self.replica.directory_id)})"


def parse_voters(text: str) -> list[int]:
    ids: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            value = int(part)
        except ValueError:
            raise Refused(f"Invalid controller id in --voters: {part!r}") from None
        if value < 0:
            raise Refused(f"Invalid negative controller id in --voters: {value}")
        if value not in ids:
            ids.append(value)
    if not ids:
        raise Refused("--voters must name at least one controller: an empty voter set has no quorum")
    return ids


def parse_voter_endpoint(text: str) -> tuple[int, Endpoint]:
    """``ID@NAME://HOST:PORT``."""
    node, sep, url = text.partition("@")
    name, sep2, address = url.partition("://")
    host, sep3, port = address.rpartition(":")
    if not (sep and sep2 and sep3) or not node.strip().isdigit() or not port.isdigit() or not name:
        raise Refused(f"Invalid --voter-endpoint {text!r}: expected ID@NAME://HOST:PORT")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return int(node), Endpoint(name.upper(), host, int(port))


def caught_up_lag_ms(quorum: QuorumInfo, observer: Replica) -> int | None:
    """How far the observer's last caught-up time trails the leader's (None: never)."""
    leader = quorum.leader()
    if observer.last_caught_up_timestamp is None or leader.last_caught_up_timestamp is None:
        return None
    return max(0, leader.last_caught_up_timestamp - observer.last_caught_up_timestamp)


def plan(quorum: QuorumInfo, target: list[int], endpoints: dict[int, tuple[Endpoint, ...]],
         max_lag_ms: int) -> list[Step]:
    """The single-member changes from ``quorum``'s voters to ``target``."""
    if not target:
        raise Refused("--voters must name at least one controller: an empty voter set has no quorum")
    voter_ids = [v.replica_id for v in quorum.voters]
    adds: list[Step] = []
    problems: list[str] = []
    for node_id in target:
        if node_id in voter_ids:
            continue
        candidates = [o for o in quorum.observers if o.replica_id == node_id]
        if not candidates:
            problems.append(f"controller {node_id} is unknown: it is neither a voter nor an observer "
                            f"of the quorum (start it, formatted with --no-initial-controllers, and let it catch up)")
            continue
        if len(candidates) > 1:
            dirs = ", ".join(uuid_to_str(c.directory_id) for c in candidates)
            problems.append(f"controller {node_id} has several observer directories ({dirs}); "
                            f"add the right one with add-controller")
            continue
        observer = candidates[0]
        lag_ms = caught_up_lag_ms(quorum, observer)
        if lag_ms is None or lag_ms > max_lag_ms:
            state = "has never caught up" if lag_ms is None else f"caught up {lag_ms} ms before the leader"
            problems.append(f"controller {node_id} is not a caught-up observer: it {state} "
                            f"(limit {max_lag_ms} ms)")
            continue
        if node_id not in endpoints:
            problems.append(f"cannot find the endpoint of controller {node_id}; "
                            f"pass --voter-endpoint {node_id}@NAME://HOST:PORT")
            continue
        adds.append(Step("add", observer, endpoints[node_id]))
    if problems:
        raise Refused("Refusing to reassign the controller quorum to "
                      f"{format_ids(target)}:\n  " + "\n  ".join(problems))
    removes = [Step("remove", v) for v in quorum.voters
               if v.replica_id not in target and v.replica_id != quorum.leader_id]
    removes += [Step("remove", v) for v in quorum.voters
                if v.replica_id not in target and v.replica_id == quorum.leader_id]
    return adds + removes


def format_ids(ids) -> str:
    return "[" + ", ".join(str(i) for i in ids) + "]"


def _unsettled(quorum: QuorumInfo) -> str | None:
    added, removed = uncommitted_changes(quorum)
    if added or removed:
        what = [f"adding {r.replica_id}" for r in added] + [f"removing {r.replica_id}" for r in removed]
        return f"an uncommitted voter change ({', '.join(what)}) to commit"
    if all(v.replica_id != quorum.leader_id for v in quorum.voters):
        return f"a new leader: leader {quorum.leader_id} is no longer a voter"
    return None


def log_end_offset(quorum: QuorumInfo) -> int:
    """The leader's log end offset (the highest known, if it has left the voters)."""
    for r in [*quorum.voters, *quorum.observers]:
        if r.replica_id == quorum.leader_id:
            return r.log_end_offset
    return max((r.log_end_offset for r in [*quorum.voters, *quorum.observers]), default=-1)


def _committed(quorum: QuorumInfo, step: Step, target_offset: int) -> bool:
    key = step.replica.key
    current = {v.key for v in quorum.voters}
    wanted_in = step.kind == "add"
    if quorum.committed_voters is not None:
        committed = {v.key for v in quorum.committed_voters}
        return (key in committed) == wanted_in and (key in current) == wanted_in
    return (key in current) == wanted_in and quorum.high_watermark >= target_offset


class Reassigner:
    def __init__(self, admin: AdminClient, target: list[int], *, explicit_endpoints: dict[int, Endpoint],
                 max_lag_ms: int, step_timeout_ms: int, out=sys.stdout):
        self.admin = admin
        self.target = target
        self.explicit = explicit_endpoints
        self.max_lag_ms = max_lag_ms
        self.step_timeout_s = step_timeout_ms / 1000
        self.out = out
        self.done = 0

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def endpoints(self, quorum: QuorumInfo) -> dict[int, tuple[Endpoint, ...]]:
        found = {node_id: (ep,) for node_id, ep in self.explicit.items()}
        missing = [i for i in self.target
                   if i not in found and i not in {v.replica_id for v in quorum.voters}]
        if missing and self.admin.controllers:
            leader_eps = quorum.nodes.get(quorum.leader_id) or []
            if leader_eps:
                name = leader_eps[0].name
                for node in self.admin.describe_cluster().nodes:
                    if node.node_id in missing:
                        found[node.node_id] = (Endpoint(name, node.host, node.port),)
        return found

    def wait_settled(self, quorum: QuorumInfo) -> QuorumInfo:
        """Wait out an uncommitted voter change, and a leader that removed itself
        (it still answers, as leader, until the removal commits and it resigns)."""
        what = _unsettled(quorum)
        if what is None:
            return quorum
        self.say(f"Waiting for {what}")
        deadline = time.monotonic() + self.step_timeout_s
        while time.monotonic() < deadline:
            time.sleep(POLL_S)  # poll interval
            quorum = self.admin.describe_quorum()
            if _unsettled(quorum) is None:
                return quorum
        raise KafkaApiError(ErrorCode.REQUEST_TIMED_OUT,
                            f"Still waiting for {what} after {self.step_timeout_s:.0f} s")

    def run(self, dry_run: bool) -> int:
        while True:
            quorum = self.wait_settled(self.admin.describe_quorum())
            steps = plan(quorum, self.target, self.endpoints(quorum), self.max_lag_ms)
            voters = format_ids(v.replica_id for v in quorum.voters)
            if not steps:
                self.say(f"The controller quorum's voters are {voters}: "
                         + ("nothing to do." if self.done == 0 else "reassignment complete."))
                return 0
            total = self.done + len(steps)
            if dry_run:
                self.say(f"DRY RUN of reassigning the controller quorum from {voters} to "
                         f"{format_ids(self.target)} in {len(steps)} step(s):")
                for k, step in enumerate(steps, start=1):
                    self.say(f"  Step {k} of {len(steps)}: {step.describe()}")
                return 0
            if self.done == 0:
                self.say(f"Reassigning the controller quorum from {voters} to {format_ids(self.target)} "
                         f"in {len(steps)} step(s)")
            self.execute(quorum, steps[0], self.done + 1, total)
            self.done += 1

    def execute(self, quorum: QuorumInfo, step: Step, k: int, total: int) -> None:
        line = f"Step {k} of {total}: {step.describe()}"
        if step.kind == "add":
            leader = quorum.leader()
            lag = leader.log_end_offset - step.replica.log_end_offset
            lag_ms = caught_up_lag_ms(quorum, step.replica)
            eps = ", ".join(str(e) for e in step.endpoints)
            line += f" at {eps}; lag {lag} records, caught up {lag_ms} ms before the leader"
        elif step.replica.replica_id == quorum.leader_id:
            line += ", the current leader: a new leader will be elected"
        self.say(line)
        started = time.monotonic()
        deadline = started + self.step_timeout_s
        while True:
            try:
                if step.kind == "add":
                    self.admin.add_raft_voter(step.replica.replica_id, step.replica.directory_id,
                                              list(step.endpoints))
                else:
                    self.admin.remove_raft_voter(step.replica.replica_id, step.replica.directory_id)
                break
            except KafkaApiError as err:
                # Busy leader (pending change, no HWM yet, commit slower than
                # quorum.request.timeout.ms): the change may even be in the log.
                if err.code not in (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.DUPLICATE_VOTER,
                                    ErrorCode.VOTER_NOT_FOUND):
                    raise
                current = self.admin.describe_quorum()
                if (step.replica.key in {v.key for v in current.voters}) == (step.kind == "add"):
                    break  # in the log already; the wait below sees it commit
                if err.code != ErrorCode.REQUEST_TIMED_OUT or time.monotonic() >= deadline:
                    raise
                time.sleep(POLL_S)  # back off before asking again
        after = self.admin.describe_quorum()
        target_offset = log_end_offset(after)
        while not _committed(after, step, target_offset):
            if time.monotonic() >= deadline:
                raise KafkaApiError(ErrorCode.REQUEST_TIMED_OUT,
                                    f"Step {k} ({step.describe()}) did not commit within {self.step_timeout_s:.0f} s")
            time.sleep(POLL_S)  # poll interval
            after = self.admin.describe_quorum()
        voters = format_ids(v.replica_id for v in after.voters)
        self.say(f"  committed in {time.monotonic() - started:.1f} s: voters {voters}, "
                 f"leader {after.leader_id}, epoch {after.leader_epoch}, high watermark {after.high_watermark}")
