"""What the controller checks before it writes a resource's new configs (Kafka's
``ControllerConfigurationValidator`` and ``QuorumController.ConfigResourceExistenceChecker``).

``validate(resource_type, name, new, existing)`` raises ``ResourceError(code, message)``:

* TOPIC: the name (``Topic.validate``; empty: "Default topic resources are not
  allowed."), then ``LogConfig.validate``: unknown names ("Unknown topic config name:
  X"), every value parsed against its definition (type and validator messages), the
  compaction lags, and remote storage (off on this controller, as
  ``remote.log.storage.system.enable`` defaults to false);
* BROKER: only the name (a number ≥ 0, or empty for the cluster default); the values are
  checked by the broker that forwards them, not by the controller;
* GROUP: the name must not be empty; CLIENT_METRICS: not checked further here;
* any other type: INVALID_REQUEST "Unknown resource type X".

``check_exists``: a topic must exist (UNKNOWN_TOPIC_OR_PARTITION), a broker id must be a
registered broker or a controller (BROKER_ID_NOT_REGISTERED).
"""
from __future__ import annotations

from wire.errors import ErrorCode

from .definitions import (
    BROKER, CLIENT_METRICS, GROUP, RESOURCE_NAMES, TOPIC, TOPIC_DEFS, ConfigError, parse,
)


class ResourceError(Exception):
    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _topic_name(name: str) -> None:
    from ..topic_creation import name_error  # topic_creation checks new topics' configs here
    if not name:
        raise ResourceError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    bad = name_error(name)
    if bad is not None:
        raise ResourceError(ErrorCode.INVALID_TOPIC_EXCEPTION, bad)


def _broker_name(name: str) -> None:
    if name:
        try:
            broker_id = int(name)
        except ValueError:
            raise ResourceError(ErrorCode.INVALID_REQUEST, "Unable to parse broker name as a base 10 number.") from None
        if broker_id < 0:
            raise ResourceError(ErrorCode.INVALID_REQUEST, "Invalid negative broker ID.")


def _no_nulls(configs: dict, what: str) -> None:
    nulls = [k for k, v in configs.items() if v is None]
    if nulls:
        raise ResourceError(ErrorCode.INVALID_CONFIG, f"Null value not supported for {what} configs: {','.join(nulls)}")


def validate(resource_type: int, name: str, new: dict, existing: dict) -> None:
    if resource_type == TOPIC:
        _topic_name(name)
        _no_nulls(new, "topic")
        try:
            validate_topic_configs(new)
        except ConfigError as exc:
            raise ResourceError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    elif resource_type == BROKER:
        _broker_name(name)
    elif resource_type == CLIENT_METRICS:
        _no_nulls(new, "client metrics")
    elif resource_type == GROUP:
        if not name:
            raise ResourceError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
        _no_nulls(new, "group")
    else:
        raise ResourceError(ErrorCode.INVALID_REQUEST,
                            f"Unknown resource type {RESOURCE_NAMES.get(resource_type, 'UNKNOWN')}")


def validate_topic_configs(configs: dict) -> dict:
    """``LogConfig.validate`` for a topic's whole set: the parsed values, or ConfigError."""
    for key in configs:
        d = TOPIC_DEFS.get(key)
        if d is None or d.internal:
            raise ConfigError(f"Unknown topic config name: {key}")
    parsed = {key: parse(TOPIC_DEFS[key], value) for key, value in configs.items()}
    lag_min = parsed.get("min.compaction.lag.ms", int(TOPIC_DEFS["min.compaction.lag.ms"].default))
    lag_max = parsed.get("max.compaction.lag.ms", int(TOPIC_DEFS["max.compaction.lag.ms"].default))
    if lag_min > lag_max:
        raise ConfigError(f"conflict topic config setting min.compaction.lag.ms ({lag_min}) > "
                          f"max.compaction.lag.ms ({lag_max})")
    if parsed.get("remote.storage.enable"):
        raise ConfigError("Tiered Storage functionality is disabled in the broker. "
                          "Topic cannot be configured with remote log storage.")
    return parsed


def check_exists(image, resource_type: int, name: str) -> None:
    if resource_type == TOPIC and name not in image.topics.by_name:
        raise ResourceError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    if resource_type == BROKER and name:
        try:
            node_id = int(name)
        except ValueError:
            raise ResourceError(ErrorCode.INVALID_REQUEST, f"Invalid broker name {name}") from None
        if image.brokers.get(node_id) is None and node_id not in image.controllers:
            raise ResourceError(ErrorCode.BROKER_ID_NOT_REGISTERED, f"No node with id {node_id} found.")
