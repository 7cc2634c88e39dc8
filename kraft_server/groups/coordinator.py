"""The classic group coordinator, sans-I/O: Kafka's rules for JoinGroup, SyncGroup,
Heartbeat, LeaveGroup and the offset-commit checks, fed ``now_ms`` and driven by
``tick(now_ms)`` (which returns the next deadline). Answers that must wait (JoinGroup
until the rebalance completes, SyncGroup until the leader assigns) are callbacks the
coordinator calls later; every other call returns its answer.

The state machine follows Kafka's classic ``GroupMetadataManager``/``ClassicGroup``:

- JoinGroup with no member id: v4+ dynamic members get MEMBER_ID_REQUIRED with a fresh id
  (KIP-394) and must rejoin with it within the session timeout; then the member is added
  and a rebalance starts (Empty/Stable/CompletingRebalance -> PreparingRebalance).
- The first rebalance of an Empty group waits ``group.initial.rebalance.delay.ms``
  (extended while new members arrive, capped by the rebalance timeout); later ones
  complete as soon as every known member has rejoined, or at the rebalance timeout, when
  members that did not rejoin are removed.
- Completing the join bumps the generation, picks the protocol, names a leader (kept if
  still a member) and answers every parked JoinGroup; the leader gets every member's
  metadata. The group is then CompletingRebalance until the leader's SyncGroup brings the
  assignment (-> Stable); members that send no SyncGroup within the rebalance timeout are
  removed and the group rebalances again.
- A member that neither heartbeats nor commits for ``session.timeout.ms`` is removed
  (a member parked in JoinGroup/SyncGroup is kept alive), which rebalances the group.
- Static membership (KIP-345): a JoinGroup carrying a known ``group.instance.id`` with
  no member id replaces the old member id (the old one is then fenced:
  FENCED_INSTANCE_ID); in a Stable group whose protocol would not change the member
  keeps its assignment with no rebalance (a returning leader is told to skip the
  assignment on v9+, KIP-814), otherwise the group rebalances. Static members skip
  MEMBER_ID_REQUIRED.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field

from wire.errors import ErrorCode

from .group import Group, GroupState, Member

log = logging.getLogger(__name__)

E = ErrorCode
PREPARING, COMPLETING, STABLE, EMPTY = (GroupState.PREPARING_REBALANCE, GroupState.COMPLETING_REBALANCE,
                                        GroupState.STABLE, GroupState.EMPTY)


@dataclass(frozen=True)
class GroupSettings:
    """Kafka's broker properties of the same names (defaults as in Kafka 4.3.1)."""

    initial_rebalance_delay_ms: int = 3000  # group.initial.rebalance.delay.ms
    min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    max_session_timeout_ms: int = 1800000  # group.max.session.timeout.ms
    max_size: int = 2147483647  # group.max.size
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    offsets_retention_ms: int = 7 * 24 * 3600 * 1000  # offsets.retention.minutes (10080)
    offsets_retention_check_interval_ms: int = 600000  # offsets.retention.check.interval.ms

    @classmethod
    def from_config(cls, config) -> "GroupSettings":
        return cls(initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
                   min_session_timeout_ms=config["group.min.session.timeout.ms"],
                   max_session_timeout_ms=config["group.max.session.timeout.ms"],
                   max_size=config["group.max.size"],
                   offset_metadata_max_bytes=config["offset.metadata.max.bytes"],
                   offsets_retention_ms=config["offsets.retention.minutes"] * 60000,
                   offsets_retention_check_interval_ms=config["offsets.retention.check.interval.ms"])


@dataclass
class JoinResult:
    error: int
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)
    skip_assignment: bool = False  # v9+: a returning static leader must not reassign


@dataclass
class SyncResult:
    error: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    require_known_member_id: bool  # v4+ (KIP-394)
    supports_skip_assignment: bool = False  # v9+ (KIP-814)


