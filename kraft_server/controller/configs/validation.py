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
* GROUP (``GroupConfig.validate``): the name must not be empty, names and values as
  defined, each within this controller's group coordinator bounds, session timeouts
  above heartbeat intervals; CLIENT_METRICS (``ClientMetricsConfigs.validate``): a
  subscription name, known names, ``interval.ms`` in 100..3600000, ``match`` patterns
  of the form ``name=regex`` (the regex itself is not compiled here);
* any other type: INVALID_REQUEST "Unknown resource type X".

``check_exists``: a topic must exist (UNKNOWN_TOPIC_OR_PARTITION), a broker id must be a
registered broker or a controller (BROKER_ID_NOT_REGISTERED).
"""
from __future__ import annotations

from wire.errors import ErrorCode

from .definitions import (
    BROKER, BROKER_DEFS, CLIENT_METRICS, CLIENT_METRICS_DEFS, COMMA, GROUP, GROUP_DEFS, RESOURCE_NAMES, TOPIC, TOPIC_DEFS,
    ConfigError, parse,
)


class ResourceError(Exception):
    def __init__(self, code: int, message: str | None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _topic_name(name: str) -> None:
    from ..replication.topic_creation import name_error  # topic_creation checks new topics' configs here
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
        validate_client_metrics(name, new)
    elif resource_type == GROUP:
        if not name:
            raise ResourceError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
        _no_nulls(new, "group")
        try:
            validate_group_configs(new)
        except ConfigError as exc:
            raise ResourceError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    else:
        raise ResourceError(ErrorCode.INVALID_REQUEST,
                            f"Unknown resource type {RESOURCE_NAMES.get(resource_type, 'UNKNOWN')}")


def validate_topic_configs(configs: dict) -> dict:
    """``LogConfig.validate`` for a topic's whole set: the parsed values, or ConfigError."""
    for key in configs:
        if key not in TOPIC_DEFS:  # internal ones are names too (``LogConfig.configNames``)
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


# GroupConfig.validateValues: a group config and the broker bounds it must keep to
# (this controller's values: Kafka's defaults, as our controllers do not set them)
GROUP_BOUNDS = {
    "consumer.heartbeat.interval.ms": ("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
    "consumer.session.timeout.ms": ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    "consumer.assignment.interval.ms": ("group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"),
    "share.heartbeat.interval.ms": ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
    "share.session.timeout.ms": ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
    "share.record.lock.duration.ms": ("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
    "share.delivery.count.limit": ("group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
    "share.partition.max.record.locks": ("group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"),
    "share.assignment.interval.ms": ("group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"),
    "streams.heartbeat.interval.ms": ("group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"),
    "streams.session.timeout.ms": ("group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    "streams.num.standby.replicas": (None, "group.streams.max.standby.replicas"),
    "streams.assignment.interval.ms": ("group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms"),
}


def _broker_default(name: str) -> int:
    return int(BROKER_DEFS[name].default)


def validate_group_configs(configs: dict) -> dict:
    """``GroupConfig.validate``: names, values, the broker's bounds, session > heartbeat."""
    for key in configs:
        if key not in GROUP_DEFS:
            raise ConfigError(f"Unknown group config name: {key}")
    values = {k: parse(d, configs[k]) if k in configs else parse(d, d.default)
              for k, d in GROUP_DEFS.items() if k in configs or d.default is not None}
    for key, (low, high) in GROUP_BOUNDS.items():
        if low is not None and values[key] < _broker_default(low):
            raise ConfigError(f"{key} must be greater than or equal to {low}")
        if values[key] > _broker_default(high):
            raise ConfigError(f"{key} must be less than or equal to {high}")
    for kind in ("consumer", "share", "streams"):
        if values[f"{kind}.session.timeout.ms"] <= values[f"{kind}.heartbeat.interval.ms"]:
            raise ConfigError(f"{kind}.session.timeout.ms must be greater than {kind}.heartbeat.interval.ms")
    return values


MATCH_KEYS = frozenset({"client_instance_id", "client_id", "client_software_name", "client_software_version",
                        "client_source_address", "client_source_port"})


def validate_client_metrics(name: str, configs: dict) -> None:
    """``ClientMetricsConfigs.validate``."""
    if not name:
        raise ResourceError(ErrorCode.INVALID_REQUEST, "Subscription name can't be empty")
    for key in configs:
        if key not in CLIENT_METRICS_DEFS:
            raise ResourceError(ErrorCode.INVALID_REQUEST, f"Unknown client metrics configuration: {key}")
    if "interval.ms" in configs:
        try:
            interval = parse(CLIENT_METRICS_DEFS["interval.ms"], configs["interval.ms"])
        except ConfigError as exc:
            raise ResourceError(ErrorCode.INVALID_CONFIG, str(exc)) from None
        if not 100 <= interval <= 3_600_000:
            raise ResourceError(ErrorCode.INVALID_REQUEST, f"Invalid value {interval} for interval.ms, interval "
                                "must be between 100 and 3600000 (1 hour)")
    for pattern in COMMA.split(configs.get("match", "").strip()):
        key, _, regex = pattern.partition("=")
        if pattern and (key.strip() not in MATCH_KEYS or not regex.strip()):
            raise ResourceError(ErrorCode.INVALID_REQUEST, f"Illegal client matching pattern: {pattern}")


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
