"""The typed row of one metadata record, as an Arrow schema built from ``schemas/records``.

Each row carries where the record sits (partition, offset, batch timestamp, leader epoch),
what it is (type, type name, version), an ``error`` when its value does not decode, and
one struct column per record type (``topic_record``, ``partition_record``, ...): only the
column of the row's own type is set (types without fields have none). Field names are the generated codecs' attribute names
(Kafka's CamelCase in snake_case); uuids are Kafka's text form (base64url, no padding), as
``kafka-dump-log`` prints them; ``unknown_tagged_fields`` are left out.

The schema is built on the driver from the schema files (``codegen`` parses them) and
travels to executors inside the decoder's closure; executors need only ``wire``.
"""
from __future__ import annotations

import base64
from pathlib import Path

import pyarrow as pa

REPO_ROOT = Path(__file__).resolve().parents[2]
RECORD_SCHEMAS = REPO_ROOT / "schemas" / "records"

_PRIMITIVES = {
    "bool": pa.bool_(), "int8": pa.int8(), "int16": pa.int16(), "uint16": pa.int32(),
    "int32": pa.int32(), "uint32": pa.int64(), "int64": pa.int64(), "float64": pa.float64(),
    "string": pa.string(), "uuid": pa.string(), "bytes": pa.binary(), "records": pa.binary(),
}

# The columns before the per-type structs.
BASE_FIELDS = (
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", pa.timestamp("us", tz="UTC")),
    # Spark's Kafka source has no column for the batch's partitionLeaderEpoch: always null.
    pa.field("leader_epoch", pa.int32()),
    pa.field("type", pa.int16()),
    pa.field("type_name", pa.string()),
    pa.field("version", pa.int16()),
    pa.field("error", pa.string()),
)


def uuid_text(value) -> str:
    """Kafka's ``Uuid.toString``: base64url of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()


def column_name(record_name: str) -> str:
    from codegen.model import snake_case
    return snake_case(record_name)


def load_record_models(root: Path = RECORD_SCHEMAS) -> dict[int, object]:
    """``{api key: codegen MessageModel}`` of every metadata record schema."""
    from codegen.model import build_model, module_name
    from codegen.spec import load_spec
    models = {}
    for path in sorted(root.glob("*.json")):
        spec = load_spec(path)
        if spec.type == "metadata":
            models[spec.api_key] = build_model(spec, module_name(spec.name))
    return models


def _arrow_type(model, type_ref) -> pa.DataType:
    if type_ref.kind == "array":
        return pa.list_(_arrow_type(model, type_ref.element))
    if type_ref.kind == "struct":
        return _struct_type(model, model.structs[type_ref.struct])
    return _PRIMITIVES[type_ref.kind]


def _struct_type(model, struct) -> pa.StructType:
    return pa.struct([pa.field(f.py, _arrow_type(model, f.type)) for f in struct.fields])


class RowType:
    """The output schema and, per record type, a function from a decoded message to a dict.

    A type without fields (NoOpRecord, EndTransactionRecord) has no struct column: Parquet
    cannot store an empty struct, and ``type_name`` says all there is."""

    def __init__(self, models: dict[int, object]):
        self.names = {key: m.name for key, m in sorted(models.items())}
        models = {key: m for key, m in models.items() if m.top.fields}
        self.columns = {key: column_name(m.name) for key, m in sorted(models.items())}
        self.schema = pa.schema(list(BASE_FIELDS) + [
            pa.field(self.columns[key], _struct_type(m, m.top)) for key, m in sorted(models.items())
        ])
        self.converters = {key: _converter(m, m.top) for key, m in models.items()}

    @classmethod
    def load(cls, root: Path = RECORD_SCHEMAS) -> "RowType":
        return cls(load_record_models(root))

    def spark_schema(self):
        from pyspark.sql.pandas.types import from_arrow_schema
        return from_arrow_schema(self.schema)


def _value_converter(model, type_ref):
    kind = type_ref.kind
    if kind == "uuid":
        return uuid_text
    if kind in ("bytes", "records"):
        return bytes
    if kind == "struct":
        return _converter(model, model.structs[type_ref.struct])
    if kind == "array":
        inner = _value_converter(model, type_ref.element)
        if inner is None:
            return list
        return lambda items: [inner(item) for item in items]
    return None  # ints, bools, floats and strings go as they are


def _converter(model, struct):
    """A function: message or struct -> dict of its fields (None stays None)."""
    plan = [(f.py, _value_converter(model, f.type)) for f in struct.fields]

    def convert(obj):
        if obj is None:
            return None
        out = {}
        for name, conv in plan:
            value = getattr(obj, name)
            out[name] = value if conv is None or value is None else conv(value)
        return out
    return convert
