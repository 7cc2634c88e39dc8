"""Decoded records as JSON values: ``{type, version, fields}``.

Field names are Kafka's (the schemas' camelCase, as ``kafka-dump-log
--cluster-metadata-decoder`` prints them), UUIDs in Kafka's base64 text form,
bytes as hex. The generated messages carry their fields in ``__slots__``.
"""
from __future__ import annotations

import uuid

from wire.records import decode_metadata_record
from wire.uuids import uuid_to_str

MAX_BYTES_SHOWN = 64  # bytes fields longer than this are cut (their length is kept)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def plain(value):
    """A message, struct, list or scalar as JSON-able data."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, uuid.UUID):
        return uuid_to_str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        text = data[:MAX_BYTES_SHOWN].hex()
        return text if len(data) <= MAX_BYTES_SHOWN else f"{text}... ({len(data)} bytes)"
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    slots = getattr(type(value), "__slots__", None)
    if slots is not None:
        return {camel(n): plain(getattr(value, n)) for n in slots
                if n != "unknown_tagged_fields" or getattr(value, n)}
    return repr(value)


def decode_value(raw) -> dict:
    """A metadata record value; bad bytes give ``type`` "(undecodable)" and the reason."""
    try:
        record = decode_metadata_record(raw)
    except ValueError as exc:
        return {"type": "(undecodable)", "version": None, "fields": {"error": str(exc)}}
    return {"type": type(record.message).__name__, "version": record.version,
            "fields": plain(record.message), "control": False}


def decode_control(kind, message) -> dict:
    if kind == "error":
        return {"type": "(undecodable)", "version": None, "fields": {"error": message}}
    return {"type": type(message).__name__, "version": getattr(message, "version", 0),
            "fields": plain(message), "control": True}
