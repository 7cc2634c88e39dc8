"""TimeoutMs as the deadline in the controller's write queue for CreateTopics,
DeleteTopics, CreatePartitions and ElectLeaders (``api/deadlines.py``), as Kafka
4.3.1's ``ControllerApis`` gives it: not started by then -> REQUEST_TIMED_OUT on every
part with no message, nothing written; 0 or less always expires; a request Kafka's
controller queues no event for has no deadline."""
from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from kraft_server.api.controller_writes import submit
from kraft_server.api.registry import deadline
from wire.errors import ErrorCode
from wire.messages import CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest
from wire.messages.create_partitions_request import CreatePartitionsTopic
from wire.messages.delete_topics_request import DeleteTopicState
from wire.messages.elect_leaders_request import TopicPartitions

from tests.unit.controller.test_controller_reassignment import _stall
from tests.unit.controller.test_controller_topics import three, topic

TIMED_OUT = ErrorCode.REQUEST_TIMED_OUT
ZERO = uuid.UUID(int=0)


def _submit(c, api_key, version, body):
    out = []
    submit(SimpleNamespace(controller=c.controller), api_key, version, body, out.append)
    return out


def _answer(c, api_key, version, body):
    out = _submit(c, api_key, version, body)
    c.run_for(30)
    (r,) = out
    return r


def _create(timeout_ms, *names, validate_only=False):
    return CreateTopicsRequest(topics=[topic(n, 2, 1) for n in names], timeout_ms=timeout_ms,
                               validate_only=validate_only)


def _grow(timeout_ms, *names, count=3):
    return CreatePartitionsRequest(topics=[CreatePartitionsTopic(name=n, count=count, assignments=None)
                                           for n in names], timeout_ms=timeout_ms)


def _elect(timeout_ms, partitions):
    return ElectLeadersRequest(election_type=0, timeout_ms=timeout_ms, topic_partitions=None if partitions is None
                               else [TopicPartitions(topic=t, partitions=p) for t, p in partitions])


def _results(api_key, r):
    """(name, error code, message) of each part of an answer."""
    if api_key == 19:
        return [(t.name, t.error_code, t.error_message) for t in r.topics]
    if api_key == 20:
        return [(t.name, t.error_code, t.error_message) for t in r.responses]
    if api_key == 37:
        return [(t.name, t.error_code, t.error_message) for t in r.results]
    return [((t.topic, p.partition_id), p.error_code, p.error_message)
            for t in r.replica_election_results for p in t.partition_result]


@pytest.mark.parametrize("timeout", [0, -1])
def test_a_timeout_of_zero_or_less_expires_everywhere_with_no_message_and_writes_nothing(timeout):
    c, _ = three()
    assert _results(19, _answer(c, 19, 7, _create(30000, "t"))) == [("t", 0, None)]
    written = c.controller.image.offset
    cases = [
        (19, 7, _create(timeout, "a", "b"), [("a", TIMED_OUT, None), ("b", TIMED_OUT, None)]),
        (19, 7, _create(timeout, "v", validate_only=True), [("v", TIMED_OUT, None)]),
        (20, 6, DeleteTopicsRequest(topics=[DeleteTopicState(name="t", topic_id=ZERO)], timeout_ms=timeout),
         [("t", TIMED_OUT, None)]),
        (20, 5, DeleteTopicsRequest(topic_names=["t", "nope"], timeout_ms=timeout),
         [("t", TIMED_OUT, None), ("nope", TIMED_OUT, None)]),
        (37, 3, _grow(timeout, "t"), [("t", TIMED_OUT, None)]),
        (43, 2, _elect(timeout, [("t", [0, 1])]), [(("t", 0), TIMED_OUT, None), (("t", 1), TIMED_OUT, None)]),
        (43, 2, _elect(timeout, None), []),
    ]
    for api_key, version, body, parts in cases:
        r = _answer(c, api_key, version, body)
        assert _results(api_key, r) == parts, (api_key, version)
        if api_key == 43:  # top-level code from v1, as ElectLeadersRequest.getErrorResponse
            assert r.error_code == TIMED_OUT
    assert c.controller.image.offset == written and sorted(c.controller.image.topics.by_name) == ["t"]
    assert len(c.controller.image.topics.by_name["t"].partitions) == 2


def test_requests_kafka_answers_without_an_event_have_no_deadline():
    c, _ = three()
    assert _results(19, _answer(c, 19, 7, _create(30000, "t"))) == [("t", 0, None)]
    dup = "Duplicate topic name."
    assert _results(19, _answer(c, 19, 7, _create(0))) == []
    assert _results(19, _answer(c, 19, 7, _create(0, "d", "d"))) == [("d", ErrorCode.INVALID_REQUEST, dup)] * 2
    meta = _results(19, _answer(c, 19, 7, _create(0, "__cluster_metadata")))
    assert [m[:2] for m in meta] == [("__cluster_metadata", ErrorCode.INVALID_REQUEST)]
    assert _results(20, _answer(c, 20, 6, DeleteTopicsRequest(topics=[], timeout_ms=0))) == []
    neither = _results(20, _answer(c, 20, 6, DeleteTopicsRequest(
        topics=[DeleteTopicState(name=None, topic_id=ZERO)], timeout_ms=0)))
    assert [n[1] for n in neither] == [ErrorCode.INVALID_REQUEST]
    assert _results(37, _answer(c, 37, 3, _grow(0, "t", "t"))) == [("t", ErrorCode.INVALID_REQUEST, dup)] * 2
    empty = _answer(c, 43, 2, _elect(0, []))
    assert (empty.error_code, empty.replica_election_results) == (0, [])
    assert len(c.controller.image.topics.by_name["t"].partitions) == 2
    # the rule itself, for each shape
    assert deadline(19, 7, _create(5, "a", "a", "b")) == 5
    assert deadline(20, 5, DeleteTopicsRequest(topic_names=["x", "x"], timeout_ms=5)) is None
    assert deadline(20, 6, DeleteTopicsRequest(topics=[DeleteTopicState(name=None, topic_id=uuid.uuid4())],
                                               timeout_ms=5)) == 5
    assert deadline(20, 6, DeleteTopicsRequest(topics=[DeleteTopicState(name="x", topic_id=uuid.uuid4())],
                                               timeout_ms=5)) is None  # both given: Kafka's own refusal
    assert deadline(43, 0, _elect(5, [("t", [])])) == 5
    assert deadline(1, 12, SimpleNamespace(timeout_ms=5)) is None  # not a controller write with a deadline


