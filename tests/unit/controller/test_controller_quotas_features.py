"""Client quotas (``controller/quotas/control.py``) and feature updates
(``controller/features/control.py``) decided on an image, as tables: Kafka 4.3.1's
``ClientQuotaControlManager`` and ``FeatureControlManager`` rules (the messages are
Kafka's; ``tests/interop/test_controller_api_measure.py`` checks them against its
controllers through the real tools)."""
from __future__ import annotations

import uuid

import pytest

from kraft_server.controller.image.client_quotas import ClientQuotasImage, entity_of
from kraft_server.controller.quotas.control import alter_client_quotas, alter_client_quotas_op
from kraft_server.common.refused import Refused
from kraft_server.controller.features.control import FeatureUpdate
from kraft_server.controller.image.metadata_image import MetadataImage
from kraft_server.controller.controller import REGISTRATION_FEATURES
from kraft_server.controller.image import records as rec
from wire.errors import ErrorCode
from wire.messages import AlterClientQuotasRequest, FeatureLevelRecord, RegisterBrokerRecord
from wire.messages.alter_client_quotas_request import EntityData, EntryData, OpData
from wire.messages.register_broker_record import BrokerFeature
from wire.records import encode_metadata_record

INVALID = ErrorCode.INVALID_REQUEST


def entry(parts, *ops):
    return EntryData(entity=[EntityData(entity_type=t, entity_name=n) for t, n in parts],
                     ops=[OpData(key=k, value=v if v is not None else 0.0, remove=v is None) for k, v in ops])


def replayed(records) -> MetadataImage:
    img = MetadataImage()
    for r, v in records:
        img.replay(encode_metadata_record(r, v))
    return img


# -- client quotas ---------------------------------------------------------------------------

@pytest.mark.parametrize("parts, ops, message", [
    ([], [("producer_byte_rate", 1.0)], "Invalid empty client quota entity"),
    ([("group", "g")], [("producer_byte_rate", 1.0)], "Unhandled client quota entity type: group"),
    ([("user", "")], [("producer_byte_rate", 1.0)], "Empty user not supported"),
    ([("ip", "1.2.3.4"), ("user", "u")], [("connection_creation_rate", 1.0)],
     "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"),
    ([("ip", "no such host!")], [("connection_creation_rate", 1.0)],
     "no such host! is not a valid IP or resolvable host."),
    ([("client-id", "c")], [("connection_creation_rate", 1.0)], "Invalid configuration key connection_creation_rate"),
    ([("ip", None)], [("producer_byte_rate", 1.0)], "Invalid configuration key producer_byte_rate"),
    ([("client-id", "c")], [("request_percentage", 0.0)], "Quota request_percentage must be greater than 0"),
    ([("client-id", "c")], [("producer_byte_rate", 1.5)], "producer_byte_rate cannot be a fractional value."),
    ([("ip", "::1")], [("connection_creation_rate", 2.0**31)],
     "Proposed value for connection_creation_rate is too large for an INT."),
    ([("user", "u")], [("producer_byte_rate", 1.0), ("producer_byte_rate", 2.0)],
     "Ignoring duplicate entity ClientQuotaEntity(entries={user=u})"),
])
def test_refusals_are_per_entity_invalid_request(parts, ops, message):
    quotas = ClientQuotasImage()
    results, records = alter_client_quotas(quotas, [entry(parts, *ops), entry([("user", "ok")],
                                                                               ("consumer_byte_rate", 5.0))])
    assert results[0][1:] == (INVALID, message)
    assert results[1][1:] == (0, None)
    assert [(r.key, r.value) for r, _ in records] == [("consumer_byte_rate", 5.0)]  # the good entity still goes


