"""ControllerRegistration (key 70) without sockets: the active controller's write path
on a one-voter core (``tests/test_controller_active.Single``), the sender's decisions
against a follower's view, and DescribeCluster built from the image's registrations.
Every message crosses the generated codec at v0."""
from __future__ import annotations

import uuid
from types import SimpleNamespace

from kraft_server.api.describe_cluster import handle_describe_cluster_request
from kraft_server.controller.image import records as rec
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.cluster.registration import RegistrationSender, request_from_record
from kraft_server.log.bootstrap import DEFAULT_FEATURES
from kraft_server.raft.boundary import Endpoint, InboundResponse, SendFailure
from kraft_server.raft.roles.base import Role
from tests.unit.controller.test_controller_active import Single
from wire.messages import (ControllerRegistrationRequest, ControllerRegistrationResponse,
                           DescribeClusterRequest, DescribeClusterResponse, RegisterControllerRecord)
from wire.messages.controller_registration_request import Feature, Listener
from wire.messages.register_controller_record import ControllerEndpoint

PEER_INCARNATION = uuid.UUID(int=0xBEEF)


def peer_request(node_id=2, incarnation=PEER_INCARNATION, port=9094) -> ControllerRegistrationRequest:
    req = ControllerRegistrationRequest(
        controller_id=node_id, incarnation_id=incarnation, zk_migration_ready=False,
        listeners=[Listener(name="CONTROLLER", host="h2", port=port, security_protocol=0)],
        features=[Feature(name="kraft.version", min_supported_version=0, max_supported_version=1),
                  Feature(name="metadata.version", min_supported_version=7, max_supported_version=30)])
    return ControllerRegistrationRequest.decode(req.encode(0), 0)


class Answers(list):
    def __call__(self, body):
        self.append(ControllerRegistrationResponse.decode(body.encode(0), 0))


def test_the_active_controller_answers_after_the_record_commits():
    s = Single()
    s.run_for(300)
    assert s.core.role is Role.LEADER and s.controller.duties.active
    answers = Answers()
    s.controller.submit_registration(peer_request(), answers)
    assert answers == []  # a write: nothing before the commit
    s.run_for(50)
    assert [(a.error_code, a.error_message, a.throttle_time_ms) for a in answers] == [(0, "", 0)]
    reg = s.controller.image.controllers[2]
    assert reg.incarnation_id == PEER_INCARNATION
    assert [(e.name, e.host, e.port, e.security_protocol) for e in reg.end_points] == [("CONTROLLER", "h2", 9094, 0)]
    assert [(f.name, f.min_supported_version, f.max_supported_version) for f in reg.features] == [
        ("kraft.version", 0, 1), ("metadata.version", 7, 30)]
    assert [(27, 0)] in s.data_batches()[2:]  # its own batch, after our self-registration
    # A new incarnation replaces the entry (no duplicate check for controllers).
    s.controller.submit_registration(peer_request(incarnation=uuid.UUID(int=7), port=9999), answers)
    s.run_for(50)
    assert answers[-1].error_code == 0
    assert s.controller.image.controllers[2].end_points[0].port == 9999


def test_not_the_active_controller_answers_not_controller():
    s = Single()
    s.run_for(300)
    s.core.resign(s.now)  # a shutdown: no longer the leader
    answers = Answers()
    s.controller.submit_registration(peer_request(), answers)
    s.controller.poll(s.now)
    assert [(a.error_code, a.error_message) for a in answers] == [
        (41, "This is not the correct controller for this cluster.")]
    assert 2 not in s.controller.image.controllers


def test_a_leader_becoming_active_answers_once_it_is():
    s = Single()  # the one voter leads at once; its image has not caught up yet
    assert s.core.role is Role.LEADER and not s.controller.is_active()
    answers = Answers()
    s.controller.submit_registration(peer_request(), answers)
    s.controller.poll(s.now)
    assert answers == []  # a write waits in the queue, as every write does
    s.run_for(300)
    assert [a.error_code for a in answers] == [0] and 2 in s.controller.image.controllers


def test_metadata_version_before_3_7_is_unsupported():
    s = Single(levels=dict(DEFAULT_FEATURES, **{"metadata.version": 14}))
    s.run_for(300)
    assert s.controller.image.metadata_version() == 14
    answers = Answers()
    s.controller.submit_registration(peer_request(), answers)
    s.run_for(20)
    assert [(a.error_code, a.error_message) for a in answers] == [(35, "The version of API is not supported.")]
    assert 2 not in s.controller.image.controllers


# -- the sender (ControllerRegistrationManager) ----------------------------------------------

def _registration(node_id=2, incarnation=PEER_INCARNATION) -> RegisterControllerRecord:
    return RegisterControllerRecord(controller_id=node_id, incarnation_id=incarnation,
                                    end_points=[ControllerEndpoint(name="CONTROLLER", host="h2", port=9094)])


def _image(mv=30, registrations=()) -> MetadataImage:
    img = MetadataImage()
    if mv is not None:
        img.replay(rec.feature_level("metadata.version", mv))
    for r in registrations:
        img.replay(rec.register_controller(r))
    return img


class FollowerCore:
    def __init__(self, leader=1):
        self.role, self.leader_id = Role.FOLLOWER, leader

    def leader_endpoints(self, listener):
        return (Endpoint(listener, "h1", 9093),) if self.leader_id >= 0 else ()


def _answer(request, *, code=0, failure=None):
    body = None if failure else ControllerRegistrationResponse(error_code=code)
    return InboundResponse(correlation=request.correlation, destination=request.destination,
                           api_key=70, body=body, failure=failure)


