"""Backpressure on ``RaftNode.propose`` (issue 12 item 4): the leader's backlog of
proposed, uncommitted bytes is bounded; batches never exceed MAX_BATCH_BYTES."""
from __future__ import annotations

import pytest
from wire.records import walk

from kraft_server.raft import MAX_BATCH_BYTES, Backpressure
from tests.support.raft_harness import ask, drain, fetch_request, make_node, elect


def leader(**overrides):
    node = make_node(**overrides)
    elect(node)
    drain(node, 10_000)
    # node 2 fetches the start-of-epoch batch: the high watermark becomes known
    ask(node, fetch_request(replica=2, epoch=1, offset=0, last_epoch=0, max_wait=0), 10_001)
    ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_002)
    assert node.high_watermark == 1
    return node


def test_propose_refuses_when_the_backlog_is_full_and_commits_make_room():
    node = leader(max_backlog_bytes=1000)
    assert node.append_room() == 1000
    node.propose([b"x" * 400], 10_003)
    node.propose([b"x" * 400], 10_003)
    assert node.append_room() == 200
    with pytest.raises(Backpressure):
        node.propose([b"x" * 400], 10_003)
    assert node.stats["proposals_refused"] == 1
    node.tick(10_030)  # linger over: appended, still not committed
    drain(node, 10_030)
    assert node.log.end_offset() == 3 and node.append_room() < 1000 - 800
    with pytest.raises(Backpressure):
        node.propose([b"x" * 400], 10_031)
    # node 2 has the batch: committed, the room is back
    ask(node, fetch_request(replica=2, epoch=1, offset=3, last_epoch=1, max_wait=0), 10_032)
    assert node.high_watermark == 3
    assert node.append_room() == 1000
    node.propose([b"x" * 400], 10_033)


def test_an_oversized_proposal_goes_through_an_empty_backlog():
    node = leader(max_backlog_bytes=100)
    first, last = node.propose([b"y" * 300], 10_003)
    assert first == last == 1
    with pytest.raises(Backpressure):
        node.propose([b"y"], 10_003)


def test_lingering_proposals_are_split_into_batches_of_at_most_the_max_size():
    node = leader(max_backlog_bytes=4 * MAX_BATCH_BYTES)
    record = b"z" * (1 << 20)
    for _ in range(3):
        node.propose([record] * 3, 10_003)  # 9 MiB in all, over one batch: drained at once
    drain(node, 10_003)
    batches = [b for b in walk(node.shell.log.read(1, 64 << 20))]
    assert [b.last_offset - b.base_offset + 1 for b in batches] == [7, 2]
    assert all(b.end - b.start <= MAX_BATCH_BYTES for b in batches)
    assert node.log.end_offset() == 10


def test_each_batch_takes_the_longest_run_of_records_that_fits():
    # mixed sizes, one record larger than a batch (it gets a batch of its own)
    node = leader(max_backlog_bytes=8 * MAX_BATCH_BYTES)
    sizes = [3 << 20, 3 << 20, 1 << 20, 5, (1 << 20) - 200, MAX_BATCH_BYTES + 10, 7, 4 << 20, 4 << 20]
    node.propose([b"q" * n for n in sizes], 10_003)
    drain(node, 10_003)
    batches = list(walk(node.shell.log.read(1, 64 << 20)))
    counts = [b.last_offset - b.base_offset + 1 for b in batches]
    assert sum(counts) == len(sizes)
    assert counts == [5, 1, 2, 1]
    for b, n in zip(batches, counts):
        assert b.end - b.start <= MAX_BATCH_BYTES or n == 1


def test_a_due_append_lets_the_waiting_fetch_answer_go_first():
    from kraft_server.raft.boundary import InboundRequest
    from tests.support.raft_harness import LATEST, roundtrip
    node = leader()
    node.propose([b"a" * 100], 10_003)
    # linger over and node 3's Fetch (offset 1: nothing new for it yet) in the same cycle
    body = fetch_request(replica=3, epoch=1, offset=1, last_epoch=1, max_wait=0)
    node.step(InboundRequest(("test", body.API_KEY), body.API_KEY, LATEST[body.API_KEY],
                             roundtrip(body, LATEST[body.API_KEY])), 10_030)
    node.tick(10_030)
    ready = node.shell.take()
    assert len(ready.responses) == 1 and not ready.writes and not ready.flush  # leaves at once
    assert node.shell.finish(ready, 10_030, lambda r: None, lambda r: None) is True  # go again now
    ready = node.shell.take()
    assert ready.writes and ready.flush and not ready.responses  # the append, one Ready later
    node.shell.finish(ready, 10_030, lambda r: None, lambda r: None)
    assert node.log.end_offset() == 2