def test_records_set_remove_and_skip_what_does_not_change():
    quotas = ClientQuotasImage()
    _, records = alter_client_quotas(quotas, [
        entry([("user", "u"), ("client-id", None)], ("producer_byte_rate", 1024.0), ("request_percentage", 12.5)),
        entry([("ip", "10.0.0.1")], ("connection_creation_rate", 3.0))])
    # Kafka's order of entity parts: client-id before user
    assert [(e.entity_type, e.entity_name) for e in records[0][0].entity] == [("client-id", None), ("user", "u")]
    img = replayed(records)
    assert img.quotas.entities == {
        entity_of([("user", "u"), ("client-id", None)]): {"producer_byte_rate": 1024.0, "request_percentage": 12.5},
        entity_of([("ip", "10.0.0.1")]): {"connection_creation_rate": 3.0}}
    _, again = alter_client_quotas(img.quotas, [
        entry([("client-id", None), ("user", "u")], ("producer_byte_rate", 1024.0), ("request_percentage", None),
              ("consumer_byte_rate", None))])
    assert [(r.key, r.remove) for r, _ in again] == [("request_percentage", True)]  # same value, absent key: nothing
    for r, v in again:
        img.replay(encode_metadata_record(r, v))
    _, last = alter_client_quotas(img.quotas, [entry([("user", "u"), ("client-id", None)],
                                                     ("producer_byte_rate", None))])
    for r, v in last:
        img.replay(encode_metadata_record(r, v))
    assert list(img.quotas.entities) == [entity_of([("ip", "10.0.0.1")])]  # the last key gone: entity forgotten


def test_snapshot_records_rebuild_the_same_quotas():
    _, records = alter_client_quotas(ClientQuotasImage(), [
        entry([("user", None)], ("consumer_byte_rate", 10.0)), entry([("client-id", "c")], ("request_percentage", 1.5))])
    img = replayed(records)
    again = MetadataImage()
    for value in img.snapshot_records():
        again.replay(value)
    assert again.quotas.content() == img.quotas.content() and again.content() == img.content()


def test_validate_only_writes_nothing_and_answers_the_same():
    img = replayed([(FeatureLevelRecord(name="metadata.version", feature_level=30), 0)])
    for validate in (True, False):
        request = AlterClientQuotasRequest(entries=[entry([("user", "u")], ("producer_byte_rate", 7.0))],
                                           validate_only=validate)
        run, _ = alter_client_quotas_op(request)
        write = run(img, 0, 0)
        assert len(write.records) == (0 if validate else 1)
        body = write.reply()
        assert [(e.error_code, [(x.entity_type, x.entity_name) for x in e.entity]) for e in body.entries] == [
            (0, [("user", "u")])]


# -- feature updates ------------------------------------------------------------------------------

class Core:
    def __init__(self, kraft_version=1, voters=(1,)):
        self._kraft, self._voters = kraft_version, voters

    def kraft_version(self):
        return self._kraft

    def voter_set(self):
        ids = self._voters

        class Voters:
            def ids(self):
                return set(ids)
        return Voters()


LOCAL = {n: (lo, hi) for n, lo, hi in REGISTRATION_FEATURES}


def image_at(mv: int, broker_features=None, **levels) -> MetadataImage:
    records = [(FeatureLevelRecord(name="metadata.version", feature_level=mv), 0)]
    records += [(FeatureLevelRecord(name=n.replace("_", "."), feature_level=lvl), 0) for n, lvl in levels.items()]
    img = replayed(records)
    if broker_features is not None:
        img.brokers.register(RegisterBrokerRecord(
            broker_id=100, incarnation_id=uuid.uuid4(), broker_epoch=5, end_points=[],
            features=[BrokerFeature(name=n, min_supported_version=lo, max_supported_version=hi)
                      for n, (lo, hi) in broker_features.items()], rack=None, fenced=False), 5)
    return img


def decide(img, *updates, core=None, validate_only=False):
    return FeatureUpdate(img, core or Core(), LOCAL, 1).decide(list(updates), validate_only, 0)


