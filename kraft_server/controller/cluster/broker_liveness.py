"""Fast fencing of a crashed broker (issue 29): evidence of death that no live
broker can produce, so its partitions are re-led at once instead of after
``broker.session.timeout.ms``. Pure: the shell reports heartbeat connections that
closed and performs the probes this module asks for, then feeds their outcomes
back; nothing here touches a socket or a clock.

The rule. The active controller fences broker ``id`` with epoch ``e`` (the
registration it is current in, i.e. this incarnation) on evidence when all of:

1. the broker is unfenced and not in controlled shutdown (``BrokerRegistration
   .active``) with epoch ``e`` on the committed image when the fence runs;
2. this controller, since it became active, saw ``id``'s listener accept a TCP
   connection (an "arming" probe of the advertised endpoints of epoch ``e``'s
   registration, made once heartbeats of ``(id, e)`` arrive and repeated until one
   accepts);
3. every connection on which this controller received a heartbeat of ``(id, e)``
   was closed by the peer (EOF or reset; a close of ours, e.g. the idle sweep or a
   protocol violation, never counts) and no heartbeat of ``(id, e)`` arrived since
   the last close;
4. a probe started after that close found *every* endpoint seen accepting in rule 2
   refusing the connection (ECONNREFUSED). A timeout, an unreachable host or a name
   that does not resolve is no evidence: the session timeout decides, as today.

Why a live broker never satisfies it. A Kafka broker opens each listening socket
once (``Acceptor.start``, when ``BrokerServer.startup`` enables request processing
just after the broker is unfenced; for port 0 already when the Acceptor is built)
and keeps it until its shutdown.
The kernel completes a TCP handshake on a listening socket whether or not the
process runs: a SIGSTOPped or GC-paused JVM still *accepts* (the connection waits
in the backlog), and a full backlog drops the SYN (a timeout), it does not refuse.
Only a closed listening socket answers a SYN with RST. Rule 2 proves the socket was
open for this incarnation, so a refusal afterwards means the socket was closed,
i.e. the process exited or is shutting down; a shutdown that goes through
controlled shutdown is excluded by rule 1 (handled as before). A cut connection
between a live broker and the controller (a proxy, a middlebox, a request timeout
on the broker's side) satisfies rule 3 but not rule 4: the listener still accepts.
Assumption: nothing between the controller and the broker forges RSTs for the
broker's address (e.g. a firewall rule rejecting with tcp-reset); the property
``kraft.broker.fast.fencing.enable=false`` turns the rule off for such networks.

A restarting broker: the evidence belongs to ``(id, e)``; the new incarnation
registers with a new epoch, so the fence of the old one checks ``e`` against the
image when it runs and does nothing once the new registration committed. A
probe refused while the old process is gone and the new one has not bound yet
fences only the old epoch; a new incarnation that already listens makes the
probe accept, and the old epoch is left to its session, as in Kafka.

A controller failover loses no evidence it should keep: ``reset`` runs when this
node becomes (or stops being) the active controller, so a new active controller
starts from nothing, as its sessions do, and probes only from what it sees itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field

ACCEPTED, REFUSED, UNKNOWN = "accepted", "refused", "unknown"
ARM, DEATH = "arm", "death"
# An arming probe that did not see the listener accept is repeated: Kafka's broker
# opens its listeners just after it is unfenced (``BrokerServer.startup`` calls
# ``SocketServer.enableRequestProcessing`` after ``setReadyToUnfence`` completed; seen
# in the tests: a just-unfenced broker's first arming probe refused, the next accepted).
ARM_RETRY_MS = 200
# A killed JVM's listening socket may still accept for a moment after its heartbeat
# connection's EOF arrived (measured: up to ~100 ms on a loaded 2-core machine), so a
# death probe that saw it accept is retried after 10, 20, 40 ... ms, 8 probes in ~1.3 s;
# then the session decides.
DEATH_PROBES = 8
DEATH_RETRY_MS = 10


@dataclass(frozen=True, eq=False)
class Probe:
    """Connect to each of ``endpoints`` ((host, port) pairs) and report per endpoint
    ACCEPTED, REFUSED or UNKNOWN."""
    broker_id: int
    epoch: int
    endpoints: tuple
    purpose: str  # ARM or DEATH
    seq: int  # the track's change count when the probe started


def verdict(outcomes) -> str:
    """One answer for a probe: ACCEPTED if any endpoint accepted, REFUSED only if
    there was at least one and every one refused, UNKNOWN otherwise."""
    outcomes = list(outcomes)
    if ACCEPTED in outcomes:
        return ACCEPTED
    if outcomes and all(o == REFUSED for o in outcomes):
        return REFUSED
    return UNKNOWN


@dataclass
class _Track:
    """What this controller knows about one (broker id, epoch)."""
    conns: set = field(default_factory=set)  # open connections that carried its heartbeats
    seen_accepting: set = field(default_factory=set)  # its endpoints that accepted a probe
    next_arm_ms: int = 0
    suspect: bool = False  # rule 3 holds
    death_probes: int = 0
    next_death_ms: int = 0
    seq: int = 0  # bumped by every heartbeat and close: a probe from before is stale
    in_flight: Probe | None = None

    @property
    def armed(self) -> bool:
        return bool(self.seen_accepting)


class DeathEvidence:
    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.tracks: dict[tuple[int, int], _Track] = {}
        self.conn_keys: dict[object, tuple[int, int]] = {}  # connection -> (id, epoch)
        self.dead: list[tuple[int, int]] = []
        self.deadline_ms: int | None = None

    def reset(self) -> None:
        self.deadline_ms = None
        self.tracks.clear()
        self.conn_keys.clear()
        self.dead.clear()

    # -- inputs ------------------------------------------------------------------------
    def heartbeat(self, conn, broker_id: int, epoch: int) -> None:
        """A heartbeat of (id, epoch) arrived on ``conn`` (an opaque connection token)."""
        if not self.enabled or conn is None:
            return
        key = (broker_id, epoch)
        old = self.conn_keys.get(conn)
        if old is not None and old != key and old in self.tracks:
            self.tracks[old].conns.discard(conn)
        self.conn_keys[conn] = key
        track = self.tracks.setdefault(key, _Track())
        track.conns.add(conn)
        track.seq += 1
        track.suspect = False
        track.death_probes = 0

    def closed(self, conn, by_peer: bool, now_ms: int) -> None:
        """``conn`` closed: by the peer (EOF, reset) or by us."""
        key = self.conn_keys.pop(conn, None)
        track = self.tracks.get(key) if key is not None else None
        if track is None:
            return
        track.conns.discard(conn)
        track.seq += 1
        if by_peer and not track.conns:
            track.suspect = True  # probed once armed (an arming probe may be in flight)
            track.death_probes = 0
            track.next_death_ms = now_ms

    def probe_done(self, probe: Probe, outcomes, now_ms: int) -> None:
        track = self.tracks.get((probe.broker_id, probe.epoch))
        if track is None or track.in_flight is not probe:
            return
        track.in_flight = None
        outcomes = list(outcomes)
        answer = verdict(outcomes)
        track.seen_accepting.update(e for e, o in zip(probe.endpoints, outcomes) if o == ACCEPTED)
        if probe.purpose == ARM:
            if answer != ACCEPTED:
                track.next_arm_ms = now_ms + ARM_RETRY_MS
            return
        if not track.suspect or track.seq != probe.seq or track.conns:
            return  # a heartbeat or another close since: what it found is stale
        if answer == REFUSED:
            del self.tracks[(probe.broker_id, probe.epoch)]
            self.dead.append((probe.broker_id, probe.epoch))
            return
        track.next_death_ms = now_ms + (DEATH_RETRY_MS << track.death_probes)
        track.death_probes += 1
        if track.death_probes >= DEATH_PROBES:
            track.suspect = False  # its session decides

    # -- outputs -----------------------------------------------------------------------
    def due_probes(self, image, now_ms: int) -> list[Probe]:
        """Probes to start now; each is in flight until ``probe_done``. Also notes when
        the next one falls due (``next_deadline``), for active brokers only: a change
        of a broker's state comes with a commit, which runs this again."""
        out, self.deadline_ms = [], None
        for key, track in list(self.tracks.items()):
            b = image.brokers.get(key[0])
            if b is None or b.epoch != key[1]:
                self._drop(key)  # unregistered, or a new incarnation registered
                continue
            if track.in_flight is not None or not b.active:
                continue
            if track.suspect and track.armed and track.death_probes < DEATH_PROBES:
                purpose, due = DEATH, track.next_death_ms
            elif not track.suspect and not track.armed and track.conns:
                purpose, due = ARM, track.next_arm_ms
            else:
                continue
            if now_ms < due:
                self.deadline_ms = due if self.deadline_ms is None else min(self.deadline_ms, due)
                continue
            endpoints = tuple((e.host, e.port) for e in b.record.end_points)
            if purpose == DEATH:  # the endpoints seen accepting: another may be unreachable from here
                endpoints = tuple(e for e in endpoints if e in track.seen_accepting)
            track.in_flight = Probe(key[0], key[1], endpoints, purpose, track.seq)
            out.append(track.in_flight)
        return out

    def pop_dead(self) -> tuple[int, int] | None:
        return self.dead.pop(0) if self.dead else None

    def next_deadline(self) -> int | None:
        """When ``due_probes`` has a retry to start (None: nothing waits on time)."""
        return self.deadline_ms

    def _drop(self, key) -> None:
        track = self.tracks.pop(key, None)
        if track is not None:
            for conn in track.conns:
                self.conn_keys.pop(conn, None)
