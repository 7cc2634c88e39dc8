"""Side-by-side codec benchmark: ours (wire.messages, wire.records) vs kafka-python vs kio.

    python bench/wire/codec.py            # full run (< ~60 s on the project machine)
    python bench/wire/codec.py --quick    # smoke run (a few seconds)
    python bench/wire/codec.py --json     # the same numbers as JSON
    python bench/wire/codec.py --only metadata_response_v12   # one row (for profiling)

Every row encodes and decodes the *same* message with all three libraries. Before
timing, the bench asserts that the three encoders produce byte-identical output from
independently built objects, and that each decoder reads those bytes back into full
objects that re-encode to the same bytes. What is timed:

* encode: library object -> bytes-like output (message body, no header or framing).
  ours ``obj.encode(v)``; kafka-python ``obj.encode(version=v)``; kio
  ``entity_writer(cls)(BytesIO(), obj)`` + ``getvalue()``. For FetchResponse, ours is what
  the server does to put a response on the wire: ``codec_support.encode_parts`` (the body
  as a list of buffers with the record views by reference, for ``writelines``); the
  byte-identity check joins that list.
* decode: ``bytes`` -> full library objects, every field materialised.
  ours ``Cls.decode(buf, v)``; kafka-python ``Cls.decode(buf, version=v)``; kio
  ``entity_reader(cls)(buf, 0)`` (its native Rust reader).
* record batch: encode = build a v2 batch of 1,000 records from record objects (CRC
  included); decode = parse the batch with CRC verification and materialise every
  record. ours ``wire.records``; kafka-python ``DefaultRecordBatchBuilder`` /
  ``DefaultRecordBatch`` (+ ``validate_crc()``, iterate); kio ``kio.records``.

Timing: ``time.perf_counter_ns``; warm-up, then each library's iteration count is
calibrated so one round lasts about 0.1 s (0.01 s with ``--quick``); the libraries take
turns within each of 9 rounds (3 with ``--quick``) and the reported figure is the
median over rounds (the minimum is in the JSON too). The cyclic GC is disabled inside
rounds (as ``timeit`` does) and a collection runs between cells.

``speedup_vs_best_peer`` = (the faster of kafka-python and kio) / ours; 2.0 means ours
is twice as fast as the best peer. "ours" is the path this process imports: the compiled
codecs when they are built (``wire.native``). The "pure" column is ours again, timed in a
child process with ``KRAFT_PURE_PYTHON=1`` right after (``--no-pure`` leaves it out), so the
gain from compilation is visible; the child times the peers again too, so that its "pure
speedup" (``pure_speedup_vs_best_peer`` in the JSON) compares figures taken side by side.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import os
import subprocess
import gc
import io
import json
import platform
import random
import statistics
import sys
import time
import types
import uuid
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

warnings.filterwarnings("ignore", category=DeprecationWarning)

import kafka  # noqa: E402
import kio  # noqa: E402
from kafka.protocol.admin.cluster import DescribeQuorumResponse as KpDescribeQuorumResponse  # noqa: E402
from kafka.protocol.api_message import ApiMessage  # noqa: E402
from kafka.protocol.consumer.fetch import FetchResponse as KpFetchResponse  # noqa: E402
from kafka.protocol.metadata import MetadataResponse as KpMetadataResponse  # noqa: E402
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder  # noqa: E402
from kio.records import readers as kio_rec_readers  # noqa: E402
from kio.records import schema as kio_rec  # noqa: E402
from kio.records import writers as kio_rec_writers  # noqa: E402
from kio.schema.describe_quorum.v2 import response as kio_dq  # noqa: E402
from kio.schema.errors import ErrorCode  # noqa: E402
from kio.schema.fetch.v16 import response as kio_fetch  # noqa: E402
from kio.schema.metadata.v12 import response as kio_md  # noqa: E402
from kio.schema.vote.v2 import request as kio_vote  # noqa: E402
from kio.serial import entity_reader, entity_writer  # noqa: E402
from kio.static.primitive import TZAwareMicros  # noqa: E402

from wire import native  # noqa: E402
from wire.codec_support import encode_parts  # noqa: E402
from wire.messages import describe_quorum_response as our_dq  # noqa: E402
from wire.messages import fetch_response as our_fetch  # noqa: E402
from wire.messages import metadata_response as our_md  # noqa: E402
from wire.messages import vote_request as our_vote  # noqa: E402
from wire.records import with_base_offset  # noqa: E402

try:  # record batch v2 codec; written in parallel with this bench
    import wire.records as our_records  # noqa: E402
except ImportError:  # pragma: no cover - until wire/records lands
    our_records = None


# kafka-python 3.0.12 ships no VoteRequest class. Its runtime codegen builds one from a
# Kafka message-spec JSON; we hand it ours (schemas/messages/VoteRequest.json, wire-equal
# to Apache Kafka 4.3.1's). The byte-identity check against kio keeps this honest.
_kp_vote_pkg = types.ModuleType("_kp_vote_pkg")
_kp_vote_pkg.__package__ = "schemas.messages"


class VoteRequest(ApiMessage, load_json=_kp_vote_pkg):
    pass


KpVoteRequest = VoteRequest

PEERS = ("kafka_python", "kio")


def check(cond, msg: str) -> None:
    """An assertion that also holds under ``python -O``."""
    if not cond:
        raise AssertionError(msg)
LIBS = ("ours",) + PEERS

# ------------------------------------------------------------------------------------
# Test data: one plain description per row; each library builds its own objects.
# ------------------------------------------------------------------------------------
_rng = random.Random(20240611)


def _uuid() -> uuid.UUID:
    return uuid.UUID(int=_rng.getrandbits(128), version=4)


CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qk"
_TOPIC_STEMS = ["orders", "payments", "inventory", "user-events", "clickstream",
                "audit-log", "notifications", "shipments", "fraud-signals", "search-index"]
_TOPIC_SUFFIXES = [".v1", ".v2", "-dlq", "-retry", ".compacted"]


def metadata_data() -> dict:
    brokers = [dict(node_id=i, host=f"broker-{i}.kafka.prod-eu-west-1.internal", port=9092,
                    rack=f"eu-west-1{'abc'[i - 1]}") for i in (1, 2, 3)]
    topics = []
    for t in range(50):
        name = f"{_TOPIC_STEMS[t % 10]}{_TOPIC_SUFFIXES[t // 10]}"
        parts = []
        for p in range(20):
            leader = 1 + (t + p) % 3
            replicas = [leader, 1 + (leader % 3), 1 + ((leader + 1) % 3)]
            parts.append(dict(error_code=0, partition_index=p, leader_id=leader,
                              leader_epoch=3 + (p % 5), replica_nodes=replicas,
                              isr_nodes=list(replicas), offline_replicas=[]))
        topics.append(dict(error_code=0, name=name, topic_id=_uuid(), is_internal=False,
                           partitions=parts))
    return dict(throttle_time_ms=0, brokers=brokers, cluster_id=CLUSTER_ID, controller_id=1,
                topics=topics)


def fetch_data(record_blob: bytes) -> dict:
    responses = []
    for t in range(5):
        parts = []
        for p in range(10):
            base = 1_000_000 * (t * 10 + p)
            # A distinct, valid batch per partition: only baseOffset (outside the CRC) differs.
            blob = with_base_offset(record_blob, base)
            parts.append(dict(partition_index=p, error_code=0, high_watermark=base + 5000,
                              last_stable_offset=base + 5000, log_start_offset=base,
                              aborted_transactions=[], preferred_read_replica=-1,
                              records=blob))
        responses.append(dict(topic_id=_uuid(), partitions=parts))
    return dict(throttle_time_ms=0, error_code=0, session_id=918273645, responses=responses)


def describe_quorum_data() -> dict:
    now = 1_717_171_717_171

    def replica(rid, caught_up=True):
        return dict(replica_id=rid, replica_directory_id=_uuid(), log_end_offset=8_812_345 - rid,
                    last_fetch_timestamp=now - rid, last_caught_up_timestamp=now - 3 * rid
                    if caught_up else -1)

    voters = [replica(i) for i in range(1, 6)]
    observers = [replica(100 + i, caught_up=i % 7 != 0) for i in range(50)]
    nodes = [dict(node_id=i, listeners=[
        dict(name="CONTROLLER", host=f"controller-{i}.kraft.internal", port=9093),
        dict(name="CONTROLLER_SSL", host=f"controller-{i}.kraft.internal", port=9094)])
        for i in range(1, 6)]
    part = dict(partition_index=0, error_code=0, error_message=None, leader_id=1,
                leader_epoch=42, high_watermark=8_812_300, current_voters=voters,
                observers=observers)
    return dict(error_code=0, error_message=None,
                topics=[dict(topic_name="__cluster_metadata", partitions=[part])], nodes=nodes)


def vote_data() -> dict:
    part = dict(partition_index=0, replica_epoch=43, replica_id=2, replica_directory_id=_uuid(),
                voter_directory_id=_uuid(), last_offset_epoch=42, last_offset=8_812_345,
                pre_vote=False)
    return dict(cluster_id=CLUSTER_ID, voter_id=1,
                topics=[dict(topic_name="__cluster_metadata", partitions=[part])])


BATCH_BASE_TS = 1_717_171_000_000


def records_data(n: int = 1000, value_size: int = 100, seed: int = 7) -> list[dict]:
    """Records for one batch. Timestamps are whole seconds: kio keeps record timestamps
    at second precision, so only such timestamps give byte-identical batches."""
    r = random.Random(seed)
    alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789"
    out = []
    for i in range(n):
        value = bytes(r.choice(alphabet) for _ in range(value_size))
        out.append(dict(offset=i, timestamp=BATCH_BASE_TS + (i // 50) * 1000,
                        key=b"key-%06d" % i, value=value,
                        headers=[("trace-id", b"%016x" % r.getrandbits(64))]))
    return out


# ------------------------------------------------------------------------------------
# Object builders, one per library.
# ------------------------------------------------------------------------------------
def _ms(v):
    return _dt.timedelta(milliseconds=v)


# -- MetadataResponse v12 --
def md_ours(d):
    M = our_md
    return M.MetadataResponse(
        throttle_time_ms=d["throttle_time_ms"], cluster_id=d["cluster_id"],
        controller_id=d["controller_id"],
        brokers=[M.MetadataResponseBroker(**b) for b in d["brokers"]],
        topics=[M.MetadataResponseTopic(
            error_code=t["error_code"], name=t["name"], topic_id=t["topic_id"],
            is_internal=t["is_internal"],
            partitions=[M.MetadataResponsePartition(**p) for p in t["partitions"]])
            for t in d["topics"]])


def md_kp(d):
    M = KpMetadataResponse
    T = M.MetadataResponseTopic
    return M(
        version=12, throttle_time_ms=d["throttle_time_ms"], cluster_id=d["cluster_id"],
        controller_id=d["controller_id"],
        brokers=[M.MetadataResponseBroker(version=12, **b) for b in d["brokers"]],
        topics=[T(version=12, error_code=t["error_code"], name=t["name"], topic_id=t["topic_id"],
                  is_internal=t["is_internal"], authorized_operations=None,
                  partitions=[T.MetadataResponsePartition(version=12, **p)
                              for p in t["partitions"]])
                for t in d["topics"]])


def md_kio(d):
    K = kio_md
    return K.MetadataResponse(
        throttle_time=_ms(d["throttle_time_ms"]), cluster_id=d["cluster_id"],
        controller_id=d["controller_id"],
        brokers=tuple(K.MetadataResponseBroker(**b) for b in d["brokers"]),
        topics=tuple(K.MetadataResponseTopic(
            error_code=ErrorCode(t["error_code"]), name=t["name"], topic_id=t["topic_id"],
            is_internal=t["is_internal"],
            partitions=tuple(K.MetadataResponsePartition(
                error_code=ErrorCode(p["error_code"]), partition_index=p["partition_index"],
                leader_id=p["leader_id"], leader_epoch=p["leader_epoch"],
                replica_nodes=tuple(p["replica_nodes"]), isr_nodes=tuple(p["isr_nodes"]),
                offline_replicas=tuple(p["offline_replicas"])) for p in t["partitions"]))
            for t in d["topics"]))


# -- FetchResponse v16 --
def fetch_ours(d):
    M = our_fetch
    return M.FetchResponse(
        throttle_time_ms=d["throttle_time_ms"], error_code=d["error_code"],
        session_id=d["session_id"],
        responses=[M.FetchableTopicResponse(
            topic_id=r["topic_id"],
            partitions=[M.PartitionData(
                **{k: v for k, v in p.items() if k != "aborted_transactions"},
                aborted_transactions=[M.AbortedTransaction(**a) for a in p["aborted_transactions"]])
                for p in r["partitions"]])
            for r in d["responses"]])


def fetch_kp(d):
    M = KpFetchResponse
    R = M.FetchableTopicResponse
    P = R.PartitionData
    return M(
        version=16, throttle_time_ms=d["throttle_time_ms"], error_code=d["error_code"],
        session_id=d["session_id"],
        responses=[R(version=16, topic_id=r["topic_id"], partitions=[P(
            version=16, **{k: v for k, v in p.items() if k != "aborted_transactions"},
            aborted_transactions=[P.AbortedTransaction(version=16, **a)
                                  for a in p["aborted_transactions"]])
            for p in r["partitions"]])
            for r in d["responses"]])


def fetch_kio(d):
    K = kio_fetch
    return K.FetchResponse(
        throttle_time=_ms(d["throttle_time_ms"]), error_code=ErrorCode(d["error_code"]),
        session_id=d["session_id"],
        responses=tuple(K.FetchableTopicResponse(
            topic_id=r["topic_id"],
            partitions=tuple(K.PartitionData(
                partition_index=p["partition_index"], error_code=ErrorCode(p["error_code"]),
                high_watermark=p["high_watermark"], last_stable_offset=p["last_stable_offset"],
                log_start_offset=p["log_start_offset"],
                aborted_transactions=tuple(K.AbortedTransaction(**a)
                                           for a in p["aborted_transactions"]),
                preferred_read_replica=p["preferred_read_replica"], records=p["records"])
                for p in r["partitions"]))
            for r in d["responses"]))


# -- DescribeQuorumResponse v2 --
def dq_ours(d):
    M = our_dq
    return M.DescribeQuorumResponse(
        error_code=d["error_code"], error_message=d["error_message"],
        topics=[M.TopicData(topic_name=t["topic_name"], partitions=[M.PartitionData(
            **{k: v for k, v in p.items() if k not in ("current_voters", "observers")},
            current_voters=[M.ReplicaState(**r) for r in p["current_voters"]],
            observers=[M.ReplicaState(**r) for r in p["observers"]])
            for p in t["partitions"]]) for t in d["topics"]],
        nodes=[M.Node(node_id=n["node_id"], listeners=[M.Listener(**x) for x in n["listeners"]])
               for n in d["nodes"]])


def dq_kp(d):
    M = KpDescribeQuorumResponse
    T = M.TopicData
    P = T.PartitionData
    N = M.Node
    return M(
        version=2, error_code=d["error_code"], error_message=d["error_message"],
        topics=[T(version=2, topic_name=t["topic_name"], partitions=[P(
            version=2, **{k: v for k, v in p.items() if k not in ("current_voters", "observers")},
            current_voters=[P.ReplicaState(version=2, **r) for r in p["current_voters"]],
            observers=[P.ReplicaState(version=2, **r) for r in p["observers"]])
            for p in t["partitions"]]) for t in d["topics"]],
        nodes=[N(version=2, node_id=n["node_id"],
                 listeners=[N.Listener(version=2, **x) for x in n["listeners"]])
               for n in d["nodes"]])


def dq_kio(d):
    K = kio_dq
    return K.DescribeQuorumResponse(
        error_code=ErrorCode(d["error_code"]), error_message=d["error_message"],
        topics=tuple(K.TopicData(topic_name=t["topic_name"], partitions=tuple(K.PartitionData(
            partition_index=p["partition_index"], error_code=ErrorCode(p["error_code"]),
            error_message=p["error_message"], leader_id=p["leader_id"],
            leader_epoch=p["leader_epoch"], high_watermark=p["high_watermark"],
            current_voters=tuple(K.ReplicaState(**r) for r in p["current_voters"]),
            observers=tuple(K.ReplicaState(**r) for r in p["observers"]))
            for p in t["partitions"])) for t in d["topics"]),
        nodes=tuple(K.Node(node_id=n["node_id"],
                           listeners=tuple(K.Listener(**x) for x in n["listeners"]))
                    for n in d["nodes"]))


# -- VoteRequest v2 --
def vote_ours(d):
    M = our_vote
    return M.VoteRequest(cluster_id=d["cluster_id"], voter_id=d["voter_id"], topics=[
        M.TopicData(topic_name=t["topic_name"],
                    partitions=[M.PartitionData(**p) for p in t["partitions"]])
        for t in d["topics"]])


def vote_kp(d):
    M = KpVoteRequest
    T = M.TopicData
    return M(version=2, cluster_id=d["cluster_id"], voter_id=d["voter_id"], topics=[
        T(version=2, topic_name=t["topic_name"],
          partitions=[T.PartitionData(version=2, **p) for p in t["partitions"]])
        for t in d["topics"]])


def vote_kio(d):
    K = kio_vote
    return K.VoteRequest(cluster_id=d["cluster_id"], voter_id=d["voter_id"], topics=tuple(
        K.TopicData(topic_name=t["topic_name"],
                    partitions=tuple(K.PartitionData(**p) for p in t["partitions"]))
        for t in d["topics"]))


# ------------------------------------------------------------------------------------
# Record batch codecs
# ------------------------------------------------------------------------------------
def kp_build_batch(recs):
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                  producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                  batch_size=1 << 30)
    append = b.append
    for r in recs:
        append(r["offset"], r["timestamp"], r["key"], r["value"], r["headers"])
    return b.build()


def kp_read_batch(buf):
    batch = DefaultRecordBatch(buf)
    if not batch.validate_crc():
        raise ValueError("CRC mismatch")
    return batch, list(batch)


def kio_records(recs):
    utc = _dt.timezone.utc
    return tuple(kio_rec.Record(
        attributes=0,
        timestamp=TZAwareMicros.parse(_dt.datetime.fromtimestamp(r["timestamp"] / 1000, utc)),
        offset=r["offset"], key=r["key"], value=r["value"],
        headers=tuple(kio_rec.RecordHeader(key=k.encode(), value=v) for k, v in r["headers"]))
        for r in recs)


def kio_build_batch(records):
    nb = kio_rec.NewRecordBatch(producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                records=records, attributes=0)
    out = io.BytesIO()
    kio_rec_writers.write_new_batch(out, nb)
    return out.getvalue()


def kio_read_batch(buf):
    return kio_rec_readers.read_batch(buf, 0)[0]


def our_records_codec(recs):
    """(encode_fn, decode_fn, summary_fn) for wire.records, or None if it is missing."""
    if our_records is None:
        return None
    R = our_records
    records = [R.Record(offset_delta=r["offset"], timestamp_delta=r["timestamp"] - BATCH_BASE_TS,
                        key=r["key"], value=r["value"],
                        headers=[(k, v) for k, v in r["headers"]]) for r in recs]
    batch = R.RecordBatch(base_offset=0, partition_leader_epoch=0, base_timestamp=BATCH_BASE_TS,
                          max_timestamp=max(r["timestamp"] for r in recs), producer_id=-1,
                          producer_epoch=-1, base_sequence=-1, records=records)

    def enc():
        return batch.encode()

    def dec(buf):
        return R.decode_batch(buf, 0, verify_crc=True)

    return enc, dec


# ------------------------------------------------------------------------------------
# Rows
# ------------------------------------------------------------------------------------
class Row:
    def __init__(self, name, title, enc, dec, nbytes, verified):
        self.name, self.title, self.verified = name, title, verified
        self.enc = enc  # lib -> zero-arg callable returning the encoded bytes, or None
        self.dec = dec  # lib -> zero-arg callable decoding the canonical bytes, or None
        self.nbytes = nbytes


def _kio_encoder(cls, obj):
    write = entity_writer(cls)

    def enc():
        b = io.BytesIO()
        write(b, obj)
        return b.getvalue()
    return enc


def message_row(name, title, data, version, our_cls, kp_cls, kio_cls, builders, parts=False):
    ours_obj, kp_obj, kio_obj = (b(data) for b in builders)
    enc = {
        "ours": (lambda: encode_parts(b"", ours_obj, version)) if parts else (lambda: ours_obj.encode(version)),
        "kafka_python": lambda: kp_obj.encode(version=version),
        "kio": _kio_encoder(kio_cls, kio_obj),
    }
    outs = {lib: b"".join(fn()) if lib == "ours" and parts else bytes(fn()) for lib, fn in enc.items()}
    canonical = outs["ours"]
    for lib, out in outs.items():
        check(out == canonical, f"{name}: {lib} encodes different bytes ({len(out)} vs {len(canonical)})")
    read_kio = entity_reader(kio_cls)
    dec = {
        "ours": lambda: our_cls.decode(canonical, version),
        "kafka_python": lambda: kp_cls.decode(canonical, version=version),
        "kio": lambda: read_kio(canonical, 0)[0],
    }
    # Every decoder reads the canonical bytes into objects that re-encode identically.
    decoded = {lib: fn() for lib, fn in dec.items()}
    check(decoded["ours"] == ours_obj, f"{name}: ours decodes to a different object")
    check(decoded["kio"] == kio_obj, f"{name}: kio decodes to a different object")
    # kafka-python's decoder leaves ApiMessage._header unset, which its encode() reads.
    decoded["kafka_python"]._header = None
    again = {
        "ours": decoded["ours"].encode(version),
        "kafka_python": bytes(decoded["kafka_python"].encode(version=version)),
        "kio": _kio_encoder(kio_cls, decoded["kio"])(),
    }
    for lib, out in again.items():
        check(out == canonical, f"{name}: {lib} decode+encode does not round-trip")
    return Row(name, title, enc, dec, len(canonical),
               "each decoder's objects re-encode to the same bytes")


def records_row():
    recs = records_data()
    kio_recs = kio_records(recs)
    enc = {
        "kafka_python": lambda: kp_build_batch(recs),
        "kio": lambda: kio_build_batch(kio_recs),
    }
    ours = our_records_codec(recs)
    if ours is not None:
        enc["ours"] = ours[0]
    outs = {lib: bytes(fn()) for lib, fn in enc.items()}
    canonical = outs["kafka_python"]
    for lib, out in outs.items():
        check(out == canonical, f"record_batch: {lib} builds different bytes")
    dec = {
        "kafka_python": lambda: kp_read_batch(canonical),
        "kio": lambda: kio_read_batch(canonical),
    }
    if ours is not None:
        dec["ours"] = lambda: ours[1](canonical)
    # The decoders agree on what they read.
    _, kp_recs = dec["kafka_python"]()
    kb = dec["kio"]()
    check(len(kp_recs) == len(kb.records) == len(recs), "record batch decoders disagree")
    for want, a, b in zip(recs, kp_recs, kb.records):
        check(a.offset == b.offset == want["offset"], "record batch decoders disagree")
        check(a.timestamp == want["timestamp"] == round(b.timestamp.timestamp() * 1000), "record batch decoders disagree")
        check(a.key == b.key == want["key"] and a.value == b.value == want["value"], "record batch decoders disagree")
        check([(k.encode(), v) for k, v in a.headers] == [(h.key, h.value) for h in b.headers], "record batch decoders disagree")
    if ours is not None:
        check_our_batch(dec["ours"](), recs)
    return Row("record_batch_1000", "RecordBatch v2, 1,000 records", enc, dec, len(canonical),
               "the decoders (CRC checked) agree on every record")


def check_our_batch(result, recs):
    batch = result[0] if isinstance(result, tuple) else result
    got = [(batch.base_offset + r.offset_delta, batch.base_timestamp + r.timestamp_delta,
            bytes(r.key), bytes(r.value), [(k, bytes(v)) for k, v in r.headers])
           for r in batch.records]
    want = [(r["offset"], r["timestamp"], r["key"], r["value"], r["headers"]) for r in recs]
    check(got == want, "wire.records decoded different records")


def build_rows(only=None):
    rows = []

    def want(n):
        return only is None or n in only

    if want("metadata_response_v12"):
        rows.append(message_row(
            "metadata_response_v12", "MetadataResponse v12 (50 topics x 20 partitions x 3 replicas)",
            metadata_data(), 12, our_md.MetadataResponse, KpMetadataResponse, kio_md.MetadataResponse,
            (md_ours, md_kp, md_kio)))
    if want("fetch_response_v16"):
        blob = bytes(kp_build_batch(records_data(n=1024, value_size=1000, seed=3)))
        rows.append(message_row(
            "fetch_response_v16", f"FetchResponse v16 (50 partitions x {len(blob) / 2**20:.2f} MiB batch)",
            fetch_data(blob), 16, our_fetch.FetchResponse, KpFetchResponse, kio_fetch.FetchResponse,
            (fetch_ours, fetch_kp, fetch_kio), parts=True))
    if want("describe_quorum_response_v2"):
        rows.append(message_row(
            "describe_quorum_response_v2", "DescribeQuorumResponse v2 (5 voters, 50 observers, 5 nodes)",
            describe_quorum_data(), 2, our_dq.DescribeQuorumResponse, KpDescribeQuorumResponse,
            kio_dq.DescribeQuorumResponse, (dq_ours, dq_kp, dq_kio)))
    if want("vote_request_v2"):
        rows.append(message_row(
            "vote_request_v2", "VoteRequest v2 (1 topic, 1 partition)", vote_data(), 2,
            our_vote.VoteRequest, KpVoteRequest, kio_vote.VoteRequest,
            (vote_ours, vote_kp, vote_kio)))
    if want("record_batch_1000"):
        rows.append(records_row())
    return rows


# ------------------------------------------------------------------------------------
# Timing
# ------------------------------------------------------------------------------------
def calibrate(fn, round_s: float) -> int:
    """Warm fn up, then return the iteration count that makes one round last ~round_s."""
    perf = time.perf_counter_ns
    fn()
    fn()  # warm-up (also primes lazily compiled codecs and caches)
    n = 1
    while True:  # double n until a batch lasts >= 1/10 of a round (or 20 ms)
        t0 = perf()
        for _ in range(n):
            fn()
        el = perf() - t0
        if el >= min(round_s / 10, 0.02) * 1e9:
            break
        n *= 2
    return max(1, int(round_s * 1e9 / (el / n)))


def measure(fns: dict, round_s: float, rounds: int) -> dict:
    """ns/op (median and min over rounds) for each callable in fns.

    The libraries take turns within every round (in a rotating order), so a change
    in machine load during the run lands on all of them alike.
    """
    perf = time.perf_counter_ns
    iters = {lib: calibrate(fn, round_s) for lib, fn in fns.items()}
    samples = {lib: [] for lib in fns}
    libs = list(fns)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            for lib in libs[r % len(libs):] + libs[:r % len(libs)]:
                fn, n = fns[lib], iters[lib]
                rng = range(n)
                t0 = perf()
                for _ in rng:
                    fn()
                samples[lib].append((perf() - t0) / n)
    finally:
        if was_enabled:
            gc.enable()
    gc.collect()
    return {lib: {"median_ns": statistics.median(s), "min_ns": min(s), "iters": iters[lib]}
            for lib, s in samples.items()}


def run(rows, quick: bool) -> list[dict]:
    round_s, rounds = (0.01, 3) if quick else (0.1, 9)
    results = []
    for row in rows:
        for direction, fns in (("encode", row.enc), ("decode", row.dec)):
            entry = {"row": row.name, "title": row.title, "direction": direction,
                     "bytes": row.nbytes}
            timed = measure({lib: fns[lib] for lib in LIBS if lib in fns}, round_s, rounds)
            for lib in LIBS:
                m = timed.get(lib)
                entry[f"{lib}_us"] = None if m is None else m["median_ns"] / 1000
                entry[f"{lib}_min_us"] = None if m is None else m["min_ns"] / 1000
                entry[f"{lib}_iters"] = None if m is None else m["iters"]
            peers = {p: entry[f"{p}_us"] for p in PEERS if entry[f"{p}_us"] is not None}
            best = min(peers, key=peers.get)
            entry["best_peer"] = best
            entry["best_peer_us"] = peers[best]
            ours = entry["ours_us"]
            entry["speedup_vs_best_peer"] = None if ours is None else peers[best] / ours
            results.append(entry)
    return results


def add_pure_column(results, argv) -> str:
    """Time ours again in a child process on the pure-Python path; returns its description."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--no-pure", "--json", *argv]
    env = dict(os.environ, KRAFT_PURE_PYTHON="1")
    child = json.loads(subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout)
    pure = {(r["row"], r["direction"]): r for r in child["results"]}
    for entry in results:
        p = pure[(entry["row"], entry["direction"])]
        entry["pure_us"], entry["pure_min_us"] = p["ours_us"], p["ours_min_us"]
        entry["pure_speedup_vs_best_peer"] = p["speedup_vs_best_peer"]
        entry["compiled_gain"] = p["ours_us"] / entry["ours_us"]
    return child["meta"]["codecs"]


