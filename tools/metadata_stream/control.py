"""``__cluster_metadata_control`` (the node's companion topic of control records, keyed
by type name) as typed rows, and the views of quorum membership they give.

A row: ``partition``, ``offset`` (the record's offset in ``__cluster_metadata``),
``timestamp``, ``type_name`` (the record key: LeaderChange, Voters, KRaftVersion,
SnapshotHeader, SnapshotFooter), ``error`` when the value does not decode, and one
struct column per type (``leader_change``, ``voters``, ``kraft_version``, ...) with
the fields of its generated codec, as ``rowtype.py`` does for metadata records.

Views over a batch of rows: ``voter_sets`` (the voter set each Voters record
installed, at its offset: the membership history) and ``voters`` (the current set,
one row per voter); ``leaders`` (each LeaderChange: epoch order, leader, granting
voters).
"""
from __future__ import annotations

import pyarrow as pa

from wire.exceptions import DecodeError
from wire.records.control_names import CONTROL_MESSAGES

from .rowtype import RECORD_SCHEMAS, _converter, _struct_type, column_name

CONTROL_TOPIC = "__cluster_metadata_control"
CONTROL_VIEWS = ("voters", "voter_sets", "leaders")

BASE_FIELDS = (
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", pa.timestamp("us", tz="UTC")),
    pa.field("type_name", pa.string()),
    pa.field("error", pa.string()),
)


class ControlRowType:
    def __init__(self, root=RECORD_SCHEMAS):
        from codegen.model import build_model, module_name
        from codegen.spec import load_spec
        models = {}
        for name, cls in CONTROL_MESSAGES.items():
            models[name] = build_model(load_spec(root / f"{cls.__name__}.json"), module_name(cls.__name__))
        self.columns = {name: column_name(name) for name in models}
        self.schema = pa.schema(list(BASE_FIELDS) + [
            pa.field(self.columns[name], _struct_type(m, m.top)) for name, m in models.items()])
        self.converters = {name: _converter(m, m.top) for name, m in models.items()}

    def spark_schema(self):
        from pyspark.sql.pandas.types import from_arrow_schema
        return from_arrow_schema(self.schema)


def decode_control_batch(batch: pa.RecordBatch, row_type: ControlRowType) -> pa.RecordBatch:
    n = batch.num_rows
    keys = [None if k is None else bytes(k).decode("utf-8", "replace") for k in batch.column("key").to_pylist()]
    values = batch.column("value").to_pylist()
    errors: list = [None] * n
    structs = {name: [None] * n for name in row_type.columns}
    for i, (key, value) in enumerate(zip(keys, values)):
        cls = CONTROL_MESSAGES.get(key)
        if cls is None:
            errors[i] = f"unknown control record {key!r}"
            continue
        try:
            structs[key][i] = row_type.converters[key](cls.decode(value, 0))
        except (DecodeError, ValueError, TypeError) as exc:
            errors[i] = f"{key}: {exc}"
    schema = row_type.schema
    arrays = [batch.column("partition").cast(pa.int32()), batch.column("offset").cast(pa.int64()),
              batch.column("timestamp").cast(schema.field("timestamp").type),
              pa.array(keys, pa.string()), pa.array(errors, pa.string())]
    arrays += [pa.array(structs[name], schema.field(col).type) for name, col in row_type.columns.items()]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def decode_control_batches(batches, row_type: ControlRowType):
    for batch in batches:
        if batch.num_rows:
            yield decode_control_batch(batch, row_type)


def _decode(df, row_type: ControlRowType):
    raw = df.selectExpr("partition", "offset", "timestamp", "key", "value")
    return raw.mapInArrow(lambda batches: decode_control_batches(batches, row_type), row_type.spark_schema())


def read_control_stream(spark, options: dict, row_type: ControlRowType | None = None):
    """A streaming DataFrame of control rows (``options`` from ``pipeline.kafka_options``
    with ``topic=CONTROL_TOPIC``)."""
    return _decode(spark.readStream.format("kafka").options(**options).load(), row_type or ControlRowType())


def read_control_batch(spark, options: dict, row_type: ControlRowType | None = None,
                       ending_offsets: str = "latest"):
    df = spark.read.format("kafka").options(**options).option("endingOffsets", ending_offsets).load()
    return _decode(df, row_type or ControlRowType()).orderBy("partition", "offset")


# -- views ---------------------------------------------------------------------------------

def voter_sets(rows):
    """Each Voters record: the offset it took effect at and the voter ids it installed."""
    from pyspark.sql import functions as F
    return rows.where("type_name = 'Voters'").select(
        "offset", "timestamp", F.array_sort(F.col("voters.voters.voter_id")).alias("voter_ids"))


def voters(rows):
    """The current voter set (the last Voters record), one row per voter."""
    from pyspark.sql import functions as F
    last = rows.where("type_name = 'Voters'").orderBy(F.col("offset").desc()).limit(1)
    return last.select(F.col("offset").alias("since_offset"), F.explode("voters.voters").alias("v")).select(
        "v.voter_id", "v.voter_directory_id", "v.endpoints", "since_offset").orderBy("voter_id")


def leaders(rows):
    """Each LeaderChange: where the new leader started, who it is, who voted for it."""
    from pyspark.sql import functions as F
    return rows.where("type_name = 'LeaderChange'").select(
        "offset", "timestamp", F.col("leader_change.leader_id").alias("leader_id"),
        F.col("leader_change.granting_voters.voter_id").alias("granting_voters"))


def summary(rows):
    """Compact rows for a console: offset, timestamp, type and the record as JSON."""
    from pyspark.sql import functions as F
    structs = [F.to_json(F.col(c)) for c in ControlRowType().columns.values()]
    return rows.select("offset", "timestamp", "type_name",
                       F.coalesce(*structs, F.col("error")).alias("fields"))


def control_view(name: str, rows):
    if name not in CONTROL_VIEWS:
        raise ValueError(f"unknown control view {name!r}; one of {', '.join(CONTROL_VIEWS)}")
    return globals()[name](rows)
