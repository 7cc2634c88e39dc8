"""The pipeline: Kafka source -> aborted transactions dropped -> typed rows.

``read_stream`` / ``read_batch`` give DataFrames of ``RowType`` rows (``rowtype.py``);
``start_stream`` writes a stream to a sink with a checkpoint, so a restart resumes where
the last committed micro-batch ended (Kafka offsets and the held transaction rows are
both in the checkpoint).
"""
from __future__ import annotations

import logging

from .decode import decode_batches
from .rowtype import RowType
from .transactions import RAW_SCHEMA_DDL, STATE_SCHEMA_DDL, batch_step, stream_step

log = logging.getLogger(__name__)

TOPIC = "__cluster_metadata"


def kafka_options(bootstrap: str, topic: str = TOPIC, starting_offsets: str = "earliest",
                  extra: dict | None = None) -> dict:
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "assign": f'{{"{topic}":[0]}}',
        "startingOffsets": starting_offsets,
        "failOnDataLoss": "true",
        "includeHeaders": "false",
        # Each node lists only itself in Metadata: when the one a client read from dies,
        # its only way to the others is back through the bootstrap servers. kafka-clients
        # 4.x does that by default; the 3.9.2 Spark's connector runs with does not.
        "kafka.metadata.recovery.strategy": "rebootstrap",
    }
    options.update(extra or {})
    return options


def _raw(df):
    return df.selectExpr("partition", "offset", "timestamp", "value")


def _decode(df, row_type: RowType):
    schema = row_type.spark_schema()
    return df.mapInArrow(lambda batches: decode_batches(batches, row_type), schema)


def read_stream(spark, options: dict, row_type: RowType | None = None):
    """A streaming DataFrame of typed rows, aborted transactions dropped (across micro-batches)."""
    from pyspark.sql.streaming.state import GroupStateTimeout
    row_type = row_type or RowType.load()
    raw = _raw(spark.readStream.format("kafka").options(**options).load())
    committed = raw.groupBy("partition").applyInPandasWithState(
        stream_step, RAW_SCHEMA_DDL, STATE_SCHEMA_DDL, "append", GroupStateTimeout.NoTimeout)
    return _decode(committed, row_type)


def read_batch(spark, options: dict, row_type: RowType | None = None, ending_offsets: str = "latest"):
    """The same rows as a batch job over [startingOffsets, endingOffsets), in offset order."""
    row_type = row_type or RowType.load()
    raw = _raw(spark.read.format("kafka").options(**options).option("endingOffsets", ending_offsets).load())
    committed = raw.groupBy("partition").applyInPandas(batch_step, RAW_SCHEMA_DDL)
    return _decode(committed, row_type).orderBy("partition", "offset")


def start_stream(df, sink: str, *, checkpoint: str | None, path: str | None = None,
                 query_name: str = "metadata_rows", trigger: dict | None = None, summary: bool = True):
    """Start writing ``df`` to ``sink``: ``console`` (``console.console_rows`` of metadata
    rows, NoOps left out, unless ``summary`` is false), ``parquet`` (``path``) or ``memory`` (a table named
    ``query_name``)."""
    if sink == "console":
        if summary:
            from . import console
            df = console.console_rows(console.select_types(df, None, include_noop=False), RowType.load(),
                                      console.terminal_width())
        writer = (df.writeStream.format("console").option("truncate", "false")
                  .option("numRows", 1_000_000))
    elif sink == "parquet":
        if not path:
            raise ValueError("the parquet sink needs a path")
        writer = df.writeStream.format("parquet").option("path", path)
    elif sink == "memory":
        writer = df.writeStream.format("memory").queryName(query_name)
    else:
        raise ValueError(f"unknown sink {sink!r}")
    writer = writer.outputMode("append")
    if checkpoint:
        writer = writer.option("checkpointLocation", checkpoint)
    if trigger:
        writer = writer.trigger(**trigger)
    return writer.start()
