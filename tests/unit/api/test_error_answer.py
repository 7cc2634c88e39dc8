"""The generic error answer (``kraft_server/api/error_answer``): it covers every request
type, its message rules, Produce's Java HashMap order, and how it stands to the
registry's own error answers. (Byte for byte against Kafka's getErrorResponse:
``tests/interop/test_error_answer_vs_kafka.py``.)"""
from __future__ import annotations

import copy
import uuid

import pytest

from kraft_server.api import registry
from kraft_server.api.error_answer import covered, error_answer
from kraft_server.api.error_answer.java_order import produce_order, string_hash, uuid_hash
from kraft_server.api.error_answer.messages import api_message, default_message, known_code, raw_message
from kraft_server.api.error_answer.refused import refused
from tests.support import strategies as S
from wire.errors import ERRORS, ErrorCode
from wire.messages import REQUESTS, CreateAclsRequest, MetadataRequest, ProduceRequest
from wire.messages.create_acls_request import AclCreation
from wire.messages.metadata_request import MetadataRequestTopic
from wire.messages.produce_request import PartitionProduceData, TopicProduceData

NOT_CONTROLLER = int(ErrorCode.NOT_CONTROLLER)


def test_every_request_type_has_one():
    assert covered() == set(REQUESTS)
    for key, cls in REQUESTS.items():
        for version in S.versions_of(cls):
            answer = error_answer(key, version, cls(), NOT_CONTROLLER)
            assert answer is None or type(answer).__name__ == cls.__name__.replace("Request", "Response")


def test_message_rules_of_api_error():
    default = ERRORS[NOT_CONTROLLER].message
    assert api_message(NOT_CONTROLLER, None) is None
    assert api_message(NOT_CONTROLLER, default) is None  # the default exception's text is dropped
    assert api_message(NOT_CONTROLLER, "moved") == "moved"
    assert api_message(-1, "a stack trace") is None  # UNKNOWN_SERVER_ERROR never leaks one
    assert default_message(NOT_CONTROLLER, "moved") == default
    assert raw_message(NOT_CONTROLLER, None) == default and raw_message(NOT_CONTROLLER, "moved") == "moved"
    assert known_code(12345) == -1 and known_code(NOT_CONTROLLER) == NOT_CONTROLLER


def test_metadata_mirrors_the_topics_and_sets_the_top_level_code():
    body = MetadataRequest(topics=[MetadataRequestTopic(name=None, topic_id=uuid.UUID(int=7)),
                                   MetadataRequestTopic(name="a")])
    answer = error_answer(3, 12, body, NOT_CONTROLLER)
    assert answer.error_code == NOT_CONTROLLER
    assert [(t.name, t.topic_id.int, t.error_code) for t in answer.topics] == [
        ("", 7, NOT_CONTROLLER), ("a", 0, NOT_CONTROLLER)]
    assert error_answer(3, 12, MetadataRequest(topics=None), NOT_CONTROLLER).topics == []


def test_java_hashes():
    # printed by a JVM: String.hashCode() (UTF-16 units, a surrogate pair too) and Uuid.hashCode()
    assert string_hash("topic-0") == -1139260654
    assert string_hash("é✓𝄞") == 18326580
    assert uuid_hash(uuid.UUID(int=0x0123456789ABCDEF_FEDCBA9876543210)) == 0
    assert uuid_hash(uuid.UUID(int=((-5 & (1 << 64) - 1) << 64) | 77)) == 73


def _produce(acks=-1, records=b""):
    return ProduceRequest(acks=acks, timeout_ms=100, topic_data=[
        TopicProduceData(name=f"topic-{n}", partition_data=[
            PartitionProduceData(index=i, records=records) for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 4)])
        for n in range(3)])


def test_produce_walks_partitions_as_kafkas_hashmap_does():
    """3 topics x 10 partitions (one twice): the order a 4.4.0 JVM's getErrorResponse gave."""
    answer = error_answer(0, 3, _produce(), NOT_CONTROLLER)
    assert [(t.name, [p.index for p in t.partition_responses]) for t in answer.responses] == [
        ("topic-2", [6, 4, 2, 0, 8, 5, 3, 1, 7]),
        ("topic-0", [4, 2, 0, 8, 6, 3, 1, 7, 5]),
        ("topic-1", [4, 2, 0, 8, 6, 5, 3, 1, 7]),
    ]
    assert len(produce_order(_produce())) == 27


def test_produce_answers_nothing_for_acks_0_or_null_records():
    assert error_answer(0, 3, _produce(acks=0), NOT_CONTROLLER) is None
    assert error_answer(0, 3, _produce(records=None), NOT_CONTROLLER) is None
    assert error_answer(0, 3, _produce(acks=1), NOT_CONTROLLER) is not None


def test_acl_requests_with_the_unknown_code_are_refused():
    good = AclCreation(resource_type=2, resource_name="t", resource_pattern_type=3, principal="User:a",
                       host="*", operation=3, permission_type=3)
    assert refused(30, 3, CreateAclsRequest(creations=[good])) is None
    bad = copy.copy(good)
    bad.operation = 0
    assert refused(30, 3, CreateAclsRequest(creations=[good, bad])) is not None
    assert refused(3, 12, MetadataRequest()) is None


def _without_messages(obj):
    obj = copy.deepcopy(obj)
    texts = []

    def walk(x):
        if isinstance(x, list):
            for y in x:
                walk(y)
        elif hasattr(x, "__slots__"):
            for name in x.__slots__:
                if name == "error_message":
                    texts.append(getattr(x, name))
                    setattr(x, name, None)
                else:
                    walk(getattr(x, name))
    walk(obj)
    return obj, texts


OWN = sorted(key for key, api in registry.API.items() if api.error_response is not None)


@pytest.mark.parametrize("key", OWN, ids=[REQUESTS[k].__name__ for k in OWN])
def test_registry_answers_agree_with_kafkas_but_for_the_message(key):
    """The registry's own error answers (the active controller's: NOT_CONTROLLER, a
    deadline, the authorizer) build what getErrorResponse builds, part for part and code
    for code. They differ on purpose in the message alone: they follow the controller's
    handlers (``controller/admin_requests.py`` ``fail_message``), which give the error's
    default text (none for a deadline), where getErrorResponse's ApiError.fromThrowable
    drops a default text. So they are left as they are."""
    api, cls = registry.API[key], REQUESTS[key]
    model = S.models()[cls.__name__]
    lo, hi = api.controller
    for version in range(lo, hi + 1):
        for body in (cls(), S.filled_message(model, cls, version)):
            for code in (NOT_CONTROLLER, int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                         int(ErrorCode.REQUEST_TIMED_OUT)):
                ours, ours_texts = _without_messages(api.error_response(version, body, code))
                kafkas, kafka_texts = _without_messages(error_answer(key, version, body, code))
                assert bytes(ours.encode(version)) == bytes(kafkas.encode(version)), (cls.__name__, version, code)
                assert set(ours_texts) <= {None, ERRORS[code].message}, ours_texts
                assert set(kafka_texts) <= {None, ERRORS[code].message}


def test_registry_falls_back_on_the_generic_answer():
    assert registry.API[3].error_response is None
    body = MetadataRequest(topics=[MetadataRequestTopic(name="a")])
    assert registry.error_response(3, 12, body, NOT_CONTROLLER) == error_answer(3, 12, body, NOT_CONTROLLER)
