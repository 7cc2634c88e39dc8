"""kraft.version 1 (KIP-853) behaviour of the core: bootstrap voters, the first
leader's KRaftVersion/Voters records, committed vs latest voter set, UpdateRaftVoter."""
from __future__ import annotations

import uuid

from wire.errors import ErrorCode
from wire.messages import KRaftVersionRecord, SnapshotHeaderRecord
from wire.messages import update_raft_voter_request as ureq
from wire.records import ControlRecordType, build_control_batch, control_records, walk

from kraft_server.log.memory import MemoryLog
from kraft_server.raft.quorum_config import QuorumConfig
from kraft_server.raft.boundary import Endpoint
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet
from kraft_server.raft.boundary import InboundRequest
from tests.support.raft_harness import (
    CLUSTER, answer, ask, begin_epoch_request, drain, elect, fetch_request, roundtrip, start,
)

DIRS = {i: uuid.UUID(int=100 + i) for i in (1, 2, 3)}


def endpoint(i, port=None):
    return Endpoint("CONTROLLER", f"n{i}", port or 9000 + i)


def bootstrap(voters=(1, 2, 3)):
    vs = VoterSet(tuple(VoterNode(VoterKey(i, DIRS[i]), (endpoint(i),), 0, 1) for i in voters))
    return build_control_batch(0, 0, 0, [
        (ControlRecordType.SNAPSHOT_HEADER, SnapshotHeaderRecord(version=0)),
        (ControlRecordType.KRAFT_VERSION, KRaftVersionRecord(version=0, kraft_version=1)),
        (ControlRecordType.KRAFT_VOTERS, vs.to_voters_record())])


def node(node_id=1, port=None, voters=(1, 2, 3)):
    cfg = QuorumConfig(node_id=node_id, cluster_id=CLUSTER, directory_id=DIRS.get(node_id, uuid.UUID(int=9)),
                       listeners=(endpoint(node_id, port),))
    return start(cfg, MemoryLog(bootstrap(voters)))


def test_voters_come_from_the_bootstrap_checkpoint():
    n = node()
    assert n.kraft_version() == 1 and n.voter_set().ids() == [1, 2, 3]
    assert n.voter_set().node(2).key.directory_id == DIRS[2]
    assert n.store.read() is None or n.store.read().data_version == 1


def test_first_leader_writes_kraft_version_and_voters_with_leader_change():
    n = node()
    elect(n)
    assert n.role is Role.LEADER
    drain(n, 10_000)  # the shell performs the append
    [(_, _, _, data)] = n.shell.log.batches()
    info = walk(data)[0]
    kinds = [k for k, _ in control_records(data, info)]
    assert kinds == [ControlRecordType.LEADER_CHANGE, ControlRecordType.KRAFT_VERSION,
                     ControlRecordType.KRAFT_VOTERS]
    assert n.history.latest_offset() == 2
    # the records are in the log but not committed: committed set is still the bootstrap one
    assert n.committed_voter_set() == n.voter_set()


def test_vote_to_wrong_directory_is_invalid_voter_key():
    n = node()
    from tests.support.raft_harness import partition, vote_request
    [resp] = ask(n, vote_request(candidate=2, epoch=1, voter_dir=uuid.UUID(int=5)), 0)
    assert partition(resp).error_code == ErrorCode.INVALID_VOTER_KEY


def test_follower_with_new_endpoint_sends_update_raft_voter():
    n = node(2, port=9999)  # the log still says 9002
    ask(n, begin_epoch_request(leader=1, epoch=1, voter_id=2), 0)
    from tests.support.raft_harness import answer
    from wire.messages import fetch_response as fresp
    drain(n, 0)
    fetch = next(r for r in n.sent if r.api_key == 1)
    part = fresp.PartitionData(partition_index=0, high_watermark=-1,
                               current_leader=fresp.LeaderIdAndEpoch(leader_id=1, leader_epoch=1))
    answer(n, fetch, fresp.FetchResponse(responses=[fresp.FetchableTopicResponse(partitions=[part])]), 1)
    drain(n, 1)
    updates = [r for r in n.sent if r.api_key == 82]
    assert len(updates) == 1
    body = updates[0].body
    assert (body.voter_id, body.voter_directory_id) == (2, DIRS[2])
    assert [(l.host, l.port) for l in body.listeners] == [("n2", 9999)]


