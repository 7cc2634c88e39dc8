"""A replica's next Fetch read from its last one (kraft_server/net/fetch_template.py):
the same objects as a full decode, and never objects someone still holds."""
from __future__ import annotations

import uuid

from kraft_server.api.registry import listener_apis
from kraft_server.net.pipeline import Pipeline
from wire.headers import decode_request_header, encode_request
from wire.messages import REQUESTS
from wire.messages import fetch_request as freq
from wire.messages import fetch_response as fresp

DIRECTORY = uuid.UUID(int=7)


def observer_fetch(corr, offset, epoch=3, leader_epoch=3, max_wait_ms=500, version=17):
    part = freq.FetchPartition(partition=0, current_leader_epoch=leader_epoch, fetch_offset=offset,
                               last_fetched_epoch=epoch, log_start_offset=-1, partition_max_bytes=1 << 23,
                               replica_directory_id=DIRECTORY)
    body = freq.FetchRequest(cluster_id="c", replica_state=freq.ReplicaState(replica_id=1001),
                             max_wait_ms=max_wait_ms, max_bytes=1 << 23,
                             topics=[freq.FetchTopic(topic="__cluster_metadata", topic_id=uuid.UUID(int=1),
                                                     partitions=[part])])
    return encode_request(1, version, corr, body, "observer-1")


def full_decode(frame: bytes):
    header, pos = decode_request_header(frame[4:])
    return header, REQUESTS[1].read(frame[4:], pos, header.request_api_version)[0]


def one_call(pipe, frame):
    pipe.receive_data(frame)
    call = pipe.next_call()
    assert call is not None and pipe.next_call() is None
    return call


def answer(call):
    call.respond(fresp.FetchResponse())
    call.pipeline.output_buffers()


def test_the_next_fetch_is_read_from_the_last_one_with_the_same_result():
    pipe = Pipeline("CONTROLLER", listener_apis(True))
    answer(one_call(pipe, observer_fetch(1, 1000)))
    for corr, offset, epoch, leader_epoch in ((2, 1125, 3, 3), (3, 2**40 + 5, 4, 5), (4, 0, 0, 5)):
        frame = observer_fetch(corr, offset, epoch, leader_epoch)
        call = one_call(pipe, frame)
        header, body = full_decode(frame)
        assert (call.header, call.body, call.api_key, call.api_version) == (header, body, 1, 17)
        answer(call)
        del call
    assert pipe.fetches.hits == 3


def test_objects_still_held_are_not_reused():
    pipe = Pipeline("CONTROLLER", listener_apis(True))
    held = one_call(pipe, observer_fetch(1, 1000))  # parked, say: not answered, still referenced
    second = one_call(pipe, observer_fetch(2, 1125))
    assert pipe.fetches.hits == 0
    assert held.body.topics[0].partitions[0].fetch_offset == 1000 and held.correlation_id == 1
    assert second.body.topics[0].partitions[0].fetch_offset == 1125 and second.correlation_id == 2
    part = second.body.topics[0].partitions[0]  # e.g. a PendingFetch keeps the partition
    answer(held), answer(second)
    del second
    third = one_call(pipe, observer_fetch(3, 1250))
    assert pipe.fetches.hits == 0 and part.fetch_offset == 1125
    assert third.body == full_decode(observer_fetch(3, 1250))[1]


def test_a_fetch_that_differs_elsewhere_is_decoded_in_full():
    pipe = Pipeline("CONTROLLER", listener_apis(True))
    answer(one_call(pipe, observer_fetch(1, 1000)))
    frame = observer_fetch(2, 1000, max_wait_ms=0)
    call = one_call(pipe, frame)
    assert pipe.fetches.hits == 0 and call.body == full_decode(frame)[1]
