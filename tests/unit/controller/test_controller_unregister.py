"""UnregisterController (94, v0, Kafka 4.4.0) on a one-voter core: the refusals in Kafka's
order and messages, the UnregisterControllerRecord (29) it commits, and its replay
dropping the registration from the image and from DescribeCluster."""
from __future__ import annotations

from types import SimpleNamespace

from kraft_server.api import controller_writes
from kraft_server.api.describe_cluster import handle_describe_cluster_request
from kraft_server.log.bootstrap import DEFAULT_FEATURES
from tests.unit.controller.test_controller_registration import (
    Call,
    _image,
    _registration,
    _view,
    peer_request,
)
from tests.unit.controller.test_controller_active import Single
from wire.messages import UnregisterControllerRecord, UnregisterControllerRequest, UnregisterControllerResponse
from wire.records import encode_metadata_record


def unregister(s: Single, controller_id: int, ms: int = 50) -> list:
    answers = []
    body = UnregisterControllerRequest.decode(UnregisterControllerRequest(controller_id=controller_id).encode(0), 0)
    controller_writes.submit(SimpleNamespace(controller=s.controller), 94, 0, body,
                             lambda r: answers.append(UnregisterControllerResponse.decode(r.encode(0), 0)))
    s.run_for(ms)
    return [(a.error_code, a.error_message, a.throttle_time_ms) for a in answers]


def with_peer(levels=None) -> Single:
    s = Single(levels=levels)
    s.run_for(300)
    s.controller.submit_registration(peer_request(node_id=2), lambda _r: None)
    s.run_for(50)
    assert 2 in s.controller.image.controllers
    return s


def test_a_registered_controller_is_unregistered():
    s = with_peer()
    assert unregister(s, 2) == [(0, None, 0)]
    assert 2 not in s.controller.image.controllers and 1 in s.controller.image.controllers
    assert [(29, 0)] in s.data_batches()  # its own batch: UnregisterControllerRecord v0


def test_refusals_in_kafka_order():
    s = with_peer()
    assert unregister(s, 1) == [(42, "Controller cannot unregister itself while it is active.", 0)]
    assert unregister(s, 7) == [(136, "Controller ID 7 is not currently registered.", 0)]
    old = with_peer(levels=dict(DEFAULT_FEATURES, **{"metadata.version": 32}))
    assert unregister(old, 2) == [
        (35, "The current MetadataVersion is too old to support controller unregistration.", 0)]
    assert unregister(old, 1)[0][0] == 42  # the active-itself check comes first
    assert 2 in old.controller.image.controllers


def test_replay_drops_the_registration_and_describe_cluster_stops_listing_it():
    img = _image(registrations=[_registration(node_id=1), _registration(node_id=3)])
    img.replay(encode_metadata_record(UnregisterControllerRecord(controller_id=3), 0))
    assert sorted(img.controllers) == [1]
    img.replay(encode_metadata_record(UnregisterControllerRecord(controller_id=9), 0))  # unknown: logged only
    assert sorted(img.controllers) == [1] and img.unknown_records == 0
    call = Call()
    handle_describe_cluster_request(call, _view(1, (img.controllers, 33)), controller_listener=True, advertised={})
    assert [b.broker_id for b in call.answer.brokers] == [1]
