"""Decode rows/s of the Spark pipeline's decoder (``tools/metadata_stream``), no JVM.

    python bench/wire/metadata_decode.py            # ~20 s
    python bench/wire/metadata_decode.py --quick    # a few seconds
    python bench/wire/metadata_decode.py --json     # the numbers as JSON

The input is what Spark hands ``mapInArrow``: Arrow batches of 10,000 source rows
(partition, offset, timestamp, value) whose values are a metadata log's usual mix,
encoded by our codecs: RegisterBroker v3, Topic, Partition v1 (3 replicas),
PartitionChange v1, FeatureLevel, Config, BrokerRegistrationChange, NoOp. Timed, each
the median of the rounds:

* ``arrow``: ``decode_batch`` (the ``mapInArrow`` body the pipeline uses);
* ``pandas``: the same decoding behind ``mapInPandas``'s conversions (Arrow -> pandas
  in, pandas -> Arrow out), what choosing ``mapInPandas`` would cost;
* ``txn filter``: the KIP-868 step (``transactions.split``) on the same rows;
* ``codec only``: ``decode_metadata_record`` alone, the floor of any Python decoder.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid

import pyarrow as pa

from tools.metadata_stream import transactions
from tools.metadata_stream.decode import decode_batch
from tools.metadata_stream.rowtype import RowType
from wire.messages import (
    BrokerRegistrationChangeRecord, ConfigRecord, FeatureLevelRecord, NoOpRecord, PartitionChangeRecord,
    PartitionRecord, RegisterBrokerRecord, TopicRecord,
)
from wire.messages.register_broker_record import BrokerEndpoint, BrokerFeature
from wire.records import decode_metadata_record, encode_metadata_record

ROWS = 10_000


def values() -> list[bytes]:
    tid = uuid.uuid4()
    mix = [
        (RegisterBrokerRecord(broker_id=1, incarnation_id=uuid.uuid4(), broker_epoch=7, rack="r1",
                              end_points=[BrokerEndpoint(name="PLAINTEXT", host="10.0.0.1", port=9092)],
                              features=[BrokerFeature(name="metadata.version", min_supported_version=7,
                                                      max_supported_version=30)],
                              log_dirs=[uuid.uuid4()]), 3),
        (TopicRecord(name="orders", topic_id=tid), 0),
        (PartitionRecord(partition_id=3, topic_id=tid, replicas=[1, 2, 3], isr=[1, 2, 3], leader=1,
                         leader_epoch=0, partition_epoch=0, directories=[uuid.uuid4()] * 3), 1),
        (PartitionChangeRecord(partition_id=3, topic_id=tid, isr=[1, 2]), 1),
        (FeatureLevelRecord(name="metadata.version", feature_level=30), 0),
        (ConfigRecord(resource_type=2, resource_name="orders", name="retention.ms", value="1000"), 0),
        (BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=7, fenced=-1), 0),
        (NoOpRecord(), 0),
    ]
    encoded = [encode_metadata_record(m, v) for m, v in mix]
    return [encoded[i % len(encoded)] for i in range(ROWS)]


def source_batch(vals) -> pa.RecordBatch:
    n = len(vals)
    return pa.RecordBatch.from_pydict({
        "partition": pa.array([0] * n, pa.int32()),
        "offset": pa.array(range(n), pa.int64()),
        "timestamp": pa.array([1_700_000_000_000_000] * n, pa.timestamp("us", tz="UTC")),
        "value": pa.array(vals, pa.binary()),
    })


def timed(fn, rounds: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return ROWS / statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rounds = 3 if args.quick else 9
    row_type = RowType.load()
    vals = values()
    batch = source_batch(vals)
    frame = batch.to_pandas()
    decoded = decode_batch(batch, row_type)
    # Sanity before timing: every row decoded, to the type it was written as.
    assert decoded.num_rows == ROWS and decoded.column("error").null_count == ROWS
    assert decoded.column("type").to_pylist() == [decode_metadata_record(v).api_key for v in vals]

    def via_pandas():
        pdf = pa.RecordBatch.from_pandas(batch.to_pandas(), preserve_index=False)
        decode_batch(pdf, row_type).to_pandas()

    results = {
        "arrow (mapInArrow)": timed(lambda: decode_batch(batch, row_type), rounds),
        "pandas (mapInPandas)": timed(via_pandas, rounds),
        "txn filter": timed(lambda: transactions.split(frame), rounds),
        "codec only": timed(lambda: [decode_metadata_record(v) for v in vals], rounds),
    }
    if args.json:
        print(json.dumps({"rows_per_batch": ROWS, "rounds": rounds, "rows_per_s": results}))
        return
    print(f"{'path':<22} {'rows/s':>10}   ({ROWS} rows a batch, median of {rounds})")
    for name, rate in results.items():
        print(f"{name:<22} {rate:>10,.0f}")


if __name__ == "__main__":
    main()
