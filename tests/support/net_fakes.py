"""A tiny stand-in for the Raft core and the node view, for net/ and api/ tests.

It answers Vote requests itself, after ``delay_cycles`` turns of the Ready loop, so
tests can make responses complete out of arrival order. It can also be told to
send requests to peers. Interop tests never use it: they run the real core.
"""
from __future__ import annotations

from kraft_server.api.views import Features, ListenerAddress, QuorumView, ReplicaView, VoterView
from kraft_server.raft.boundary import InboundRequest, InboundResponse, OutboundResponse, Ready
from wire.messages import VoteResponse


class FakeLog:
    def __init__(self):
        self.flushes = 0

    def flush(self):
        self.flushes += 1

    def wait_verified(self):
        pass


class FakeCore:
    def __init__(self, delay_cycles: int = 0):
        self.delay_cycles = delay_cycles
        self._held: list[list] = []  # [cycles_left, InboundRequest]
        self.outbox: list = []  # OutboundRequests to send on the next ready()
        self.responses: list[InboundResponse] = []
        self.steps: list = []
        self.shutdown_started = False

    def step(self, item, now_ms):
        self.steps.append(item)
        if isinstance(item, InboundRequest):
            self._held.append([self.delay_cycles, item])
        else:
            self.responses.append(item)

    def tick(self, now_ms):
        pass

    def progress_mark(self):
        return ()  # nothing the controller's polls watch ever moves

    def ready(self) -> Ready:
        out = []
        keep = []
        for entry in self._held:
            if entry[0] <= 0:
                req = entry[1]
                out.append(OutboundResponse(handle=req.handle, api_key=req.api_key,
                                            api_version=req.api_version,
                                            body=VoteResponse(error_code=0)))
            else:
                entry[0] -= 1
                keep.append(entry)
        self._held = keep
        requests, self.outbox = self.outbox, []
        return Ready(flush=bool(out), requests=requests, responses=out,
                     next_deadline_ms=None if not keep else 0)

    def advance(self, ready, now_ms):
        pass

    def begin_shutdown(self, now_ms):
        self.shutdown_started = True

    def shutdown_complete(self):
        return True


class FakeView:
    def __init__(self, node_id=1, cluster_id="MkU3OEVBNTcwNTJENDM2Qg", port=9093,
                 leader=True, epoch=3, hwm=10):
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.port = port
        self.leader = leader
        self.epoch = epoch
        self.hwm = hwm
        self.controller = None  # no metadata controller: its APIs answer NOT_CONTROLLER

    def controller_registrations(self):
        return None  # DescribeCluster lists the voters

    def now_ms(self):
        return 1_700_000_000_000

    def leader_id(self):
        return self.node_id if self.leader else -1

    def voters(self):
        return (VoterView(self.node_id, endpoints=(ListenerAddress("CONTROLLER", "127.0.0.1", self.port),)),)

    def quorum(self, now_ms):
        me = ReplicaView(self.node_id, log_end_offset=self.hwm, last_fetch_timestamp=now_ms,
                         last_caught_up_timestamp=now_ms)
        return QuorumView(is_leader=self.leader, leader_id=self.leader_id(), epoch=self.epoch,
                          high_watermark=self.hwm, voters=(me,), voter_nodes=self.voters(),
                          committed_voters=(me,))

    def features(self):
        return Features(supported={"kraft.version": (0, 1), "metadata.version": (7, 30)},
                        finalized={"kraft.version": 1, "metadata.version": 30}, epoch=5)