def update_request(epoch, port=9999, voter=2):
    return ureq.UpdateRaftVoterRequest(
        cluster_id=CLUSTER, current_leader_epoch=epoch, voter_id=voter, voter_directory_id=DIRS[voter],
        listeners=[ureq.Listener(name="CONTROLLER", host=f"n{voter}", port=port)],
        kraft_version_feature=ureq.KRaftVersionFeature(min_supported_version=0, max_supported_version=1))


def test_leader_applies_update_raft_voter_once_its_epoch_committed():
    n = node()
    epoch = elect(n)
    drain(n, 10_000)
    [resp] = ask(n, update_request(epoch), 10_001)
    assert resp.error_code == ErrorCode.REQUEST_TIMED_OUT      # no HWM yet
    fetch = fetch_request(replica=2, epoch=epoch, offset=3, last_epoch=epoch, max_wait=0)
    # Voter 2 is known with a directory id: only a fetch carrying it counts (Kafka's
    # ReplicaState.matchesKey).
    fetch.topics[0].partitions[0].replica_directory_id = DIRS[2]
    ask(n, fetch, 10_002)
    assert n.high_watermark == 3
    [resp] = ask(n, update_request(epoch - 1), 10_003)
    assert resp.error_code == ErrorCode.FENCED_LEADER_EPOCH
    # The leader first reaches voter 2 at its new endpoint (KAFKA-20661), whatever
    # Raft request to voter 2 is still out (the BeginQuorumEpoch here).
    n.step(InboundRequest(("test", 82), 82, 0, roundtrip(update_request(epoch), 0)), 10_004)
    requests, responses = drain(n, 10_004)
    [probe] = [r for r in requests if r.api_key == 18]
    assert (probe.destination.node_id, probe.destination.endpoint.port) == (2, 9999)
    assert responses == []  # answered once the probe is
    from wire.messages import api_versions_response as avr
    answer(n, probe, avr.ApiVersionsResponse(supported_features=[avr.SupportedFeatureKey(
        name="kraft.version", min_version=0, max_version=1)]), 10_005, version=3)
    [resp] = drain(n, 10_005)[1]
    assert resp.error_code == ErrorCode.NONE
    assert n.voter_set().endpoint(2, "CONTROLLER").port == 9999
    assert n.committed_voter_set().endpoint(2, "CONTROLLER").port == 9002
    [resp] = ask(n, update_request(epoch, port=9998), 10_005)
    assert resp.error_code == ErrorCode.REQUEST_TIMED_OUT      # previous change not committed


def test_observer_finds_the_leader_through_bootstrap_servers():
    cfg = QuorumConfig(node_id=7, cluster_id=CLUSTER, directory_id=uuid.UUID(int=7),
                       bootstrap_servers=(("n2", 9002),), listeners=(endpoint(7),))
    obs = start(cfg, MemoryLog(bootstrap()))
    assert not obs.is_voter()
    requests, _ = drain(obs, 0)
    [fetch] = [r for r in requests if r.api_key == 1]
    assert fetch.destination.node_id == -1 and fetch.destination.endpoint.port == 9002
    follower = node(2)
    ask(follower, begin_epoch_request(leader=1, epoch=3, voter_id=2), 0)
    from tests.support.raft_harness import answer, roundtrip
    follower.step(__import__("kraft_server.raft.boundary", fromlist=["x"]).InboundRequest(
        "h", 1, 18, roundtrip(fetch.body, 18)), 1)
    _, [resp] = drain(follower, 1)
    answer(obs, fetch, resp, 2)
    assert (obs.role, obs.epoch, obs.leader_id) == (Role.FOLLOWER, 3, 1)
