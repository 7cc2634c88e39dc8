"""What the console remembers over time, fed after every Ready cycle (the same hook
as ``shell/transition_log.py``): the node's state transitions with their reasons
and times, high-watermark samples for the chart, the voter-set history with the
append time of each VotersRecord, and the record tail.

Each call does a few comparisons; the log is read only for the tail (bounded,
``tail.py``) and once per new VotersRecord (its batch's timestamp)."""
from __future__ import annotations

from collections import deque

from wire.records import read_header, walk
from wire.uuids import uuid_to_str

from .tail import RecordTail

SAMPLE_MS = 1000  # one chart point a second
SAMPLES = 600  # ten minutes of them
TRANSITIONS = 100


def describe_set(voters) -> list[dict]:
    return [{"id": n.key.node_id, "directoryId": _dir(n.key.directory_id),
             "endpoints": [f"{e.name}://{e.host}:{e.port}" for e in n.endpoints]}
            for n in voters.nodes]


def _dir(directory_id) -> str | None:
    return None if directory_id is None else uuid_to_str(directory_id)


class Timeline:
    def __init__(self, core, raft_log, now_ms: int):
        self.core = core
        self.log = raft_log
        self.transitions: deque[dict] = deque(maxlen=TRANSITIONS)
        self.samples: deque[tuple[int, int]] = deque(maxlen=SAMPLES)
        self.tail = RecordTail(raft_log)
        self.started_ms = now_ms
        self._last_transition = -1
        self._times: dict[int, int | None] = {}  # VotersRecord offset -> batch timestamp
        self.changes = 0  # bumped when anything the page shows outside the tail changed

    def __call__(self, now_ms: int) -> None:
        core = self.core
        for number, role, epoch, leader, reason in core.transitions:
            if number > self._last_transition:
                self._last_transition = number
                self.transitions.append({"time": now_ms, "role": role.name, "epoch": epoch,
                                         "leader": leader, "reason": reason})
                self.changes += 1
        hwm = core.high_watermark
        if hwm is not None and (not self.samples or now_ms - self.samples[-1][0] >= SAMPLE_MS):
            self.samples.append((now_ms, hwm))
        self.tail.follow(hwm)

    def voter_history(self) -> list[dict]:
        """Every voter set the node knows with its offset, append time and whether it is
        committed (below the high watermark)."""
        hwm = self.core.high_watermark
        out = []
        for offset, voters in self.core.history.entries():
            out.append({"offset": offset, "time": self._time_of(offset),
                        "committed": hwm is not None and offset < hwm,
                        "voters": describe_set(voters)})
        return out

    def _time_of(self, offset: int) -> int | None:
        """The append time of the batch holding ``offset`` (None: the bootstrap set, or
        a record the log no longer has)."""
        if offset in self._times:
            return self._times[offset]
        found = None
        log = self.log
        if log.start_offset() <= offset < log.end_offset():
            try:
                data = log.read(offset, 1)
                for info in walk(data):
                    if info.base_offset <= offset <= info.last_offset:
                        found = read_header(data, info.start).max_timestamp
            except ValueError:
                return None
        self._times[offset] = found
        return found