@pytest.mark.parametrize("current, target, kind, why", [
    (30, 29, 2, "Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the requested "
                "downgrade because it might delete metadata information."),
    (30, 29, 3, "Unsupported metadata.version downgrade from 30 to 29. Unsafe metadata downgrade is not "
                "supported in this version."),
    (29, 24, 2, None),  # no format change between 4.0-IV2 and 4.2-IV1: a safe downgrade
    (21, 30, 1, None),
    (30, 21, 1, "Invalid update version 21 for feature metadata.version. Can't downgrade the version of this "
                "feature without setting the upgrade type to either safe or unsafe downgrade."),
    (21, 30, 2, "Invalid update version 30 for feature metadata.version. Can't downgrade to a newer version."),
    (30, 33, 1, None),  # kafka-features upgrade --release-version 4.4
    (30, 34, 1, "Invalid update version 34 for feature metadata.version. Local controller 1 only supports "
                "versions 7-33"),
    (31, 30, 2, None),  # 4.4-IV0 changed no metadata
    (32, 31, 2, "Unsupported metadata.version downgrade from 32 to 31. Refusing to perform the requested "
                "downgrade because it might delete metadata information."),
    (33, 32, 3, "Unsupported metadata.version downgrade from 33 to 32. Unsafe metadata downgrade is not "
                "supported in this version."),
    (33, 30, 2, "Unsupported metadata.version downgrade from 33 to 30. Refusing to perform the requested "
                "downgrade because it might delete metadata information."),
])
def test_metadata_version_changes(current, target, kind, why):
    img = image_at(current)
    if why is None:
        assert [(r.name, r.feature_level) for r, _ in decide(img, ("metadata.version", target, kind))] == [
            ("metadata.version", target)]
    else:
        with pytest.raises(Refused) as refused:
            decide(img, ("metadata.version", target, kind))
        assert str(refused.value) == why


def test_share_version_2_is_supported_and_a_4_3_broker_refuses_it():
    assert decide(image_at(33, share_version=1), ("share.version", 2, 1))
    img = image_at(30, broker_features={"metadata.version": (7, 30), "share.version": (0, 1)})
    with pytest.raises(Refused, match="Broker 100 only supports versions 0-1"):
        decide(img, ("share.version", 2, 1))
    with pytest.raises(Refused, match="Broker 100 only supports versions 7-30"):
        decide(img, ("metadata.version", 33, 1))


def test_every_broker_and_controller_must_support_the_level():
    img = image_at(30, broker_features={"metadata.version": (7, 30)})
    with pytest.raises(Refused, match="Broker 100 does not support this feature."):
        decide(img, ("group.version", 1, 1))
    img = image_at(30, broker_features={"group.version": (0, 1)})
    assert decide(img, ("group.version", 1, 1))
    with pytest.raises(Refused, match="controller 2 has not registered, and may not support this feature"):
        decide(img, ("group.version", 1, 1), core=Core(voters=(1, 2)))


def test_elr_needs_metadata_version_4_0_iv1_and_writes_its_safety_records():
    with pytest.raises(Refused, match=r"eligible.leader.replicas.version could not be set to 1 because it "
                                      r"depends on metadata.version=23 \(4.0-IV1\)"):
        decide(image_at(21), ("eligible.leader.replicas.version", 1, 1))
    img = image_at(21)
    img.replay(rec.config(rec.BROKER_RESOURCE, "100", "min.insync.replicas", "2"))
    records = decide(img, ("metadata.version", 30, 1), ("eligible.leader.replicas.version", 1, 1))
    configs = [(r.resource_name, r.name, r.value) for r, _ in records if hasattr(r, "resource_name")]
    assert configs == [("", "min.insync.replicas", "1"), ("100", "min.insync.replicas", None)]
    assert decide(img, ("metadata.version", 30, 1), ("eligible.leader.replicas.version", 1, 1),
                  validate_only=True) == []


