"""``reassign --voters 4,5,6``: reach a target voter set by single-member changes
(KIP-642's reassignment, driven from the client with KIP-853's AddRaftVoter and
RemoveRaftVoter, since no released Kafka has a server-side reassignment).

The plan is a pure function of one DescribeQuorum answer (:func:`plan`), and the
driver (:func:`run`) recomputes it before every step, so an interrupted run
resumes from wherever the quorum is when it is started again:

1. If the server reports ``CommittedVoters`` (DescribeQuorum v3) and they differ
   from ``CurrentVoters``, a change is still uncommitted: wait for it first.
2. Refuse unsafe targets before touching anything: a static quorum (kraft.version 0
   in the leader's ApiVersions, where no voter can change: the message gives the
   ``kafka-features`` upgrade), an empty set, an id that is
   neither a voter nor an observer, an observer that is not caught up (it last
   caught up more than ``max_lag_ms`` ago, by the leader's clock), an id with two
   observer directories, a joining voter whose endpoint cannot be found.
3. Add the target voters that are not voters yet (each a caught-up observer),
   then remove the voters not in the target, the current leader last: the
   quorum only ever grows before it shrinks, one member at a time.
4. After each change, wait until it is committed: the voter appears in (or
   leaves) ``CommittedVoters``, or, from a server without v3, ``CurrentVoters``
   shows it and the high watermark reaches the leader's log end offset as seen
   right after the change was acknowledged. The leader answers Add/RemoveRaftVoter
   once the change commits, so that answer's arrival is the commit time printed;
   after removing the leader, the time until the tool reaches the new leader is
   printed apart (it includes the tool's retry back-off, not only the election).

Brokers (and any other observer) find the leader only through the controllers they
fetch from (:mod:`.brokers`). Before the first step the observers fetching from the
leader are noted; with ``--broker-bootstrap-server`` each broker's own
``controller.quorum.bootstrap.servers`` is read (DescribeConfigs), and a move that
leaves a broker naming none of the staying voters is refused unless ``--force``
(without the flag the tool only warns that it could not check). After the last step
the tool waits until every noted observer fetches from the leader of the new voter
set, up to ``--follow-timeout-ms``, and fails (exit 1) naming those that do not.

Before the first step the plan is printed with what it does to fault tolerance
(the voter failures a quorum survives, ``floor((n - 1) / 2)``, before and after),
and a plan that lowers it, or leaves fewer than 3 voters out of 3 or more, is
refused unless ``--force``: ``--voters 2`` on three voters would otherwise leave
one voter without a word. ``--dry-run`` prints the same and changes nothing.

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

from wire.uuids import uuid_to_str
from wire.errors import ErrorCode

from .brokers import (
    BOOTSTRAP_KEY, VOTERS_KEY, bootstrap_problems, fetching_observers, format_addresses,
)
from .client import AdminClient, Endpoint, QuorumInfo, Replica
from .describe import uncommitted_changes
from .errors import KafkaApiError, TerseError

POLL_S = 0.2  # how often commit progress is polled


class Refused(TerseError):
    """The target is unsafe or cannot be reached; nothing was changed."""


class Stranded(TerseError):
    """The voters changed, but observers that followed the old leader do not follow the new one."""

MOVE_DOC = "docs/operations/migrate.md"


def static_quorum_text(bootstrap: str) -> str:
    """Why a quorum at kraft.version 0 cannot be reassigned, and the command that fixes it."""
    return ("Refusing to reassign: the controller quorum is static (kraft.version 0, its voters set by "
            "controller.quorum.voters), and voters can be added or removed only at kraft.version 1 (KIP-853). "
            "Upgrade it first, with Kafka 4.1 or later on every controller, then run this command again:\n"
            f"  kafka-features --bootstrap-controller {bootstrap} upgrade --feature kraft.version=1\n"
            f"({MOVE_DOC}, step 1)")


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
    """How long ago the observer last caught up, by the leader's clock: the leader's
    own last caught-up time is its "now" in the answer (None: never caught up)."""
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
            state = "has never caught up" if lag_ms is None else f"last caught up {lag_ms} ms ago"
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


def fault_tolerance(voters: int) -> int:
    """The voter failures a quorum of ``voters`` survives: a majority must remain."""
    return max(0, (voters - 1) // 2)


def _failures(n: int) -> str:
    return f"{n} failure" if n == 1 else f"{n} failures"


def _voters(n: int) -> str:
    return f"{n} voter" if n == 1 else f"{n} voters"


def _survive(voters: int, failures: int) -> str:
    verb = "survives" if voters == 1 else "survive"
    return f"{_voters(voters)} {verb} {_failures(failures)}"


def tolerance_text(before: int, after: int) -> str:
    """One line: what the change does to fault tolerance."""
    was, will = fault_tolerance(before), fault_tolerance(after)
    trend = "lower" if will < was else "higher" if will > was else "unchanged"
    return (f"Fault tolerance: {_survive(before, was)} now; {_survive(after, will)} after ({trend})")


def unsafe_reason(before: int, after: int) -> str | None:
    """Why going from ``before`` to ``after`` voters needs ``--force`` (None: it does not)."""
    was, will = fault_tolerance(before), fault_tolerance(after)
    if before >= 3 and after < 3:
        return (f"Refusing to shrink the controller quorum from {before} voters to {after}: fewer than 3 voters "
                f"survive {_failures(will)} instead of {was}; pass --force to do it anyway")
    if will < was:
        return (f"Refusing to lower the controller quorum's fault tolerance from {_failures(was)} to {will} "
                f"({before} voters to {after}); pass --force to do it anyway")
    return None


def _took(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


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
                 max_lag_ms: int, step_timeout_ms: int, force: bool = False, out=None,
                 broker_admin: AdminClient | None = None, follow_timeout_ms: int = 30000):
        self.admin = admin
        self.broker_admin = broker_admin  # the brokers, to read their quorum settings
        self.follow_timeout_s = follow_timeout_ms / 1000
        self.watch: set[int] = set()  # observers that followed the leader before the move
        self.staying: list[tuple[str, int]] = []  # the target voters' controller addresses
        self.target = target
        self.explicit = explicit_endpoints
        self.max_lag_ms = max_lag_ms
        self.step_timeout_s = step_timeout_ms / 1000
        self.force = force
        self.out = out
        self.done = 0
        self.voter_count: int | None = None  # as last seen
        self.adding: Step | None = None  # an add sent and not yet seen committed

    def say(self, text: str) -> None:
        print(text, file=self.out or sys.stdout, flush=True)

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

    def check_dynamic(self, quorum: QuorumInfo) -> None:
        """Refused on a static quorum (kraft.version 0), whose leader refuses every
        voter change (Kafka answers AddRaftVoter with UNSUPPORTED_VERSION): better said
        before a plan is printed, with the upgrade that lifts it."""
        if {v.replica_id for v in quorum.voters} == set(self.target):
            return
        if self.admin.kraft_version() == 0:
            raise Refused(static_quorum_text(format_addresses(self.admin.bootstrap)))

    def run(self, dry_run: bool) -> int:
        while True:
            quorum = self.wait_settled(self.admin.describe_quorum())
            if self.done == 0:
                self.check_dynamic(quorum)
            steps = plan(quorum, self.target, self.endpoints(quorum), self.max_lag_ms)
            voters = format_ids(v.replica_id for v in quorum.voters)
            if not steps:
                if self.done:
                    self.wait_followers()
                self.say(f"The controller quorum's voters are {voters}: "
                         + ("nothing to do." if self.done == 0 else "reassignment complete."))
                return 0
            total = self.done + len(steps)
            self.voter_count = len(quorum.voters)
            if self.done == 0:
                self.show_plan(quorum, steps, dry_run)
                self.check_brokers(quorum, steps)
                if dry_run:
                    return 0
            self.execute(quorum, steps[0], self.done + 1, total)
            self.done += 1

    def show_plan(self, quorum: QuorumInfo, steps: list[Step], dry_run: bool) -> None:
        """The steps and the fault tolerance before and after; Refused if unsafe."""
        voters = format_ids(v.replica_id for v in quorum.voters)
        head = "DRY RUN of reassigning" if dry_run else "Reassigning"
        self.say(f"{head} the controller quorum from {voters} to {format_ids(self.target)} "
                 f"in {len(steps)} step(s):")
        for k, step in enumerate(steps, start=1):
            leader = step.kind == "remove" and step.replica.replica_id == quorum.leader_id
            self.say(f"  Step {k} of {len(steps)}: {step.describe()}" + (", the current leader" if leader else ""))
        before, after = len(quorum.voters), len(self.target)
        reason = unsafe_reason(before, after)
        self.say(tolerance_text(before, after) + ("; --force given" if reason and self.force else ""))
        if reason and not self.force:
            raise Refused(reason)

    def check_brokers(self, quorum: QuorumInfo, steps: list[Step]) -> None:
        """Note the observers to keep; refuse (unless --force) a move after which a
        broker would ask only controllers that left."""
        added = {s.replica.replica_id: s.endpoints for s in steps if s.kind == "add"}
        self.staying = []
        for node_id in self.target:
            endpoints = added.get(node_id) or tuple(quorum.nodes.get(node_id) or ())
            self.staying += [(e.host, e.port) for e in endpoints[:1]]
        leaving = {v.replica_id for v in quorum.voters} - set(self.target)
        self.watch = fetching_observers(quorum) - {v.replica_id for v in quorum.voters} - set(self.target)
        if not leaving:
            return
        if self.broker_admin is None:
            if self.watch:
                self.say(f"Warning: observers {format_ids(sorted(self.watch))} (brokers?) fetch from the leader, and "
                         f"their {BOOTSTRAP_KEY} was not checked (pass --broker-bootstrap-server): a broker that "
                         f"names only controllers that leave loses the quorum when the leader leaves.")
            return
        configs = self.broker_admin.broker_configs([BOOTSTRAP_KEY, VOTERS_KEY])
        problems = bootstrap_problems(configs, self.staying)
        if not problems:
            self.say(f"Brokers {format_ids(sorted(configs))}: each names a voter that stays in {BOOTSTRAP_KEY}.")
            return
        text = ("After this move these brokers could not find the leader:\n  " + "\n  ".join(problems)
                + f"\nFirst restart each broker, one at a time, with "
                  f"{BOOTSTRAP_KEY}={format_addresses(self.staying)} ({MOVE_DOC})")
        if self.force:
            self.say(f"Warning: {text}; --force given")
            return
        raise Refused(text + "; or pass --force to move anyway")

    def wait_followers(self) -> None:
        """After the last step: every noted observer fetching from the current leader."""
        if not self.watch:
            return
        started = time.monotonic()
        deadline = started + self.follow_timeout_s
        while True:
            quorum = self.admin.describe_quorum()
            missing = self.watch - fetching_observers(quorum)
            if not missing:
                self.say(f"Observers {format_ids(sorted(self.watch))} fetch from leader {quorum.leader_id} "
                         f"({_took(time.monotonic() - started)} after the last step).")
                return
            if time.monotonic() >= deadline:
                addresses = format_addresses(self.staying) if self.staying else "the new voters' addresses"
                raise Stranded(
                    f"The voters are {format_ids(v.replica_id for v in quorum.voters)}, but observers "
                    f"{format_ids(sorted(missing))} have not fetched from leader {quorum.leader_id} within "
                    f"{self.follow_timeout_s:.0f} s: they do not find the new quorum. A broker asks only its "
                    f"{BOOTSTRAP_KEY} for the leader; restart each, one at a time, with "
                    f"{BOOTSTRAP_KEY}={addresses} ({MOVE_DOC}).")
            time.sleep(POLL_S)  # poll interval

    def resume_hint(self) -> str:
        """How to resume after an interruption: with --force when the quorum grew
        so far that the removals left now lower its fault tolerance; an add that was
        interrupted after it was sent may still commit, and that one more voter can
        be what needs --force."""
        n, target = self.voter_count, len(self.target)
        if self.force or n is None:
            return "Run the same command again to resume."
        if unsafe_reason(n, target):
            return (f"Run the same command with --force to resume: the quorum has {_voters(n)} now, "
                    f"so the removals left lower its fault tolerance.")
        if self.adding is not None and unsafe_reason(n + 1, target):
            return (f"Run the same command again to resume; if adding controller {self.adding.replica.replica_id} "
                    f"committed before the interruption, the quorum has {_voters(n + 1)} and the rerun needs "
                    f"--force (the removals left lower its fault tolerance).")
        return "Run the same command again to resume."

    def execute(self, quorum: QuorumInfo, step: Step, k: int, total: int) -> None:
        line = f"Step {k} of {total}: {step.describe()}"
        if step.kind == "add":
            leader = quorum.leader()
            lag = leader.log_end_offset - step.replica.log_end_offset
            lag_ms = caught_up_lag_ms(quorum, step.replica)
            eps = ", ".join(str(e) for e in step.endpoints)
            line += f" at {eps}; lag {lag} records, last caught up {lag_ms} ms ago"
        elif step.replica.replica_id == quorum.leader_id:
            line += ", the current leader: a new leader will be elected"
        self.say(line)
        started = time.monotonic()
        deadline = started + self.step_timeout_s
        self.adding = step if step.kind == "add" else None
        answered = self.request(step, deadline)
        answered_at = time.monotonic()
        after = self.admin.describe_quorum()
        target_offset = log_end_offset(after)
        while not _committed(after, step, target_offset):
            if time.monotonic() >= deadline:
                raise KafkaApiError(ErrorCode.REQUEST_TIMED_OUT,
                                    f"Step {k} ({step.describe()}) did not commit within {self.step_timeout_s:.0f} s")
            time.sleep(POLL_S)  # poll interval
            after = self.admin.describe_quorum()
        # The leader answers once the change commits; without an answer (a retry
        # found the change already in the log) the poll that saw it is the time.
        committed_s = (answered_at if answered else time.monotonic()) - started
        how = "" if answered else ", as polled"
        voters = format_ids(v.replica_id for v in after.voters)
        self.voter_count, self.adding = len(after.voters), None
        line = f"  committed at the quorum {_took(committed_s)} after the request{how}: voters {voters}"
        if step.kind == "remove" and step.replica.replica_id == quorum.leader_id:
            self.say(f"{line}, high watermark {after.high_watermark}")
            after = self.wait_new_leader(after, step.replica.replica_id, deadline)
            self.say(f"  the tool found the new leader {after.leader_id} (epoch {after.leader_epoch}) "
                     f"{_took(time.monotonic() - started)} after the request (its polling and retry back-off "
                     f"included: the election itself can be quicker)")
        else:
            self.say(f"{line}, leader {after.leader_id}, epoch {after.leader_epoch}, "
                     f"high watermark {after.high_watermark}")

    def request(self, step: Step, deadline: float) -> bool:
        """Send the change; True when the leader answered it (it answers on commit),
        False when a busy leader's retry found it already in the log."""
        while True:
            try:
                if step.kind == "add":
                    self.admin.add_raft_voter(step.replica.replica_id, step.replica.directory_id,
                                              list(step.endpoints))
                else:
                    self.admin.remove_raft_voter(step.replica.replica_id, step.replica.directory_id)
                return True
            except KafkaApiError as err:
                # Busy leader (pending change, no HWM yet, commit slower than
                # quorum.request.timeout.ms): the change may even be in the log.
                if err.code not in (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.DUPLICATE_VOTER,
                                    ErrorCode.VOTER_NOT_FOUND):
                    raise
                current = self.admin.describe_quorum()
                if (step.replica.key in {v.key for v in current.voters}) == (step.kind == "add"):
                    return False  # in the log already; the caller sees it commit
                if err.code != ErrorCode.REQUEST_TIMED_OUT or time.monotonic() >= deadline:
                    raise
                time.sleep(POLL_S)  # back off before asking again

    def wait_new_leader(self, quorum: QuorumInfo, old_leader: int, deadline: float) -> QuorumInfo:
        """After the leader removed itself: the first answer from its successor."""
        while quorum.leader_id == old_leader:
            if time.monotonic() >= deadline:
                raise KafkaApiError(ErrorCode.REQUEST_TIMED_OUT,
                                    f"No new leader after removing leader {old_leader} "
                                    f"within {self.step_timeout_s:.0f} s")
            time.sleep(POLL_S)  # poll interval
            quorum = self.admin.describe_quorum()
        return quorum
