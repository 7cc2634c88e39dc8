"""Record batch v2, byte-exact with Apache Kafka 4.3.1.

- :mod:`.header`: the 61-byte batch header, read without the records (``read_header``, ``iter_headers``),
  and the Raft core's strict walk (``walk``, ``BatchInfo``, ``BatchError``).
- :mod:`.record`: one record and the records section.
- :mod:`.batch`: ``RecordBatch``, ``decode_batch``, ``iter_batches``; the KRaft fast path
  ``build_batch`` and ``batch_records``.
- :mod:`.values`: value-only batches (``build_value_batch``, ``batch_values``), compiled
  C loops over the same bytes (the reference versions stay in ``.batch``).
- :mod:`.compression`: gzip, snappy (xerial), lz4 (Kafka's frame), zstd; bounded decompression.
- :mod:`.control`: control record keys and KRaft control batches (``control_batch`` from value
  bytes, ``build_control_batch`` / ``control_records`` from and to messages).
- :mod:`.metadata`: the metadata-record value framing, the (type, version) -> codec
  registry that decodes any metadata record value, and KRaft data batches.
- :mod:`.reference`: a second, declarative description of the layout (``construct``), for tools and tests.
"""
from .batch import RecordBatch, batch_records, build_batch, decode_batch, iter_batches
from .compression import DEFAULT_MAX_BYTES, CompressionType, compress, decompress
from .control import (
    ControlRecordType,
    build_control_batch,
    control_batch,
    control_record_type,
    control_records,
    decode_control_key,
    encode_control_key,
)
from .header import (
    CONTROL_MASK,
    HEADER_SIZE,
    BatchError,
    BatchHeader,
    BatchInfo,
    TimestampType,
    crc_matches,
    iter_headers,
    read_header,
    walk,
    with_base_offset,
)
from .metadata import (
    METADATA_RECORD_DECODERS,
    METADATA_RECORD_TYPES,
    MetadataRecord,
    data_batch,
    decode_metadata_record,
    encode_metadata_record,
    frame_metadata_record,
    metadata_record_class,
    unframe_metadata_record,
)
from .record import Record
from .values import batch_values, build_value_batch  # the fast value-only path (reference: .batch)

__all__ = [
    "CONTROL_MASK",
    "HEADER_SIZE",
    "BatchError",
    "BatchHeader",
    "BatchInfo",
    "CompressionType",
    "ControlRecordType",
    "DEFAULT_MAX_BYTES",
    "METADATA_RECORD_DECODERS",
    "METADATA_RECORD_TYPES",
    "MetadataRecord",
    "Record",
    "RecordBatch",
    "TimestampType",
    "batch_records",
    "batch_values",
    "build_batch",
    "build_value_batch",
    "build_control_batch",
    "compress",
    "control_batch",
    "control_record_type",
    "control_records",
    "crc_matches",
    "data_batch",
    "decode_batch",
    "decode_control_key",
    "decode_metadata_record",
    "decompress",
    "encode_control_key",
    "encode_metadata_record",
    "frame_metadata_record",
    "iter_batches",
    "iter_headers",
    "metadata_record_class",
    "read_header",
    "unframe_metadata_record",
    "walk",
    "with_base_offset",
]