def test_kraft_version_rides_along_with_a_no_op_record():
    img = image_at(30, group_version=1)
    records = decide(img, ("kraft.version", 1, 1), ("group.version", 1, 1))
    assert [type(r).__name__ for r, _ in records] == ["NoOpRecord", "FeatureLevelRecord"]
    with pytest.raises(Refused, match="Can't downgrade the version of this feature."):
        decide(img, ("kraft.version", 0, 2), ("group.version", 1, 1))
    assert decide(img, ("group.version", 0, 2)) == [(FeatureLevelRecord(name="group.version", feature_level=0), 0)]
    with pytest.raises(Refused, match="The controller does not support the given upgrade type."):
        decide(img, ("group.version", 1, 7))


# -- enveloped requests that are not controller writes ---------------------------------------

def test_envelope_hands_describe_quorum_and_update_features_to_the_dispatcher():
    from types import SimpleNamespace

    from kraft_server.api.controller_writes import handle_envelope_request
    from wire.headers import decode_response, encode_request
    from wire.messages import DescribeQuorumRequest, DescribeQuorumResponse, EnvelopeRequest, UpdateFeaturesRequest
    from wire.messages import UpdateFeaturesResponse
    from wire.messages.describe_quorum_request import PartitionData, TopicData

    inner_calls, answers = [], []
    outer = SimpleNamespace(done=False, respond=answers.append, listener="CONTROLLER", principal="User:ANONYMOUS")
    dq = DescribeQuorumRequest(topics=[TopicData(topic_name="__cluster_metadata",
                                                 partitions=[PartitionData(partition_index=0)])])
    outer.body = EnvelopeRequest(request_data=encode_request(55, 2, 77, dq, "adminclient-1")[4:])
    handle_envelope_request(outer, SimpleNamespace(controller=None), inner_calls.append)
    [inner] = inner_calls
    assert (inner.api_key, inner.api_version, inner.listener) == (55, 2, "CONTROLLER")
    inner.respond(DescribeQuorumResponse(error_code=0, topics=[]))
    inner.respond(DescribeQuorumResponse(error_code=0, topics=[]))  # a second answer is dropped
    assert len(answers) == 1 and answers[0].error_code == 0
    header, body = decode_response(bytes(answers[0].response_data), 55, 2)
    assert header.correlation_id == 77 and body.error_code == 0
    # the inner NOT_CONTROLLER is the envelope's own error: the broker finds the new controller
    answers.clear()
    outer.body = EnvelopeRequest(request_data=encode_request(57, 2, 78, UpdateFeaturesRequest(), "a")[4:])
    handle_envelope_request(outer, SimpleNamespace(controller=None), inner_calls.append)
    inner_calls[-1].respond(UpdateFeaturesResponse(error_code=ErrorCode.NOT_CONTROLLER))
    assert (answers[0].error_code, answers[0].response_data) == (ErrorCode.NOT_CONTROLLER, None)


def test_an_answer_that_fails_to_build_is_unknown_server_error_and_the_controller_goes_on():
    from kraft_server.controller.write_queue import Write
    from tests.unit.controller.test_controller_topics import run, three

    c, _ = three()

    def broken(records):
        def op(image, next_offset, now_ms):
            return Write(records, lambda: 1 / 0)
        return op, lambda code: ("failed", code)
    no_op = [(FeatureLevelRecord(name="group.version", feature_level=1), 0)]
    assert run(c, broken([])) == ("failed", ErrorCode.UNKNOWN_SERVER_ERROR)
    assert run(c, broken(no_op)) == ("failed", ErrorCode.UNKNOWN_SERVER_ERROR)
    request = AlterClientQuotasRequest(entries=[entry([("user", "u")], ("producer_byte_rate", 7.0))])
    assert run(c, alter_client_quotas_op(request)).entries[0].error_code == 0
    assert c.controller.image.quotas.entities == {(("user", "u"),): {"producer_byte_rate": 7.0}}
