"""N fetch-only KRaft observers against one leader, for ``bench/raft/observers.py``: the
same load tool for ours and for Apache Kafka's quorum.

    python bench/raft/observer_load.py --port P --count N --cluster-id C --topic T \
        --topic-id ID --target OFFSET [--first-id 1000]

Each observer is one connection sending Fetch v17 as a KRaft observer does
(``ReplicaState`` with its own id, not a voter; fetch offset and last fetched epoch
from the batches it got; ``max_wait_ms`` 500 long polls at the log end; 8 MiB max).
It keeps no records, only where it is; its first fetch names epoch 0 and learns the
leader's epoch from the FENCED_LEADER_EPOCH answer. Sent to a snapshot (our leader
does that for an empty replica once it has one, as Kafka's does), it reads the
snapshot with FetchSnapshot and goes on from its end offset. Output, one JSON object a line on stdout (``t``
is Unix ms): ``connected`` (every observer sent its first fetch), ``caught_up`` (one
observer's fetch offset reached ``--target``), ``all_caught_up``, ``all_tailing`` (every
observer, once caught up, got an answer that left it at the high watermark), and every second
``stats`` (fetches answered, bytes received). SIGUSR1 pauses the observers (each
sends no new Fetch once its current one is answered; ``paused`` when all wait, their
connections open) and SIGUSR2 resumes them (``retailing`` once every observer is back
at the high watermark): the bench measures the same leader without their load. NOT_LEADER_OR_FOLLOWER moves an
observer to the leader it names (or, while none is known, retries after a backoff); any other error ends the tool with a non-zero exit.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from wire.framing import FrameReader  # noqa: E402
from wire.headers import decode_response, encode_request  # noqa: E402
from wire.messages import fetch_request as freq  # noqa: E402
from wire.messages import fetch_snapshot_request as sreq  # noqa: E402
from wire.records import iter_headers  # noqa: E402

FETCH = 1
FETCH_SNAPSHOT = 59
VERSION = 17
MAX_BYTES = 8 * 1024 * 1024
FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER = 74, 75, 6
RETRY_BACKOFF_S = 0.05  # controller.quorum.retry.backoff.ms is 20; a little more


def emit(ev: str, **fields) -> None:
    sys.stdout.write(json.dumps({"ev": ev, "t": round(time.time() * 1000, 1), **fields}) + "\n")
    sys.stdout.flush()


class Stats:
    fetches = 0
    bytes = 0


class Pause:
    """SIGUSR1 / SIGUSR2: observers wait before their next Fetch while ``go`` is clear."""
    go: asyncio.Event
    waiting = 0
    behind: set = set()  # observers resumed and not yet back at the high watermark

    @classmethod
    def install(cls, count: int) -> None:
        cls.go = asyncio.Event()
        cls.go.set()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, cls.go.clear)

        def resume():
            cls.behind = set(range(count))
            cls.go.set()
        loop.add_signal_handler(signal.SIGUSR2, resume)

    @classmethod
    async def gate(cls, count: int) -> None:
        if cls.go.is_set():
            return
        cls.waiting += 1
        if cls.waiting == count:
            emit("paused", count=count)
        try:
            await cls.go.wait()
        finally:
            cls.waiting -= 1

    @classmethod
    def at_tail(cls, i: int) -> None:
        if i in cls.behind:
            cls.behind.discard(i)
            if not cls.behind:
                emit("retailing")


async def read_response(reader, frames, i: int, api_key: int, version: int):
    """The next response on the connection (one request is in flight at a time)."""
    while True:
        data = await reader.read(1 << 20)
        if not data:
            raise ConnectionError(f"observer {i}: connection closed")
        Stats.bytes += len(data)
        got = frames.feed(data)
        if got:
            return decode_response(got[0], api_key, version)[1]


async def fetch_snapshot(reader, writer, frames, i: int, args, correlation: int, leader_epoch: int, sid) -> int:
    """Read snapshot ``sid`` whole (FetchSnapshot v1, 8 MiB a request); returns the last
    correlation id used."""
    position, size = 0, None
    while size is None or position < size:
        correlation += 1
        part = sreq.PartitionSnapshot(partition=0, current_leader_epoch=leader_epoch,
                                      snapshot_id=sreq.SnapshotId(end_offset=sid.end_offset, epoch=sid.epoch),
                                      position=position)
        body = sreq.FetchSnapshotRequest(cluster_id=args.cluster_id, replica_id=args.first_id + i,
                                         max_bytes=MAX_BYTES,
                                         topics=[sreq.TopicSnapshot(name=args.topic, partitions=[part])])
        writer.write(encode_request(FETCH_SNAPSHOT, 1, correlation, body, f"observer-{i}"))
        resp = await read_response(reader, frames, i, FETCH_SNAPSHOT, 1)
        p = resp.topics[0].partitions[0] if resp.topics else None
        if resp.error_code or p is None or p.error_code:
            raise RuntimeError(f"observer {i}: FetchSnapshot error {resp.error_code or (p and p.error_code)}")
        size = p.size
        position += len(p.unaligned_records)
        if not p.unaligned_records and position < size:
            raise RuntimeError(f"observer {i}: FetchSnapshot returned nothing at {position} of {size}")
    return correlation


async def observer(i: int, args, target: int, done: asyncio.Event, caught: list, started: list,
                   tailing: list) -> None:
    host, port = "127.0.0.1", args.port
    reader, writer = await asyncio.open_connection(host, port)
    frames = FrameReader()
    offset, epoch, correlation = 0, 0, 0
    leader_epoch = 0  # learnt from the first answer (FENCED_LEADER_EPOCH names the leader's)
    directory = uuid.uuid4()
    topic_id = uuid.UUID(args.topic_id)
    reported = at_tail = False
    while True:
        await Pause.gate(args.count)
        correlation += 1
        part = freq.FetchPartition(partition=0, current_leader_epoch=leader_epoch, fetch_offset=offset,
                                   last_fetched_epoch=epoch, log_start_offset=-1,
                                   partition_max_bytes=MAX_BYTES, replica_directory_id=directory)
        body = freq.FetchRequest(cluster_id=args.cluster_id,
                                 replica_state=freq.ReplicaState(replica_id=args.first_id + i, replica_epoch=-1),
                                 max_wait_ms=500, min_bytes=0, max_bytes=MAX_BYTES,
                                 topics=[freq.FetchTopic(topic=args.topic, topic_id=topic_id, partitions=[part])])
        writer.write(encode_request(FETCH, VERSION, correlation, body, f"observer-{i}"))
        if correlation == 1:
            started.append(i)
            if len(started) == args.count:
                emit("connected", count=args.count)
        resp = await read_response(reader, frames, i, FETCH, VERSION)
        Stats.fetches += 1
        if resp.error_code:
            raise RuntimeError(f"observer {i}: fetch error {resp.error_code}")
        p = resp.responses[0].partitions[0]
        if p.error_code in (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) and p.current_leader.leader_epoch > leader_epoch:
            leader_epoch = p.current_leader.leader_epoch
            continue
        if p.error_code == NOT_LEADER_OR_FOLLOWER and p.current_leader.leader_id < 0:
            # an election is under way: retry after a backoff, as a real observer does
            leader_epoch = max(leader_epoch, p.current_leader.leader_epoch)
            await asyncio.sleep(RETRY_BACKOFF_S)
            continue
        if p.error_code == NOT_LEADER_OR_FOLLOWER and p.current_leader.leader_id >= 0:
            # a new leader: follow it there (the answer carries its endpoint), as observers do
            ends = {e.node_id: (e.host, e.port) for e in resp.node_endpoints}
            if p.current_leader.leader_id in ends:
                leader_epoch = p.current_leader.leader_epoch
                writer.close()
                host, port = ends[p.current_leader.leader_id]
                reader, writer = await asyncio.open_connection(host, port)
                frames = FrameReader()
                continue
        if p.error_code:
            raise RuntimeError(f"observer {i}: partition error {p.error_code}")
        if p.diverging_epoch is not None and p.diverging_epoch.epoch >= 0:
            offset, epoch = min(offset, p.diverging_epoch.end_offset), p.diverging_epoch.epoch
            continue
        if p.snapshot_id is not None and p.snapshot_id.end_offset >= 0:
            # an empty replica is sent the latest snapshot first (KafkaRaftClient): fetch it
            # whole with FetchSnapshot, then the log from its end offset
            correlation = await fetch_snapshot(reader, writer, frames, i, args, correlation, leader_epoch,
                                               p.snapshot_id)
            offset, epoch = p.snapshot_id.end_offset, p.snapshot_id.epoch
            continue
        records = p.records
        if records:
            for _, header in iter_headers(memoryview(records)):
                offset, epoch = header.next_offset, header.partition_leader_epoch
        at_hwm = reported and offset >= p.high_watermark >= 0
        if at_hwm and Pause.behind:
            Pause.at_tail(i)
        if at_hwm and not at_tail:
            at_tail = True  # holds every committed record: from now on it long-polls at the end
            tailing.append(i)
            if len(tailing) == args.count:
                emit("all_tailing", count=args.count)
        if not reported and offset >= target:
            reported = True
            caught.append(i)
            emit("caught_up", observer=i, offset=offset)
            if len(caught) == args.count:
                emit("all_caught_up", count=args.count)
                done.set()


async def main_async(args) -> None:
    done = asyncio.Event()
    caught: list = []
    started: list = []
    tailing: list = []
    Pause.install(args.count)
    tasks = [asyncio.create_task(observer(i, args, args.target, done, caught, started, tailing))
             for i in range(args.count)]

    async def report():
        while True:
            await asyncio.sleep(1)
            emit("stats", fetches=Stats.fetches, bytes=Stats.bytes)
    tasks.append(asyncio.create_task(report()))
    finished, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    for t in finished:
        t.result()  # raises the observer's error


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--cluster-id", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--topic-id", required=True, help="as a UUID string (e.g. 00000000-0000-0000-0000-000000000001)")
    ap.add_argument("--target", type=int, default=0, help="offset that counts as caught up")
    ap.add_argument("--first-id", type=int, default=1000, help="replica id of observer 0")
    args = ap.parse_args(argv)
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    try:
        asyncio.run(main_async(args))
    except (RuntimeError, ConnectionError, OSError) as exc:
        print(f"observer_load: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
