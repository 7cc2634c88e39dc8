"""The full current state after retention: the snapshot at the log start, then the log.

The node serves ``__cluster_metadata_snapshot``-0 (docs/metadata-topic.md, "the full state
after retention"): the snapshot whose end offset S is ``__cluster_metadata``'s log start,
its metadata records as they are (null key) and its control records as data keyed by
type name, those carrying the headers ``snapshot.end.offset`` and ``snapshot.epoch``.
``read_full_state`` reads it as a batch, checks the SnapshotHeader and SnapshotFooter
name the same snapshot (else it was replaced mid-read: read again), then reads
``__cluster_metadata`` from S. Its rows are the pipeline's typed rows: first the
snapshot's metadata records, their offsets rebased to end just below S (offset =
S - n + i, so every view's "latest by offset" puts them before the log's; they may be
negative), then the log's records from S on. An empty snapshot topic (no snapshot at
the log start, which is then 0) means: the log from 0 is the whole state.
"""
from __future__ import annotations

import json
import logging

from .pipeline import TOPIC, _decode, _raw, kafka_options, read_batch
from .rowtype import RowType

log = logging.getLogger(__name__)

SNAPSHOT_TOPIC = "__cluster_metadata_snapshot"
END_OFFSET_HEADER = "snapshot.end.offset"
EPOCH_HEADER = "snapshot.epoch"


class SnapshotReplaced(Exception):
    """The snapshot topic's content changed while it was read."""


def _snapshot_id(headers) -> tuple[int, int] | None:
    found = {h.key: bytes(h.value).decode() for h in headers or ()}
    if END_OFFSET_HEADER not in found:
        return None
    return int(found[END_OFFSET_HEADER]), int(found[EPOCH_HEADER])


def read_snapshot(spark, bootstrap: str, extra: dict | None = None):
    """(raw snapshot rows ordered by offset, (end offset, epoch) or None when empty)."""
    options = kafka_options(bootstrap, SNAPSHOT_TOPIC, "earliest", extra)
    options["includeHeaders"] = "true"
    raw = (spark.read.format("kafka").options(**options).option("endingOffsets", "latest").load()
           .orderBy("offset").cache())
    marks = raw.where("key IS NOT NULL").select("offset", "key", "headers").collect()
    if not marks:
        if raw.count():
            raise SnapshotReplaced("snapshot records without a SnapshotHeader")
        return raw, None
    first, last = marks[0], marks[-1]
    if (first.key, last.key) != (b"SnapshotHeader", b"SnapshotFooter") or \
            _snapshot_id(first.headers) != _snapshot_id(last.headers):
        raise SnapshotReplaced(f"read {first.key!r} {_snapshot_id(first.headers)} .. "
                               f"{last.key!r} {_snapshot_id(last.headers)}")
    return raw, _snapshot_id(first.headers)


def _full_state(spark, bootstrap: str, extra: dict | None, row_type: RowType):
    from pyspark.sql import functions as F
    raw, snapshot_id = read_snapshot(spark, bootstrap, extra)
    start = 0 if snapshot_id is None else snapshot_id[0]
    starting = json.dumps({TOPIC: {"0": start}})
    rows = read_batch(spark, kafka_options(bootstrap, TOPIC, starting, extra), row_type)
    if snapshot_id is not None:
        n = raw.count()
        rebased = raw.where("key IS NULL").withColumn("offset", F.col("offset") + F.lit(start - n))
        rows = _decode(_raw(rebased), row_type).unionByName(rows).orderBy("offset")
        log.info("snapshot %s-%s: %d records; the log continues from offset %d",
                 snapshot_id[0], snapshot_id[1], n, start)
    rows = rows.cache()
    rows.count()  # read the log now, while S is still its start
    return rows, start


def _lost_the_start(exc: Exception) -> bool:
    text = str(exc)
    return "OffsetOutOfRange" in text or "KAFKA_DATA_LOSS" in text


def read_full_state(spark, bootstrap: str, extra: dict | None = None, row_type: RowType | None = None,
                    attempts: int = 3):
    """(typed rows of the full current state, cached, and the snapshot's end offset S).

    Reading starts over when the snapshot was replaced mid-read, or when retention moved
    the log start past S before the log was read (the Kafka source then reports the
    offsets out of range)."""
    row_type = row_type or RowType.load()
    for attempt in range(1, attempts + 1):
        try:
            return _full_state(spark, bootstrap, extra, row_type)
        except SnapshotReplaced as exc:
            problem = exc
        except Exception as exc:  # noqa: BLE001 (Py4J/Spark errors: only a lost start is retried)
            if not _lost_the_start(exc):
                raise
            problem = exc
        log.warning("full state, attempt %d of %d: %s; reading again", attempt, attempts,
                    str(problem).splitlines()[0])
    raise SnapshotReplaced(f"no consistent snapshot and log after {attempts} attempts: {problem}")
