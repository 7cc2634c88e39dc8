"""Regressions for what the live fuzzer (tests/process/test_fuzz_live.py) found."""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.headers import decode_response, encode_response
from wire.messages import ElectLeadersRequest
from wire.messages.elect_leaders_request import TopicPartitions

from kraft_server.controller.admin_requests import elect_leaders_error_response


def test_elect_leaders_error_answer_encodes_at_every_version():
    """ElectLeaders v0 to a controller that is not active: the node could not encode its
    NOT_CONTROLLER answer (v0 has no top-level ErrorCode) and closed the connection.
    Kafka (``ElectLeadersRequest.getErrorResponse``) puts the error on every requested
    partition, and at the top level only from v1."""
    request = ElectLeadersRequest(topic_partitions=[TopicPartitions(topic="t", partitions=[0, 2])])
    for version in range(0, 3):
        body = elect_leaders_error_response(request, version, ErrorCode.NOT_CONTROLLER)
        _, decoded = decode_response(encode_response(43, version, 1, body)[4:], 43, version)
        assert decoded.error_code == (ErrorCode.NOT_CONTROLLER if version >= 1 else 0)
        (result,) = decoded.replica_election_results
        assert result.topic == "t"
        assert [(p.partition_id, p.error_code) for p in result.partition_result] == [
            (0, ErrorCode.NOT_CONTROLLER), (2, ErrorCode.NOT_CONTROLLER)]
    every = elect_leaders_error_response(ElectLeadersRequest(topic_partitions=None), 0, ErrorCode.NOT_CONTROLLER)
    assert every.replica_election_results == [] and every.error_code == 0