def test_sender_waits_for_metadata_version_and_leader_then_sends_once():
    sender = RegistrationSender(2, _registration(), "CONTROLLER")
    core = FollowerCore(leader=-1)
    assert sender.poll(core, _image(), 0) is None  # no active controller known
    core.leader_id = 1
    assert sender.poll(core, _image(mv=None), 0) is None  # metadata.version not known
    assert sender.poll(core, _image(mv=14), 0) is None  # too old for registrations
    img = _image()
    req = sender.poll(core, img, 0)
    assert req.api_key == 70 and req.destination.node_id == 1
    assert req.destination.endpoint == Endpoint("CONTROLLER", "h1", 9093)
    wire = ControllerRegistrationRequest.decode(req.body.encode(0), 0)
    assert wire == request_from_record(_registration())
    assert sender.poll(core, img, 1) is None  # one RPC at a time
    sender.on_response(_answer(req), 2)
    assert sender.poll(core, img, 3) is None  # acknowledged: wait for the log
    # Our record shows up in the image: registered, nothing more to send.
    img2 = _image(registrations=[_registration()])
    assert sender.poll(core, img2, 4) is None and sender.registered_in_log
    # Another incarnation of our id replaces it: register again.
    img3 = _image(registrations=[_registration(), _registration(incarnation=uuid.UUID(int=9))])
    again = sender.poll(core, img3, 5)
    assert again is not None and not sender.registered_in_log


def test_sender_backs_off_exponentially_after_failures():
    sender = RegistrationSender(2, _registration(), "CONTROLLER")
    core, img = FollowerCore(), _image()
    now, delays = 0, []
    for failure in (None, SendFailure.TIMEOUT, SendFailure.DISCONNECTED):
        req = sender.poll(core, img, now)
        assert req is not None
        sender.on_response(_answer(req, code=41, failure=failure), now)
        delay = sender.next_attempt_ms - now
        delays.append(delay)
        assert sender.poll(core, img, now + delay - 1) is None
        now += delay
    assert 98 <= delays[0] <= 102 and 196 <= delays[1] <= 204 and 392 <= delays[2] <= 408


def test_the_leader_itself_sends_nothing():
    sender = RegistrationSender(1, _registration(node_id=1), "CONTROLLER")
    core = FollowerCore(leader=1)
    core.role = Role.LEADER
    assert sender.poll(core, _image(), 0) is None


# -- DescribeCluster from registrations ------------------------------------------------------

class Call:
    forwarded = token_authenticated = False

    def __init__(self, version=2, listener="CONTROLLER"):
        self.api_version, self.listener = version, listener
        self.body = DescribeClusterRequest(endpoint_type=2, include_cluster_authorized_operations=False)
        self.answer = None

    def respond(self, body):
        self.answer = DescribeClusterResponse.decode(body.encode(self.api_version), self.api_version)


def _view(leader, known):
    voter = SimpleNamespace(node_id=1, endpoints=(SimpleNamespace(name="CONTROLLER", host="v1", port=1),))
    return SimpleNamespace(node_id=1, cluster_id="c" * 22, leader_id=lambda: leader,
                           voters=lambda: (voter,), controller_registrations=lambda: known)


def _two_registrations():
    img = _image(registrations=[
        _registration(node_id=1),
        RegisterControllerRecord(controller_id=3, end_points=[
            ControllerEndpoint(name="OTHER", host="h3", port=7), ControllerEndpoint(name="CONTROLLER", host="h3", port=9095)])])
    return img.controllers


def test_describe_cluster_lists_registrations_on_the_request_listener():
    call = Call()
    handle_describe_cluster_request(call, _view(3, (_two_registrations(), 30)), controller_listener=True, advertised={})
    a = call.answer
    assert (a.error_code, a.endpoint_type, a.controller_id) == (0, 2, 3)
    assert [(b.broker_id, b.host, b.port, b.rack) for b in a.brokers] == [(1, "h2", 9094, None), (3, "h3", 9095, None)]


def test_describe_cluster_names_no_leader_without_its_registration():
    call = Call()
    handle_describe_cluster_request(call, _view(5, (_two_registrations(), 30)), controller_listener=True, advertised={})
    assert call.answer.controller_id == -1 and [b.broker_id for b in call.answer.brokers] == [1, 3]


def test_describe_cluster_before_3_7_is_unsupported_and_before_bootstrap_uses_voters():
    call = Call()
    handle_describe_cluster_request(call, _view(1, ({}, 14)), controller_listener=True, advertised={})
    assert (call.answer.error_code, call.answer.endpoint_type) == (35, 1)
    assert call.answer.error_message.startswith("Direct-to-controller communication is not supported")
    call = Call()
    handle_describe_cluster_request(call, _view(1, None), controller_listener=True, advertised={})
    assert call.answer.controller_id == 1 and [(b.broker_id, b.host) for b in call.answer.brokers] == [(1, "v1")]


def test_a_leader_that_resigns_before_the_commit_answers_not_controller():
    s = Single()
    s.run_for(300)
    answers = Answers()
    s.controller.submit_registration(peer_request(), answers)
    s.controller.poll(s.now)  # proposed, not appended or committed yet
    assert answers == [] and s.controller.writes.inflight is not None
    s.core.resign(s.now)  # a shutdown: the core resigns its leadership
    s.controller.poll(s.now)
    assert [a.error_code for a in answers] == [41]
    assert s.controller.writes.inflight is None
