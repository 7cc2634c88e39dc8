"""Helpers for driving one ``RaftNode`` by hand in tests.

Every message crosses the generated codec (encode at a version, decode), both
ways, so the core is tested against exactly what the wire can carry.
"""
from __future__ import annotations

import random
import uuid

from wire.messages import REQUESTS, RESPONSES
from wire.messages import begin_quorum_epoch_request as breq
from wire.messages import end_quorum_epoch_request as ereq
from wire.messages import fetch_request as freq
from wire.messages import vote_request as vreq
from wire.records import build_batch

from kraft_server.log.memory import MemoryLog, MemoryQuorumStateStore
from kraft_server.raft.quorum_config import METADATA_TOPIC, METADATA_TOPIC_ID, QuorumConfig, StaticVoter
from kraft_server.raft.boundary import Endpoint, InboundRequest, InboundResponse
from kraft_server.raft.node import RaftNode
from kraft_server.shell.loop import Shell

CLUSTER = "test-cluster-AAAAAAAAAA"
LATEST = {1: 18, 52: 2, 53: 1, 54: 1, 59: 1, 82: 0}


def make_node(node_id=1, voters=(1, 2, 3), now=0, seed=0, log=None, store=None, **overrides):
    config = QuorumConfig(node_id=node_id, cluster_id=CLUSTER,
                          static_voters=tuple(StaticVoter(i, f"n{i}", 9000 + i) for i in voters),
                          listeners=(Endpoint("CONTROLLER", f"n{node_id}", 9000 + node_id),),
                          **overrides)
    return start(config, log, store, seed, now)


def start(config, log=None, store=None, seed=0, now=0):
    """A core on ``log`` and ``store`` (memory ones by default), with the shell that
    performs its Readies as ``node.shell`` (its raw log: ``node.shell.log``) and its
    store as ``node.store``."""
    log = log if log is not None else MemoryLog()
    store = store if store is not None else MemoryQuorumStateStore()
    node = RaftNode(config, log, store.read(), random.Random(seed), now)
    node.shell, node.store = Shell(node, log, store), store
    return node


def roundtrip(body, version, requests=True):
    table = REQUESTS if requests else RESPONSES
    return table[body.API_KEY].decode(body.encode(version), version)


def ask(node, body, now, version=None):
    """Deliver a request through the codec; return the decoded responses (after ready/advance)."""
    version = LATEST[body.API_KEY] if version is None else version
    node.step(InboundRequest(("test", body.API_KEY), body.API_KEY, version, roundtrip(body, version)), now)
    return drain(node, now)[1]


def drain(node, now):
    """One ready/advance cycle (flushing the log); returns (requests, decoded responses)."""
    ready, _ = node.shell.turn(now, lambda request: None, lambda response: None)
    responses = [roundtrip(r.body, r.api_version, requests=False) for r in ready.responses]
    node.__dict__.setdefault("sent", []).extend(ready.requests)
    return ready.requests, responses


def answer(node, request, body, now, version=None):
    """Answer one of ``node``'s outbound requests with ``body`` (through the codec)."""
    version = LATEST[request.api_key] if version is None else version
    node.step(InboundResponse(request.correlation, request.destination, request.api_key,
                              body=roundtrip(body, version, requests=False)), now)


def vote_request(candidate=2, epoch=1, last_epoch=0, last_offset=0, pre_vote=False, voter_id=1,
                 cluster=CLUSTER, voter_dir=uuid.UUID(int=0)):
    part = vreq.PartitionData(partition_index=0, replica_epoch=epoch, replica_id=candidate,
                              last_offset_epoch=last_epoch, last_offset=last_offset, pre_vote=pre_vote,
                              voter_directory_id=voter_dir)
    return vreq.VoteRequest(cluster_id=cluster, voter_id=voter_id,
                            topics=[vreq.TopicData(topic_name=METADATA_TOPIC, partitions=[part])])


def fetch_request(replica=2, epoch=1, offset=0, last_epoch=0, max_wait=500, hwm=-1, cluster=CLUSTER):
    part = freq.FetchPartition(partition=0, current_leader_epoch=epoch, fetch_offset=offset,
                               last_fetched_epoch=last_epoch, partition_max_bytes=1 << 20,
                               high_watermark=hwm)
    return freq.FetchRequest(cluster_id=cluster, replica_state=freq.ReplicaState(replica_id=replica),
                             max_wait_ms=max_wait,
                             topics=[freq.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[part])])


def begin_epoch_request(leader=2, epoch=1, voter_id=1):
    part = breq.PartitionData(partition_index=0, leader_id=leader, leader_epoch=epoch)
    return breq.BeginQuorumEpochRequest(cluster_id=CLUSTER, voter_id=voter_id,
                                        topics=[breq.TopicData(topic_name=METADATA_TOPIC, partitions=[part])],
                                        leader_endpoints=[breq.LeaderEndpoint(name="CONTROLLER",
                                                                              host=f"n{leader}", port=9000 + leader)])


def end_epoch_request(leader=2, epoch=1, preferred=(1,)):
    part = ereq.PartitionData(partition_index=0, leader_id=leader, leader_epoch=epoch,
                              preferred_candidates=[ereq.ReplicaInfo(candidate_id=i) for i in preferred])
    return ereq.EndQuorumEpochRequest(cluster_id=CLUSTER,
                                      topics=[ereq.TopicData(topic_name=METADATA_TOPIC, partitions=[part])])


def partition(response):
    return response.topics[0].partitions[0] if hasattr(response, "topics") else response.responses[0].partitions[0]


def data_batches(base, epoch, count, size=1):
    out = b""
    for i in range(count):
        out += build_batch(base + i * size, epoch, 0, [(None, b"r%d" % (base + i * size + k)) for k in range(size)])
    return out


def elect(node, now=0):
    """Make ``node`` (of voters 1..3) the leader of the next epoch: pre-votes then votes
    granted by node 2. Returns the epoch."""
    from wire.messages import vote_response as vresp
    node.tick(now + 10_000)  # election timeout
    for _ in range(2):
        requests, _ = drain(node, now + 10_000)
        for r in requests:
            if r.api_key == 52 and r.destination.node_id == 2:
                part = vresp.PartitionData(partition_index=0, leader_id=-1, leader_epoch=node.epoch,
                                           vote_granted=True)
                answer(node, r, vresp.VoteResponse(topics=[vresp.TopicData(topic_name=METADATA_TOPIC,
                                                                          partitions=[part])]), now + 10_000)
    return node.epoch
