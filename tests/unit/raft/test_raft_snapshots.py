"""FetchSnapshot (KIP-630) on both sides, through the codec."""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import fetch_response as fresp
from wire.messages import fetch_snapshot_request as sreq

from kraft_server.raft.quorum_config import METADATA_TOPIC
from kraft_server.common.values import OffsetAndEpoch
from tests.support.raft_harness import (
    CLUSTER, answer, ask, begin_epoch_request, data_batches, drain, elect, fetch_request, make_node,
)


def snapshot_request(epoch, end_offset, snap_epoch, position=0):
    part = sreq.PartitionSnapshot(partition=0, current_leader_epoch=epoch, position=position,
                                  snapshot_id=sreq.SnapshotId(end_offset=end_offset, epoch=snap_epoch))
    return sreq.FetchSnapshotRequest(cluster_id=CLUSTER, replica_id=2, max_bytes=1 << 20,
                                     topics=[sreq.TopicSnapshot(name=METADATA_TOPIC, partitions=[part])])


def leader_with_snapshot():
    node = make_node()
    elect(node)
    drain(node, 10_000)
    ask(node, fetch_request(replica=2, epoch=1, offset=1, last_epoch=1, max_wait=0), 10_001)
    sid = OffsetAndEpoch(1, 1)
    writer = node.shell.log.create_snapshot(sid)
    writer.append(node.log.read(0, 1 << 20))
    writer.freeze()
    node.shell.log.delete_before_snapshot(sid)
    return node, sid


def test_leader_serves_its_latest_snapshot_in_chunks():
    node, sid = leader_with_snapshot()
    size = node.log.snapshot_size(sid)
    [resp] = ask(node, snapshot_request(1, 1, 1, position=0), 10_002)
    part = resp.topics[0].partitions[0]
    assert part.error_code == 0 and part.size == size and len(part.unaligned_records) == size
    [resp] = ask(node, snapshot_request(1, 1, 1, position=size), 10_003)
    assert resp.topics[0].partitions[0].error_code == ErrorCode.POSITION_OUT_OF_RANGE
    [resp] = ask(node, snapshot_request(1, 5, 1), 10_004)
    assert resp.topics[0].partitions[0].error_code == ErrorCode.SNAPSHOT_NOT_FOUND
    [resp] = ask(node, snapshot_request(0, 1, 1), 10_005)
    assert resp.topics[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH


def test_follower_installs_the_snapshot_it_is_told_about():
    leader, sid = leader_with_snapshot()
    follower = make_node(node_id=3)
    follower.shell.log.append(data_batches(0, 0, 1))  # something stale, below the snapshot
    ask(follower, begin_epoch_request(leader=1, epoch=1, voter_id=3), 0)
    fetch = next(r for r in follower.sent if r.api_key == 1)
    part = fresp.PartitionData(partition_index=0, high_watermark=1,
                               current_leader=fresp.LeaderIdAndEpoch(leader_id=1, leader_epoch=1),
                               snapshot_id=fresp.SnapshotId(end_offset=1, epoch=1))
    answer(follower, fetch, fresp.FetchResponse(responses=[fresp.FetchableTopicResponse(partitions=[part])]), 1)
    requests, _ = drain(follower, 1)
    [snap_req] = [r for r in requests if r.api_key == 59]
    [resp] = ask(leader, snap_req.body, 10_010)
    answer(follower, snap_req, resp, 2)
    assert follower.log.latest_snapshot() == sid
    assert (follower.log.start_offset(), follower.log.end_offset()) == (1, 1)
    requests, _ = drain(follower, 2)
    [next_fetch] = [r for r in requests if r.api_key == 1]
    p = next_fetch.body.topics[0].partitions[0]
    assert (p.fetch_offset, p.last_fetched_epoch) == (1, 1)
