"""Arrow batches of Kafka-source rows in, Arrow batches of typed metadata rows out.

The input is what Spark's Kafka source gives (at least ``partition``, ``offset``,
``timestamp`` and ``value``); each ``value`` is decoded with the generated codecs
(``wire.records.decode_metadata_record``). A value that does not decode becomes a row
with ``error`` set and no struct: bad input never stops the stream.
"""
from __future__ import annotations

from typing import Iterable, Iterator

import pyarrow as pa

from wire.exceptions import DecodeError
from wire.records import decode_metadata_record

from .rowtype import RowType


def decode_batch(batch: pa.RecordBatch, row_type: RowType) -> pa.RecordBatch:
    """One Arrow batch of source rows -> one Arrow batch of ``row_type.schema``."""
    n = batch.num_rows
    values = batch.column("value").to_pylist()
    types: list = [None] * n
    versions: list = [None] * n
    errors: list = [None] * n
    structs = {key: [None] * n for key in row_type.columns}
    converters = row_type.converters
    for i, value in enumerate(values):
        try:
            record = decode_metadata_record(value)
        except DecodeError as exc:
            errors[i] = str(exc)
            continue
        types[i] = record.api_key
        versions[i] = record.version
        column = structs.get(record.api_key)
        if column is not None:
            column[i] = converters[record.api_key](record.message)
    names = [None if t is None else row_type.names[t] for t in types]
    schema = row_type.schema
    timestamps = batch.column("timestamp").cast(schema.field("timestamp").type)
    arrays = [
        batch.column("partition").cast(pa.int32()),
        batch.column("offset").cast(pa.int64()),
        timestamps,
        pa.nulls(n, pa.int32()),
        pa.array(types, pa.int16()),
        pa.array(names, pa.string()),
        pa.array(versions, pa.int16()),
        pa.array(errors, pa.string()),
    ]
    for key, column in row_type.columns.items():
        arrays.append(pa.array(structs[key], schema.field(column).type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def decode_batches(batches: Iterable[pa.RecordBatch], row_type: RowType) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function body."""
    for batch in batches:
        if batch.num_rows:
            yield decode_batch(batch, row_type)