def test_a_write_not_started_by_its_deadline_times_out_and_one_in_time_is_done():
    c, _ = three()
    assert _results(19, _answer(c, 19, 7, _create(30000, "t"))) == [("t", 0, None)]
    _stall(c)
    late = [_submit(c, 19, 7, _create(500, "late")), _submit(c, 37, 3, _grow(500, "t")),
            _submit(c, 20, 6, DeleteTopicsRequest(topics=[DeleteTopicState(name="t", topic_id=ZERO)], timeout_ms=500)),
            _submit(c, 43, 1, _elect(500, [("t", [0])]))]
    c.cycle()  # seen: the deadlines are 500 ms from now
    c.now += 499
    c.cycle()
    assert late == [[], [], [], []]
    c.now += 1
    c.cycle()
    assert [_results(k, out[0]) for k, out in zip((19, 37, 20, 43), late)] == [
        [("late", TIMED_OUT, None)], [("t", TIMED_OUT, None)], [("t", TIMED_OUT, None)], [(("t", 0), TIMED_OUT, None)]]
    c.controller.writes.inflight = None
    c.run_for(50)
    assert sorted(c.controller.image.topics.by_name) == ["t"]
    # in time, the same requests are carried out
    assert _results(19, _answer(c, 19, 7, _create(500, "late"))) == [("late", 0, None)]
    assert _results(37, _answer(c, 37, 3, _grow(500, "t"))) == [("t", 0, None)]
    assert len(c.controller.image.topics.by_name["t"].partitions) == 3
    assert _results(43, _answer(c, 43, 1, _elect(500, [("t", [0])]))) == [(("t", 0), ErrorCode.ELECTION_NOT_NEEDED,
                                                                           "Leader election not needed for topic "
                                                                           "partition.")]
    assert _results(20, _answer(c, 20, 6, DeleteTopicsRequest(topics=[DeleteTopicState(name="t", topic_id=ZERO)],
                                                               timeout_ms=500))) == [("t", 0, None)]
    assert sorted(c.controller.image.topics.by_name) == ["late"]


def test_an_enveloped_request_past_its_deadline_is_answered_inside_the_envelope():
    from tests.unit.controller.test_controller_topics import enveloped

    from wire.headers import decode_response

    c, _ = three()
    env, _ = enveloped(c, 19, 7, 42, _create(0, "e"))
    assert env.error_code == 0
    corr, inner = decode_response(bytes(env.response_data), 19, 7)
    assert corr.correlation_id == 42 and _results(19, inner) == [("e", TIMED_OUT, None)]


def test_a_narrowed_request_past_its_deadline_times_out_whole_as_kafka_answers_the_request_as_sent():
    """With an authorizer, the refused topics leave the request Kafka's controller gets,
    but a failed controller future is answered by ``getErrorResponse`` of the request as
    sent: every topic REQUEST_TIMED_OUT, the refused ones too. In time: refused first."""
    from kraft_server.api.controller_writes import handle_controller_write, handle_envelope_request
    from kraft_server.security import acls as A
    from wire.headers import decode_response, encode_request
    from wire.messages import DefaultPrincipalData, EnvelopeRequest
    from tests.unit.api.test_authorize_checks import allow, call, guard_with

    c, _ = three()
    guard = guard_with(allow(A.CREATE, name="a"))
    view = SimpleNamespace(controller=c.controller)
    sent = {}
    for timeout in (0, 30000):
        direct = call(19, _create(timeout, "a", "b"), version=7)
        handle_controller_write(guard.admit(direct), view)
        c.run_for(30)
        sent[timeout] = _results(19, direct.answers[0])
    assert sent[0] == [("a", TIMED_OUT, None), ("b", TIMED_OUT, None)]
    assert [s[:2] for s in sent[30000]] == [("b", ErrorCode.TOPIC_AUTHORIZATION_FAILED), ("a", 0)]
    # the same through a broker's Envelope, as the client's principal
    w = bytearray(b"\x00\x00")
    DefaultPrincipalData(type="User", name="alice", token_authenticated=False).write(w, 0)
    answers = []
    envelope = SimpleNamespace(done=False, respond=answers.append, listener="CONTROLLER", principal="User:broker", body=EnvelopeRequest(
        request_data=encode_request(19, 7, 9, _create(0, "a2", "b"), "adminclient-1")[4:],
        request_principal=bytes(w), client_host_address=b"\x7f\x00\x00\x01"))
    guard_all = guard_with(allow(A.CREATE, name="a2"))
    handle_envelope_request(envelope, view, guard=guard_all)
    c.run_for(30)
    _, inner = decode_response(bytes(answers[0].response_data), 19, 7)
    assert _results(19, inner) == [("a2", TIMED_OUT, None), ("b", TIMED_OUT, None)]
