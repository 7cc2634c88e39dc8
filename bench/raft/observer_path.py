"""The leader's Python cost per observer Fetch, without sockets (issue 12 item 6).

    python bench/raft/observer_path.py [--observers 100] [--rounds 300]

One leader (a single voter, so its own flush commits) on a file log in a temporary
directory, and N observers each with a real connection ``Pipeline``: every round
proposes one batch of 125 records of 256 bytes (what ``bench/raft/observers.py`` appends
every 25 ms), and each observer's next Fetch (a frame of bytes, as the load tool
sends it) goes through the pipeline, the Raft core and back out as response buffers,
as in the node: park, complete on the new batch, encode, frame. Nothing is written
to a socket, so the figure is the process's own CPU (``time.process_time``) per
observer Fetch answered: the rounds with N observers minus the rounds with none,
divided by the Fetches. It moves only with our code, not with the machine's load
the way ``bench/raft/observers.py`` does; the kernel's share (the write of each answer)
is not in it.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from wire.headers import encode_request  # noqa: E402
from wire.messages import fetch_request as freq  # noqa: E402

from kraft_server.api.raft_rpcs import deliver, to_core  # noqa: E402
from kraft_server.api.registry import listener_apis  # noqa: E402
from kraft_server.log.file_log import FileReplicatedLog  # noqa: E402
from kraft_server.log.memory import MemoryQuorumStateStore  # noqa: E402
from kraft_server.net.pipeline import Pipeline  # noqa: E402
from kraft_server.raft.boundary import Endpoint  # noqa: E402
from kraft_server.raft.node import RaftNode  # noqa: E402
from kraft_server.raft.quorum_config import METADATA_TOPIC, METADATA_TOPIC_ID, QuorumConfig, StaticVoter  # noqa: E402
from kraft_server.raft.roles.base import Role  # noqa: E402
from kraft_server.shell.loop import Shell  # noqa: E402

CLUSTER = "bench-observer-path-AAA"
RECORDS, RECORD_BYTES = 125, 256
VERSION = 17


class Observer:
    def __init__(self, i: int, apis):
        self.id = 1000 + i
        self.pipeline = Pipeline("CONTROLLER", apis)
        self.directory = uuid.uuid4()
        self.correlation = 0
        self.answered = 0

    def frame(self, node, offset: int, epoch: int) -> bytes:
        """The observer's next Fetch as the load tool sends it (built outside the timing)."""
        self.correlation += 1
        part = freq.FetchPartition(partition=0, current_leader_epoch=node.epoch, fetch_offset=offset,
                                   last_fetched_epoch=epoch, log_start_offset=-1,
                                   partition_max_bytes=8 << 20, replica_directory_id=self.directory)
        body = freq.FetchRequest(cluster_id=CLUSTER, replica_state=freq.ReplicaState(replica_id=self.id, replica_epoch=-1),
                                 max_wait_ms=500, min_bytes=0, max_bytes=8 << 20,
                                 topics=[freq.FetchTopic(topic=METADATA_TOPIC, topic_id=METADATA_TOPIC_ID,
                                                         partitions=[part])])
        return encode_request(1, VERSION, self.correlation, body, f"observer-{self.id}")

    def fetch(self, frame: bytes, node, now: int) -> None:
        self.pipeline.receive_data(frame)
        call = self.pipeline.next_call()
        node.step(to_core(call), now)

    def take_output(self) -> int:
        out = self.pipeline.output_buffers()
        if out:
            self.answered += 1
        return sum(len(b) for b in out)


def leader(directory: Path) -> tuple[RaftNode, Shell]:
    config = QuorumConfig(node_id=1, cluster_id=CLUSTER, static_voters=(StaticVoter(1, "localhost", 9001),),
                          listeners=(Endpoint("CONTROLLER", "localhost", 9001),))
    log = FileReplicatedLog.open(directory)
    store = MemoryQuorumStateStore()
    node = RaftNode(config, log, store.read(), random.Random(1), 0)
    shell = Shell(node, log, store)
    now = 0
    while node.role is not Role.LEADER or node.high_watermark is None:
        now += 1000
        node.tick(now)
        shell.turn(now, lambda request: None, deliver)
    return node, shell


def run(observers: int, rounds: int) -> tuple[float, int]:
    """(process seconds over ``rounds`` rounds, Fetches answered)."""
    with tempfile.TemporaryDirectory(prefix="observer-path-") as tmp:
        node, shell = leader(Path(tmp))
        apis = listener_apis(True, reconfiguration=True)
        obs = [Observer(i, apis) for i in range(observers)]
        payload = [bytes(RECORD_BYTES)] * RECORDS
        now = 10_000
        for o in obs:
            o.fetch(o.frame(node, node.log.end_offset(), node.log.last_fetched_epoch()), node, now)
        shell.turn(now, lambda request: None, deliver)
        spent = 0.0
        for i in range(rounds + 2):
            if i == 2:  # after two warm-up rounds
                spent = 0.0
                answered0 = sum(o.answered for o in obs)
            t0 = time.process_time()
            now += 25
            node.propose(payload, now)
            node.tick(now + 25)
            while True:
                _, more = shell.turn(now + 25, lambda request: None, deliver)
                if not more:
                    break
            end, epoch = node.log.end_offset(), node.log.last_fetched_epoch()
            due = [o for o in obs if o.take_output()]
            spent += time.process_time() - t0
            frames = [o.frame(node, end, epoch) for o in due]
            t0 = time.process_time()
            for o, frame in zip(due, frames):
                o.fetch(frame, node, now + 25)
            spent += time.process_time() - t0
        answered = sum(o.answered for o in obs) - answered0
        shell.log.close()  # the FileReplicatedLog (node.log is the core's view of it)
        return spent, answered


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--observers", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side; the best is kept")
    args = ap.parse_args(argv)
    idle = min(run(0, args.rounds)[0] for _ in range(args.repeat))
    best = None
    for _ in range(args.repeat):
        spent, answered = run(args.observers, args.rounds)
        per = (spent - idle) / max(1, answered) * 1e6
        best = per if best is None else min(best, per)
    print(f"observers {args.observers}, rounds {args.rounds}: leader CPU per observer Fetch {best:.1f} us "
          f"(rounds alone {idle / args.rounds * 1e6:.0f} us; {answered} Fetches answered per run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