class GroupCoordinator:
    def __init__(self, settings: GroupSettings = GroupSettings(), new_id=None):
        self.settings = settings
        self.groups: dict[str, Group] = {}
        self._new_id = new_id or (lambda: str(uuid.uuid4()))

    # -- lookups ----------------------------------------------------------------------
    def group(self, group_id: str) -> Group | None:
        return self.groups.get(group_id)

    def ensure_group(self, group_id: str, now: int = 0) -> Group:
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = Group(group_id, state_since=now)
        return group

    def _member_error(self, group: Group | None, member_id: str, instance_id: str | None) -> int:
        """UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID / NONE for a member's request."""
        if group is None or group.state is GroupState.DEAD:
            return E.UNKNOWN_MEMBER_ID
        if instance_id is not None and instance_id in group.static_members:
            if group.static_members[instance_id] != member_id:
                return E.FENCED_INSTANCE_ID
        if member_id not in group.members:
            return E.UNKNOWN_MEMBER_ID
        return E.NONE

    # -- JoinGroup --------------------------------------------------------------------
    def join(self, req: JoinRequest, now: int, reply) -> None:
        s = self.settings
        if not req.group_id:
            return reply(JoinResult(E.INVALID_GROUP_ID, req.member_id))
        if not s.min_session_timeout_ms <= req.session_timeout_ms <= s.max_session_timeout_ms:
            return reply(JoinResult(E.INVALID_SESSION_TIMEOUT, req.member_id))
        group = self.groups.get(req.group_id)
        if req.member_id and (group is None or (req.member_id not in group.members
                                                and req.member_id not in group.pending_members)):
            return reply(JoinResult(E.UNKNOWN_MEMBER_ID, req.member_id))
        group = self.ensure_group(req.group_id, now)
        if not group.supports(req.protocol_type, [n for n, _ in req.protocols]):
            return reply(JoinResult(E.INCONSISTENT_GROUP_PROTOCOL, req.member_id))
        if not req.member_id:
            return self._join_unknown(group, req, now, reply)
        return self._join_known(group, req, now, reply)

    def _join_unknown(self, group: Group, req: JoinRequest, now: int, reply) -> None:
        if len(group.members) + len(group.pending_members) >= self.settings.max_size:
            return reply(JoinResult(E.GROUP_MAX_SIZE_REACHED))
        prefix = req.group_instance_id if req.group_instance_id is not None else req.client_id
        member_id = f"{prefix}-{self._new_id()}"
        if req.group_instance_id is not None:
            old = group.static_members.get(req.group_instance_id)
            group.static_members[req.group_instance_id] = member_id
            if old is not None and old in group.members:
                return self._replace_static_member(group, old, member_id, req, now, reply)
        elif req.require_known_member_id:
            group.pending_members[member_id] = now + req.session_timeout_ms
            return reply(JoinResult(E.MEMBER_ID_REQUIRED, member_id))
        self._add_member_and_rebalance(group, req, member_id, now, reply)

    def _replace_static_member(self, group: Group, old_id: str, member_id: str, req: JoinRequest,
                               now: int, reply) -> None:
        """KIP-345: the returning instance takes the old member's place (and leadership);
        the old id is fenced from now on. In a Stable group whose protocol would not change
        it keeps its assignment without a rebalance (Kafka's
        ``updateStaticMemberThenRebalanceOrCompleteJoin``); otherwise the group rebalances."""
        current_leader = group.leader_id
        old = group.members[old_id]
        group.members = {(member_id if k == old_id else k): v for k, v in group.members.items()}
        for parked in (old.join_reply, old.sync_reply):
            if parked is not None:
                parked(JoinResult(E.FENCED_INSTANCE_ID, old_id) if parked is old.join_reply
                       else SyncResult(E.FENCED_INSTANCE_ID))
        old.join_reply = old.sync_reply = None
        old.member_id = member_id
        old.client_id, old.client_host = req.client_id, req.client_host
        if group.leader_id == old_id:
            group.leader_id = member_id
        if old_id in group.pending_sync:
            group.pending_sync.discard(old_id)
            group.pending_sync.add(member_id)
        self._update_member(old, req, now, reply)
        if group.state is STABLE and group.select_protocol() == group.protocol_name:
            log.info("group %s: static member %s rejoined as %s without a rebalance",
                     group.group_id, req.group_instance_id, member_id)
            parked, old.join_reply = old.join_reply, None
            if req.supports_skip_assignment:
                is_leader = group.leader_id == member_id
                result = self._join_result(group, member_id, include_members=is_leader)
                result.skip_assignment = is_leader
            else:  # an older client must not think it leads: name the leader it replaced
                result = self._join_result(group, member_id, include_members=False)
                result.leader = current_leader or ""
            parked(result)
        elif group.state is PREPARING:
            self._maybe_complete_join(group, now)
        else:
            self._prepare_rebalance(group, now, f"static member {req.group_instance_id} rejoined")

    def _join_known(self, group: Group, req: JoinRequest, now: int, reply) -> None:
        member_id = req.member_id
        if member_id in group.pending_members:
            del group.pending_members[member_id]
            return self._add_member_and_rebalance(group, req, member_id, now, reply)
        error = self._member_error(group, member_id, req.group_instance_id)
        if error:
            return reply(JoinResult(error, member_id))
        member = group.members[member_id]
        same = member.protocols == req.protocols
        if group.state is PREPARING:
            self._update_member(member, req, now, reply)
            self._maybe_complete_join(group, now)
        elif group.state is COMPLETING and same:
            # The JoinGroup answer was lost: answer again with the current generation.
            member.session_deadline = now + member.session_timeout_ms
            reply(self._join_result(group, member_id))
        elif group.state is STABLE and same and member_id != group.leader_id:
            member.session_deadline = now + member.session_timeout_ms
            reply(self._join_result(group, member_id, include_members=False))
        else:  # a changed subscription, or the leader asking to rebalance
            self._update_member(member, req, now, reply)
            self._prepare_rebalance(group, now, f"{member_id} rejoined")

    def _add_member_and_rebalance(self, group: Group, req: JoinRequest, member_id: str, now: int,
                                  reply) -> None:
        member = Member(member_id, req.group_instance_id, req.client_id, req.client_host,
                        req.session_timeout_ms, req.rebalance_timeout_ms, req.protocol_type,
                        list(req.protocols), session_deadline=now + req.session_timeout_ms,
                        join_reply=reply)
        if group.is_empty():
            group.protocol_type = req.protocol_type
        group.members[member_id] = member
        if group.leader_id is None:
            group.leader_id = member_id
        if group.state is PREPARING and group.initial_join_end is not None:
            # A new member during the first join's delay pushes the completion back.
            group.join_deadline = min(now + self.settings.initial_rebalance_delay_ms,
                                      group.initial_join_end)
        elif group.state is PREPARING:
            self._maybe_complete_join(group, now)
        else:
            self._prepare_rebalance(group, now, f"{member_id} joined")

    def _update_member(self, member: Member, req: JoinRequest, now: int, reply) -> None:
        earlier = member.join_reply
        if earlier is not None and earlier is not reply:
            # A client that gave up waiting sent another JoinGroup while its first is
            # still parked. Kafka never sees this on one connection (it reads the next
            # request only after answering), so both get the rebalance's answer here.
            later = reply

            def reply(result, earlier=earlier, later=later):
                earlier(result)
                later(result)
        member.protocols = list(req.protocols)
        member.session_timeout_ms = req.session_timeout_ms
        member.rebalance_timeout_ms = req.rebalance_timeout_ms
        member.session_deadline = now + req.session_timeout_ms
        member.join_reply = reply

    def _prepare_rebalance(self, group: Group, now: int, reason: str) -> None:
        if group.state is COMPLETING:
            self._fail_parked_syncs(group, E.REBALANCE_IN_PROGRESS)
        if group.state is COMPLETING or group.state is STABLE:
            for m in group.members.values():
                m.assignment = b""
        timeout = group.max_rebalance_timeout_ms()
        delay = min(self.settings.initial_rebalance_delay_ms, timeout)
        if group.state is EMPTY and delay > 0:
            group.initial_join_end = now + timeout
            group.join_deadline = now + delay
        else:
            group.initial_join_end = None
            group.join_deadline = now + timeout
        group.pending_sync.clear()
        group.sync_deadline = None
        log.info("group %s: preparing to rebalance (generation %d): %s",
                 group.group_id, group.generation_id, reason)
        group.state = PREPARING
        self._maybe_complete_join(group, now)

    def _maybe_complete_join(self, group: Group, now: int) -> None:
        if group.state is PREPARING and group.initial_join_end is None and group.all_joined():
            self._complete_join(group, now)

    def _complete_join(self, group: Group, now: int) -> None:
        for member_id in [m for m, v in group.members.items() if v.join_reply is None]:
            self._drop(group, member_id)  # did not rejoin in time
        group.pending_members.clear()
        group.join_deadline = group.initial_join_end = None
        group.generation_id += 1
        if group.is_empty():
            group.state, group.protocol_name, group.leader_id = EMPTY, None, None
            group.state_since = now
            log.info("group %s: empty at generation %d", group.group_id, group.generation_id)
            return
        group.protocol_name = group.select_protocol()
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        group.state = COMPLETING
        group.pending_sync = set(group.members)
        group.sync_deadline = now + group.max_rebalance_timeout_ms()
        log.info("group %s: generation %d with %d members (leader %s, protocol %s)",
                 group.group_id, group.generation_id, len(group.members), group.leader_id,
                 group.protocol_name)
        for member in list(group.members.values()):
            reply, member.join_reply = member.join_reply, None
            member.session_deadline = now + member.session_timeout_ms
            reply(self._join_result(group, member.member_id))

    def _join_result(self, group: Group, member_id: str, include_members: bool = True) -> JoinResult:
        members = []
        if include_members and member_id == group.leader_id:
            members = [(m.member_id, m.group_instance_id, m.metadata(group.protocol_name))
                       for m in group.members.values()]
        return JoinResult(E.NONE, member_id, group.generation_id, group.protocol_type,
                          group.protocol_name, group.leader_id or "", members)

    # -- SyncGroup --------------------------------------------------------------------
    def sync(self, group_id: str, member_id: str, instance_id: str | None, generation_id: int,
             protocol_type: str | None, protocol_name: str | None,
             assignments: dict[str, bytes], now: int, reply) -> None:
        group = self.groups.get(group_id)
        error = self._member_error(group, member_id, instance_id)
        if error:
            return reply(SyncResult(error))
        if generation_id != group.generation_id:
            return reply(SyncResult(E.ILLEGAL_GENERATION))
        if ((protocol_type is not None and protocol_type != group.protocol_type)
                or (protocol_name is not None and protocol_name != group.protocol_name)):
            return reply(SyncResult(E.INCONSISTENT_GROUP_PROTOCOL))
        if group.state is EMPTY:
            return reply(SyncResult(E.UNKNOWN_MEMBER_ID))
        if group.state is PREPARING:
            return reply(SyncResult(E.REBALANCE_IN_PROGRESS))
        member = group.members[member_id]
        member.session_deadline = now + member.session_timeout_ms
        group.pending_sync.discard(member_id)
        if group.state is STABLE:
            return reply(self._sync_result(group, member))
        member.sync_reply = reply
        if member_id == group.leader_id:
            for m in group.members.values():
                m.assignment = assignments.get(m.member_id, b"")
            group.state = STABLE
            log.info("group %s: stable at generation %d", group.group_id, group.generation_id)
            for m in group.members.values():
                if m.sync_reply is not None:
                    parked, m.sync_reply = m.sync_reply, None
                    parked(self._sync_result(group, m))

    @staticmethod
    def _sync_result(group: Group, member: Member) -> SyncResult:
        return SyncResult(E.NONE, group.protocol_type, group.protocol_name, member.assignment)

    def _fail_parked_syncs(self, group: Group, error: int) -> None:
        for m in group.members.values():
            if m.sync_reply is not None:
                parked, m.sync_reply = m.sync_reply, None
                parked(SyncResult(error))

    # -- Heartbeat, LeaveGroup ----------------------------------------------------------
    def heartbeat(self, group_id: str, member_id: str, instance_id: str | None,
                  generation_id: int, now: int) -> int:
        group = self.groups.get(group_id)
        error = self._member_error(group, member_id, instance_id)
        if error:
            return error
        if group.state is EMPTY:
            return E.UNKNOWN_MEMBER_ID
        if generation_id != group.generation_id:
            return E.ILLEGAL_GENERATION
        member = group.members[member_id]
        member.session_deadline = now + member.session_timeout_ms
        return E.REBALANCE_IN_PROGRESS if group.state is PREPARING else E.NONE

    def leave(self, group_id: str, members: list[tuple[str, str | None]], now: int
              ) -> tuple[int, list[int]]:
        """(top-level error, per-member errors) for a LeaveGroup."""
        group = self.groups.get(group_id)
        if group is None:
            return E.UNKNOWN_MEMBER_ID, [E.UNKNOWN_MEMBER_ID] * len(members)
        errors = []
        for member_id, instance_id in members:
            if not member_id and instance_id is not None:  # KIP-345: leave by instance id
                member_id = group.static_members.get(instance_id, "")
            if member_id in group.pending_members:
                del group.pending_members[member_id]
                self._maybe_complete_join(group, now)
                errors.append(E.NONE)
                continue
            error = self._member_error(group, member_id, instance_id)
            if not error:
                self._remove_member(group, member_id, E.UNKNOWN_MEMBER_ID, now,
                                    reason=f"{member_id} left")
            errors.append(error)
        return E.NONE, errors

    def _drop(self, group: Group, member_id: str) -> Member:
        member = group.members.pop(member_id)
        if member.group_instance_id is not None and \
                group.static_members.get(member.group_instance_id) == member_id:
            del group.static_members[member.group_instance_id]
        group.pending_sync.discard(member_id)
        if group.leader_id == member_id:
            group.leader_id = next(iter(group.members), None)
        return member

    def _remove_member(self, group: Group, member_id: str, parked_error: int, now: int,
                       reason: str = "") -> None:
        member = self._drop(group, member_id)
        if member.join_reply is not None:
            member.join_reply(JoinResult(parked_error, member_id))
        if member.sync_reply is not None:
            member.sync_reply(SyncResult(parked_error))
        if group.state in (STABLE, COMPLETING):
            self._prepare_rebalance(group, now, reason or f"{member_id} removed")
        elif group.state is PREPARING:
            if group.is_empty() and group.initial_join_end is not None:
                group.initial_join_end = None
            self._maybe_complete_join(group, now)

    # -- offsets -----------------------------------------------------------------------
    def validate_commit(self, group_id: str, member_id: str, instance_id: str | None,
                        generation_id: int, now: int, version: int = 9) -> int:
        """The group-level check of an OffsetCommit (Kafka's ``validateOffsetCommit``)."""
        group = self.groups.get(group_id)
        if group is None:
            if generation_id < 0:
                self.ensure_group(group_id, now)  # a "simple" group: admin or assign() commits
                return E.NONE
            return E.GROUP_ID_NOT_FOUND if version >= 9 else E.ILLEGAL_GENERATION
        if generation_id < 0 and group.state is EMPTY:
            return E.NONE
        if generation_id >= 0 or member_id or instance_id is not None:
            error = self._member_error(group, member_id, instance_id)
            if error:
                return error
            if generation_id != group.generation_id:
                return E.ILLEGAL_GENERATION
        elif group.state is not EMPTY:
            return E.UNKNOWN_MEMBER_ID
        if group.state is COMPLETING:
            return E.REBALANCE_IN_PROGRESS
        member = group.members.get(member_id)
        if member is not None:
            member.session_deadline = now + member.session_timeout_ms
        return E.NONE

    # -- timers ------------------------------------------------------------------------
    def tick(self, now: int) -> int | None:
        """Expire what is due; the earliest deadline still pending (None: nothing)."""
        for group in list(self.groups.values()):
            self._tick_group(group, now)
        deadlines = [d for g in self.groups.values() for d in self._deadlines(g)]
        return min(deadlines, default=None)

    def _tick_group(self, group: Group, now: int) -> None:
        for member_id, deadline in list(group.pending_members.items()):
            if deadline <= now:
                del group.pending_members[member_id]
                self._maybe_complete_join(group, now)
        if group.state is PREPARING and group.join_deadline is not None and group.join_deadline <= now:
            self._complete_join(group, now)
        if group.sync_deadline is not None and group.sync_deadline <= now:
            group.sync_deadline = None
            late = [m for m in group.pending_sync if m in group.members]
            group.pending_sync.clear()
            if late and group.state in (COMPLETING, STABLE):
                for member_id in late:
                    log.info("group %s: %s sent no SyncGroup in time", group.group_id, member_id)
                    self._drop(group, member_id)
                self._fail_parked_syncs(group, E.REBALANCE_IN_PROGRESS)
                self._prepare_rebalance(group, now, "members did not sync")
        for member in list(group.members.values()):
            if member.member_id not in group.members:
                continue
            parked = member.join_reply is not None or member.sync_reply is not None
            if not parked and member.session_deadline <= now:
                log.info("group %s: session of %s expired", group.group_id, member.member_id)
                self._remove_member(group, member.member_id, E.UNKNOWN_MEMBER_ID, now,
                                    reason=f"session of {member.member_id} expired")

    @staticmethod
    def _deadlines(group: Group):
        yield from group.pending_members.values()
        if group.state is PREPARING and group.join_deadline is not None:
            yield group.join_deadline
        if group.sync_deadline is not None:
            yield group.sync_deadline
        for m in group.members.values():
            if m.join_reply is None and m.sync_reply is None:
                yield m.session_deadline
