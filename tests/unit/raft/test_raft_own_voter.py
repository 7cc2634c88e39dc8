"""A leader restarted with another controller listener updates its own entry in the
voter set (``kraft_server/raft/own_voter.py``): it reaches the new endpoint with
ApiVersions first, then appends the VotersRecord; a failed probe writes nothing and is
tried again a fetch timeout later."""
from __future__ import annotations

from wire.messages import api_versions_response as avr
from wire.records import ControlRecordType, control_records, walk

from kraft_server.raft.boundary import InboundResponse, SendFailure
from kraft_server.raft.roles.base import Role
from tests.support.raft_harness import answer, ask, drain, elect, fetch_request
from tests.unit.raft.test_raft_kip853 import DIRS, node


def _lead_and_commit(n):
    epoch = elect(n)
    drain(n, 10_000)
    assert n.role is Role.LEADER
    end = n.log.end_offset()
    fetch = fetch_request(replica=2, epoch=epoch, offset=end, last_epoch=epoch, max_wait=0)
    fetch.topics[0].partitions[0].replica_directory_id = DIRS[2]
    ask(n, fetch, 10_001)
    assert n.high_watermark == end
    return epoch


def _probes(requests):
    return [r for r in requests if r.api_key == 18]


def _voters_batches(n):
    out = []
    for _, _, _, data in n.shell.log.batches():
        for info in walk(data):
            if info.is_control:
                out += [r for k, r in control_records(data, info) if k == ControlRecordType.KRAFT_VOTERS]
    return out


def test_a_leader_on_a_new_port_reaches_it_then_writes_its_own_entry():
    n = node(1, port=9999)  # the log says 9001
    _lead_and_commit(n)
    before = len(_voters_batches(n))
    [probe] = _probes(n.sent)  # sent as soon as the epoch has a high watermark
    assert (probe.destination.node_id, probe.destination.endpoint.port) == (1, 9999)
    assert len(_voters_batches(n)) == before  # nothing written before the answer
    answer(n, probe, avr.ApiVersionsResponse(supported_features=[avr.SupportedFeatureKey(
        name="kraft.version", min_version=0, max_version=1)]), 10_003, version=3)
    drain(n, 10_003)
    assert n.voter_set().endpoint(1, "CONTROLLER").port == 9999
    assert n.voter_set().endpoint(2, "CONTROLLER").port == 9002  # the others untouched
    assert len(_voters_batches(n)) == before + 1
    assert n.stats["own_voter_updates"] == 1
    n.tick(60_000)
    assert not _probes(drain(n, 60_000)[0])  # done for this epoch


def test_a_leader_whose_new_endpoint_does_not_answer_writes_nothing_and_tries_again():
    n = node(1, port=9999)
    _lead_and_commit(n)
    before = len(_voters_batches(n))
    [probe] = _probes(n.sent)
    n.step(InboundResponse(probe.correlation, probe.destination, probe.api_key,
                           failure=SendFailure.DISCONNECTED), 10_003)
    drain(n, 10_003)
    assert n.voter_set().endpoint(1, "CONTROLLER").port == 9001
    assert len(_voters_batches(n)) == before
    assert n.quorum.state.change is None  # a voter change may go ahead meanwhile
    n.tick(10_004)
    assert not _probes(drain(n, 10_004)[0])  # not before a fetch timeout
    later = 10_001 + n.config.fetch_timeout_ms
    n.tick(later)
    [again] = _probes(drain(n, later)[0])
    assert again.destination.endpoint.port == 9999


def test_a_leader_on_its_logged_endpoint_writes_nothing():
    n = node(1)
    _lead_and_commit(n)
    before = len(_voters_batches(n))
    n.tick(10_002)
    assert not _probes(n.sent + drain(n, 10_002)[0])
    assert len(_voters_batches(n)) == before and n.quorum.state.own_update_done