def meta(rows) -> dict:
    return {
        "codecs": native.describe(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "kafka_python": kafka.__version__,
        "kio": getattr(kio, "__version__", None) or _kio_version(),
        "ours_records": our_records is not None,
        "identical_bytes": {r.name: sorted(r.enc) for r in rows},
        "verified": {r.name: r.verified for r in rows},
        "units": "microseconds per operation (median of rounds)",
        "speedup_vs_best_peer": "best peer time / ours time; 2.0 = ours twice as fast",
    }


def _kio_version():
    try:
        from kio._version import __version__
        return __version__
    except Exception:  # pragma: no cover
        return None


def _fmt(us):
    if us is None:
        return "n/a"
    if us >= 1000:
        return f"{us:,.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def print_table(results, m):
    print(f"Python {m['python']} ({m['implementation']}, {m['machine']}); "
          f"kafka-python {m['kafka_python']}; kio {m['kio']}")
    print("Checked before timing (asserted):")
    for name, libs in m["identical_bytes"].items():
        print(f"  {name}: byte-identical encodings from {', '.join(libs)}; "
              f"{m['verified'][name]}")
    if not m["ours_records"]:
        print("  record_batch_1000: wire.records not importable; 'ours' is n/a")
    print(f"ours: {m['codecs']}" + (f"; pure: {m['pure_codecs']}" if m.get("pure_codecs") else ""))
    print("Times in µs/op (median); speedup = best peer / ours (2.0 = twice as fast).")
    head = ("row", "dir", "bytes", "ours", "pure", "kafka-python", "kio", "best peer", "speedup",
            "pure speedup")
    lines = [head]
    for r in results:
        sp = r["speedup_vs_best_peer"]
        psp = r.get("pure_speedup_vs_best_peer")
        lines.append((r["row"], r["direction"], f"{r['bytes']:,}", _fmt(r["ours_us"]),
                      _fmt(r.get("pure_us")), _fmt(r["kafka_python_us"]), _fmt(r["kio_us"]),
                      r["best_peer"], "n/a" if sp is None else f"{sp:.2f}x",
                      "n/a" if psp is None else f"{psp:.2f}x"))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    for i, line in enumerate(lines):
        cells = [str(c).ljust(w) if j < 2 else str(c).rjust(w)
                 for j, (c, w) in enumerate(zip(line, widths))]
        print("  ".join(cells))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short smoke run")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--only", action="append", help="run only this row (repeatable)")
    ap.add_argument("--no-pure", action="store_true", help="leave out the pure-Python column")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = build_rows(set(args.only) if args.only else None)
    results = run(rows, args.quick)
    m = meta(rows)
    if not args.no_pure:
        passed = (["--quick"] if args.quick else []) + [a for o in args.only or () for a in ("--only", o)]
        m["pure_codecs"] = add_pure_column(results, passed)
    m["quick"] = args.quick
    m["elapsed_s"] = round(time.perf_counter() - t0, 2)
    if args.json:
        json.dump({"meta": m, "results": results}, sys.stdout, indent=2)
        print()
    else:
        print_table(results, m)
        print(f"({m['elapsed_s']} s)")


if __name__ == "__main__":
    main()
