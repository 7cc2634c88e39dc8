"""The records a config change writes (Kafka's ``ConfigurationControlManager``
``incrementalAlterConfigs`` and ``legacyAlterConfigs``), pure over the image.

Per resource, all or nothing:

* incremental: SET takes the value, DELETE removes the key, APPEND/SUBTRACT add or
  remove comma-separated items of a LIST config (the current value, else its default);
  on another type INVALID_CONFIG "Can't APPEND to key X because its type is not LIST.".
  A ConfigRecord is written for each key whose value changes, and for every key of a
  BROKER resource even when unchanged (KAFKA-14136: brokers reload on it);
* legacy: the request's set replaces the resource's: each key given is written (as
  above), each key not given is deleted (value null);
* then the checks: with ELR on, a broker-level ``min.insync.replicas`` may not be set
  and the cluster-level one may not be removed; a value over 32767 characters is
  refused; the resource's whole new set goes to ``validation.validate`` and the
  resource must exist (``check_exists``).

After all resources: with ELR on, each ``min.insync.replicas`` record is followed by a
ClearElrRecord, for its topic, or (cluster or broker level) with an empty name for
every topic. ``validateOnly`` answers the same and writes nothing.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import ClearElrRecord, ConfigRecord

from ..replication.partition_change import elr_enabled
from .definitions import BROKER, TOPIC, default_string, is_list
from .validation import ResourceError, check_exists, validate

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
OP_NAMES = {SET: "SET", DELETE: "DELETE", APPEND: "APPEND", SUBTRACT: "SUBTRACT"}
MIN_ISR = "min.insync.replicas"
MAX_VALUE_CHARS = 32767
MAX_RECORDS = 10_000  # QuorumController.MAX_RECORDS_PER_USER_OP


def _parts(value: str | None, resource_type: int, key: str) -> list[str]:
    if value is None:
        value = default_string(resource_type, key)
    return [p for p in value.split(",") if p] if value else []


def _record(resource_type: int, name: str, key: str, value: str | None) -> ConfigRecord:
    return ConfigRecord(resource_type=resource_type, resource_name=name, name=key, value=value)


def incremental_records(image, resource_type: int, name: str, ops: dict) -> list[ConfigRecord]:
    """``ops``: ``{key: (operation, value)}``. Raises ResourceError."""
    current = image.configs.resource(resource_type, name)
    out = []
    for key, (op, value) in ops.items():
        old = current.get(key)
        new = old
        if op == SET:
            new = value
        elif op == DELETE:
            new = None
        elif op in (APPEND, SUBTRACT):
            if not is_list(resource_type, key):
                raise ResourceError(ErrorCode.INVALID_CONFIG,
                                    f"Can't {OP_NAMES[op]} to key {key} because its type is not LIST.")
            items = _parts(old, resource_type, key)
            for v in (value or "").split(","):
                if op == APPEND and v not in items:
                    items.append(v)
                elif op == SUBTRACT and v in items:
                    items.remove(v)
            new = ",".join(items)
        if new != old or resource_type == BROKER:
            out.append(_record(resource_type, name, key, new))
    _check(image, resource_type, name, current, out, [])
    return out


def legacy_records(image, resource_type: int, name: str, configs: dict) -> list[ConfigRecord]:
    """``configs``: the resource's whole new set ``{key: value}``. Raises ResourceError."""
    current = image.configs.resource(resource_type, name)
    altered = [_record(resource_type, name, k, v) for k, v in configs.items()
               if v != current.get(k) or resource_type == BROKER]
    deleted = [_record(resource_type, name, k, None) for k in current if k not in configs]
    _check(image, resource_type, name, current, altered, deleted)
    return altered + deleted


def _check(image, resource_type: int, name: str, current: dict, altered: list, deleted: list) -> None:
    elr = elr_enabled(image)
    new = dict(current)
    for r in altered + deleted:
        if r.name == MIN_ISR and r.resource_type == BROKER and elr:
            if r.resource_name:
                raise ResourceError(ErrorCode.INVALID_CONFIG,
                                    "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
            if r.value is None:
                raise ResourceError(ErrorCode.INVALID_CONFIG,
                                    "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
        if r.value is None:
            new.pop(r.name, None)
        elif len(r.value) > MAX_VALUE_CHARS:
            raise ResourceError(ErrorCode.INVALID_CONFIG, "The configuration value cannot be added because it "
                                "exceeds the maximum value size of 32767 bytes.")
        else:
            new[r.name] = r.value
    validate(resource_type, name, new, current)
    check_exists(image, resource_type, name)


def new_topic_error(name: str, configs: dict) -> tuple[int, str] | None:
    """What CreateTopics answers for a new topic's configs (Kafka checks them as an
    incremental SET of a newly created resource): ``(code, message)`` or None."""
    try:
        if any(v is not None and len(v) > MAX_VALUE_CHARS for v in configs.values()):
            raise ResourceError(ErrorCode.INVALID_CONFIG, "The configuration value cannot be added because it "
                                "exceeds the maximum value size of 32767 bytes.")
        validate(TOPIC, name, {k: v for k, v in configs.items() if v is not None}, {})
    except ResourceError as exc:
        return exc.code, exc.message
    return None


def clear_elr_records(image, records: list) -> list[ClearElrRecord]:
    """``createClearElrRecordsAsNeeded``."""
    if not elr_enabled(image):
        return []
    return [ClearElrRecord(topic_name=r.resource_name if r.resource_type == TOPIC else "")
            for r in records if r.name == MIN_ISR]


def alter(image, changes: list, decide) -> tuple[list, list]:
    """``changes``: ``[(resource type, name, payload)]`` (duplicates already answered);
    ``decide(image, type, name, payload) -> records``. Returns ``(results, records)``
    with results ``(type, name, error code, message)`` in request order."""
    results, records = [], []
    for resource_type, name, payload in changes:
        try:
            out = decide(image, resource_type, name, payload)
        except ResourceError as exc:
            results.append((resource_type, name, exc.code, exc.message))
            continue
        if len(records) + len(out) > MAX_RECORDS:
            results.append((resource_type, name, ErrorCode.POLICY_VIOLATION,
                            f"Excessively large number of records ({MAX_RECORDS}) in one operation."))
            continue
        records += out
        results.append((resource_type, name, ErrorCode.NONE, None))
    return results, [(r, 0) for r in records + clear_elr_records(image, records)]
