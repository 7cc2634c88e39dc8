"""Kafka 4.4.0's config definitions (``LogConfig`` for topics, ``KafkaConfig`` for
brokers) and how a value is parsed and checked against them (``ConfigDef.parseType``
and its validators), with Kafka's ``ConfigException`` messages.

The facts come from ``kafka_config_defs.json``, written from the pinned jars by
``python -m tools.kafka_configdefs`` (names, types, defaults, validator bounds,
synonyms, dynamic broker configs; no documentation text).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from kraft_server.common.java_numbers import BOUNDS, parse_java_integer

TOPIC = 2  # ConfigResource.Type ids
BROKER = 4
BROKER_LOGGER = 8
CLIENT_METRICS = 16
GROUP = 32
RESOURCE_NAMES = {TOPIC: "TOPIC", BROKER: "BROKER", BROKER_LOGGER: "BROKER_LOGGER",
                  CLIENT_METRICS: "CLIENT_METRICS", GROUP: "GROUP", 0: "UNKNOWN"}

# DescribeConfigsResponse.ConfigType ids
CONFIG_TYPES = {"BOOLEAN": 1, "STRING": 2, "INT": 3, "SHORT": 4, "LONG": 5, "DOUBLE": 6, "LIST": 7,
                "CLASS": 8, "PASSWORD": 9}
COMMA = re.compile(r"\s*,\s*")
THROTTLED_REPLICA = re.compile(r"^([0-9]+:[0-9]+)?$")


class ConfigError(ValueError):
    """Kafka's ``ConfigException`` / ``InvalidConfigurationException``: INVALID_CONFIG."""


@dataclass(frozen=True)
class ConfigDefinition:
    name: str
    type: str
    has_default: bool
    default: str | None  # as ConfigDef.convertToString writes it
    internal: bool
    validator: dict | None
    synonyms: tuple[str, ...]  # topic: the broker configs it falls back to; broker: its synonyms
    dynamic: bool = False  # broker: in DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS

    @property
    def sensitive(self) -> bool:
        return self.type == "PASSWORD"  # KafkaConfig.maybeSensitive


def _load() -> tuple[dict[str, ConfigDefinition], dict[str, ConfigDefinition]]:
    data = json.loads((Path(__file__).with_name("kafka_config_defs.json")).read_text(encoding="utf-8"))

    def table(rows, synonyms_key):
        return {r["name"]: ConfigDefinition(r["name"], r["type"], r["has_default"], r["default"], r["internal"],
                                            r["validator"], tuple(r[synonyms_key]), r.get("dynamic", False))
                for r in rows}
    return (table(data["topic"], "server_synonyms"), table(data["broker"], "synonyms"),
            table(data["group"], "server_synonyms"), table(data["client_metrics"], "server_synonyms"))


TOPIC_DEFS, BROKER_DEFS, GROUP_DEFS, CLIENT_METRICS_DEFS = _load()


def definitions(resource_type: int) -> dict[str, ConfigDefinition]:
    """``KafkaConfigSchema``'s config defs: BROKER and TOPIC (none for other types)."""
    return TOPIC_DEFS if resource_type == TOPIC else BROKER_DEFS if resource_type == BROKER else {}


def is_list(resource_type: int, name: str) -> bool:
    """``KafkaConfigSchema.isSplittable``: APPEND/SUBTRACT work only on LIST configs."""
    d = definitions(resource_type).get(name)
    return d is not None and d.type == "LIST"


def default_string(resource_type: int, name: str) -> str | None:
    d = definitions(resource_type).get(name)
    return d.default if d is not None and d.has_default else None


def invalid(name: str, value, message: str | None) -> ConfigError:
    """``new ConfigException(name, value, message)``."""
    return ConfigError(f"Invalid value {value} for configuration {name}" + (f": {message}" if message else ""))


def java_list(items) -> str:
    return "[" + ", ".join(items) + "]"


def parse(d: ConfigDefinition, raw: str):
    """``ConfigDef.parseValue`` for a string: the typed value, or ConfigError."""
    value = _parse_type(d, raw)
    if d.validator is not None:
        _validate(d, value, raw)
    return value


def _parse_type(d: ConfigDefinition, raw: str):
    s = raw.strip()
    t = d.type
    if t == "BOOLEAN":
        if s.lower() in ("true", "false"):
            return s.lower() == "true"
        raise invalid(d.name, s, "Expected value to be either true or false")
    if t in BOUNDS:
        if (n := parse_java_integer(s, t)) is not None:
            return n
        raise invalid(d.name, s, f"Not a number of type {t}")
    if t == "DOUBLE":
        try:
            return float(s)
        except ValueError:
            raise invalid(d.name, s, "Not a number of type DOUBLE") from None
    if t == "LIST":
        return [] if not s else COMMA.split(s)
    return s  # STRING, CLASS (not loaded here), PASSWORD


def _number(text: str):
    return float(text) if any(c in text for c in ".eE") else int(text)


def _validate(d: ConfigDefinition, value, raw: str) -> None:
    v = d.validator
    kind = v["kind"]
    if kind == "Range":
        if v["min"] is not None and value < _number(v["min"]):
            raise invalid(d.name, raw.strip(), f"Value must be at least {v['min']}")
        if v["max"] is not None and value > _number(v["max"]):
            raise invalid(d.name, raw.strip(), f"Value must be no more than {v['max']}")
    elif kind == "ValidString":
        if value not in v["values"]:
            raise invalid(d.name, value, "String must be one of: " + ", ".join(v["values"]))
    elif kind == "CaseInsensitiveValidString":
        if value.upper() not in {x.upper() for x in v["values"]}:
            raise invalid(d.name, value, "String must be one of (case insensitive): " + ", ".join(v["values"]))
    elif kind == "ValidList":
        _valid_list(d, value)
    elif kind == "ThrottledReplicaListValidator":
        if not (all(THROTTLED_REPLICA.match(x.strip()) for x in value) or "".join(value).strip() == "*"):
            raise invalid(d.name, java_list(value), f"{d.name} must be the literal '*' or a list of replicas in "
                          "the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
    elif kind == "LambdaValidator" and d.name.startswith("compression.gzip"):
        if value != -1 and not 1 <= value <= 9:  # GzipCompression: a level of 1-9, or -1 (the default)
            raise invalid(d.name, value, "Value must be between 1 and 9, or -1")
    # the broker-only validators (non-empty strings, quorum voters...) are not needed:
    # the controller does not validate broker config values (ControllerConfigurationValidator)


def _valid_list(d: ConfigDefinition, values: list) -> None:
    allowed = d.validator["values"]
    if not values and not d.validator.get("empty_allowed", True):
        raise ConfigError(f"Configuration '{d.name}' must not be empty. Valid values include: "
                          + ("any non-empty value" if not allowed else java_list(allowed)))
    if len(set(values)) != len(values):
        raise ConfigError(f"Configuration '{d.name}' values must not be duplicated.")
    for x in values:
        if not x:
            raise ConfigError(f"Configuration '{d.name}' values must not be empty.")
        if allowed and x not in allowed:
            raise invalid(d.name, x, "String must be one of: " + ", ".join(allowed))


def to_string(d: ConfigDefinition | None, value) -> str | None:
    """``ConfigDef.convertToString``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(value)
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e7 else f"{value:.1f}"
    return str(value)
