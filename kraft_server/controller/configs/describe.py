"""DescribeConfigs as a Kafka 4.3.1 controller answers it (``ConfigHelper.describeConfigs``
run on the controller's own ``KafkaConfig`` and metadata image), pure over the image.

* TOPIC: every (non-internal) topic config: the topic's own value (source
  DYNAMIC_TOPIC_CONFIG), else the value of the broker config it falls back to on this
  controller (``KafkaConfig.extractLogConfigMap``: dynamic for this node, dynamic
  cluster default, static, default; ``.hours``/``.minutes`` synonyms converted to ms).
  Synonyms: the topic's own, then those of its first broker config in Kafka's order
  (``configSynonyms``: dynamic node, dynamic default, static, default; the leading ones
  not named like the base config are dropped). Unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
* BROKER ``""``: the cluster's dynamic defaults (source DYNAMIC_DEFAULT_BROKER_CONFIG).
  BROKER ``<our node id>``: every broker config of this node's ``KafkaConfig`` plus
  the other properties of its file; read-only unless dynamic. Another id: INVALID_REQUEST.
* BROKER_LOGGER ``<our node id>``: this process's log levels (``loggers.py``).
* GROUP: every group config (its own, else the controller's broker-level value, else
  the default); CLIENT_METRICS: the subscription's stored configs.

Sensitive values (PASSWORD, and a name KafkaConfig does not define) are answered as
null. Documentation is not answered (null): Kafka's text is not copied here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from wire.errors import ErrorCode

from ..replication.topic_creation import name_error
from .definitions import (
    BROKER, BROKER_DEFS, BROKER_LOGGER, CLIENT_METRICS, COMMA, CONFIG_TYPES, GROUP, GROUP_DEFS, TOPIC, TOPIC_DEFS,
    ConfigError, parse, to_string,
)
from .loggers import logger_levels

# DescribeConfigsResponse.ConfigSource
TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 1, 2, 3
STATIC_BROKER_CONFIG, DEFAULT_CONFIG, DYNAMIC_BROKER_LOGGER_CONFIG = 4, 5, 6
CLIENT_METRICS_CONFIG, GROUP_CONFIG = 7, 8
UNIT_MS = {".hours": 3_600_000, ".minutes": 60_000}


@dataclass
class Entry:
    name: str
    value: str | None
    source: int
    sensitive: bool = False
    read_only: bool = False
    synonyms: list = field(default_factory=list)  # (name, value, source)
    config_type: int = 0


@dataclass
class Result:
    resource_type: int
    name: str
    error: int = 0
    message: str | None = None
    entries: list = field(default_factory=list)


class NodeConfig:
    """This controller's config layers (``DynamicBrokerConfig``): dynamic for this node,
    dynamic cluster default (both from the image), static (its properties file), and
    Kafka's defaults."""

    def __init__(self, image, node_id: int, static: dict) -> None:
        self.node_id = node_id
        static = dict(static)
        for a, b in (("node.id", "broker.id"), ("broker.id", "node.id")):  # KafkaConfig.populateSynonyms
            if a in static and b not in static:
                static[b] = static[a]
        self.layers = ((image.configs.resource(BROKER, str(node_id)), DYNAMIC_BROKER_CONFIG),
                       (image.configs.resource(BROKER, ""), DYNAMIC_DEFAULT_BROKER_CONFIG),
                       (static, STATIC_BROKER_CONFIG))

    def raw(self, name: str) -> str | None:
        for values, _ in self.layers:
            if name in values:
                return values[name]
        return None

    def synonyms(self, name: str, sensitive: bool) -> list:
        """``ConfigHelper.configSynonyms``: (name, value, source), most specific first."""
        names = BROKER_DEFS[name].synonyms if name in BROKER_DEFS else (name,)
        out = []
        for values, source in self.layers:
            out += [(n, None if sensitive else values[n], source) for n in names if n in values]
        out += [(n, None if sensitive else BROKER_DEFS[n].default, DEFAULT_CONFIG) for n in names
                if n in BROKER_DEFS and BROKER_DEFS[n].has_default and BROKER_DEFS[n].default is not None]
        while out and out[0][0] != name:  # e.g. listener overrides when describing the base config
            out.pop(0)
        return out


def _filter(entries: list, keys) -> list:
    entries.sort(key=lambda e: e.name)
    return entries if not keys else [e for e in entries if e.name in keys]


def _topic_fallback(node: NodeConfig, d):
    for synonym in d.synonyms:
        raw = node.raw(synonym)
        if raw is None:
            continue
        try:
            for suffix, factor in UNIT_MS.items():
                if synonym.endswith(suffix):
                    return int(raw.strip()) * factor
            return parse(d, raw)
        except (ConfigError, ValueError):
            break
    return None if not d.has_default or d.default is None else parse(d, d.default)


def describe_topic(image, node: NodeConfig, name: str, keys, include_synonyms: bool) -> Result:
    bad = name_error(name)
    if bad is not None:
        return Result(TOPIC, name, ErrorCode.INVALID_TOPIC_EXCEPTION, bad)
    if name not in image.topics.by_name:
        return Result(TOPIC, name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
    own = image.configs.resource(TOPIC, name)
    entries = []
    for d in TOPIC_DEFS.values():
        if d.internal:
            continue
        sensitive = d.sensitive
        try:
            value = parse(d, own[d.name]) if d.name in own else _topic_fallback(node, d)
        except ConfigError:
            value = own[d.name]
        text = None if sensitive else to_string(d, value)
        synonyms = node.synonyms(d.synonyms[0], sensitive) if d.synonyms else []
        if d.name in own:
            synonyms.insert(0, (d.name, text, TOPIC_CONFIG))
        entries.append(Entry(d.name, text, synonyms[0][2] if synonyms else DEFAULT_CONFIG, sensitive, False,
                             synonyms if include_synonyms else [], CONFIG_TYPES.get(d.type, 0)))
    return Result(TOPIC, name, entries=_filter(entries, keys))


def _broker_entry(node: NodeConfig, name: str, value: str | None, per_broker: bool, include_synonyms: bool) -> Entry:
    d = BROKER_DEFS.get(name)
    sensitive = d is None or d.sensitive  # KafkaConfig.maybeSensitive: an unknown type may be a secret
    synonyms = node.synonyms(name, sensitive)
    if not per_broker:
        synonyms = [s for s in synonyms if s[2] == DYNAMIC_DEFAULT_BROKER_CONFIG]
    return Entry(name, None if sensitive else value, synonyms[0][2] if synonyms else DEFAULT_CONFIG, sensitive,
                 not (d is not None and d.dynamic), synonyms if include_synonyms else [],
                 CONFIG_TYPES.get(d.type, 0) if d is not None else 0)


def _broker_value(node: NodeConfig, name: str) -> str | None:
    d = BROKER_DEFS.get(name)
    raw = node.raw(name)
    if raw is None:
        return d.default if d is not None and d.has_default else None
    raw = raw.strip()
    return ",".join(COMMA.split(raw)) if d is not None and d.type == "LIST" and raw else raw


def _not_this_node(node: NodeConfig, resource_type: int, name: str, expected: str) -> Result | None:
    """``resourceNameToBrokerId`` and the check that it names this node, else None."""
    try:
        node_id = int(name)
    except ValueError:
        return Result(resource_type, name, ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
    if node_id != node.node_id:
        return Result(resource_type, name, ErrorCode.INVALID_REQUEST,
                      f"Unexpected broker id, expected {expected} but received {name}")
    return None


def describe_broker(image, node: NodeConfig, name: str, keys, include_synonyms: bool) -> Result:
    if not name:
        defaults = image.configs.resource(BROKER, "")
        return Result(BROKER, name, entries=_filter(
            [_broker_entry(node, k, v, False, include_synonyms) for k, v in defaults.items()], keys))
    refused = _not_this_node(node, BROKER, name, f"{node.node_id} or empty string,")
    if refused is not None:
        return refused
    names = {n for n, d in BROKER_DEFS.items() if not d.internal}
    for values, _ in node.layers:
        names |= set(values)
    return Result(BROKER, name, entries=_filter(
        [_broker_entry(node, n, _broker_value(node, n), True, include_synonyms) for n in names], keys))


def describe_logger(node: NodeConfig, name: str, keys) -> Result:
    if not name:
        return Result(BROKER_LOGGER, name, ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
    refused = _not_this_node(node, BROKER_LOGGER, name, str(node.node_id))
    if refused is not None:
        return refused
    return Result(BROKER_LOGGER, name, entries=_filter(
        [Entry(n, level, DYNAMIC_BROKER_LOGGER_CONFIG) for n, level in logger_levels().items()], keys))


def describe_group(image, node: NodeConfig, name: str, keys, include_synonyms: bool) -> Result:
    """``createGroupConfigEntry``: the group's own value (GROUP_CONFIG), else this
    controller's value of the broker config it falls back to, else the default."""
    if not name:
        return Result(GROUP, name, ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    own = image.configs.resource(GROUP, name)
    entries = []
    for d in GROUP_DEFS.values():
        raw = own.get(d.name)
        if raw is None and d.synonyms:
            raw = _broker_value(node, d.synonyms[0])
        if raw is None:
            raw = d.default
        try:
            text = to_string(d, parse(d, raw)) if raw is not None else None
        except ConfigError:
            text = raw
        source = GROUP_CONFIG if d.name in own else DEFAULT_CONFIG
        entries.append(Entry(d.name, text, source, False, False,
                             [(d.name, text, source)] if include_synonyms else [], CONFIG_TYPES.get(d.type, 0)))
    return Result(GROUP, name, entries=_filter(entries, keys))


def describe_stored(image, resource_type: int, name: str, keys, source: int, empty_message: str) -> Result:
    if not name:
        return Result(resource_type, name, ErrorCode.INVALID_REQUEST, empty_message)
    stored = image.configs.resource(resource_type, name)
    return Result(resource_type, name, entries=_filter([Entry(k, v, source) for k, v in stored.items()], keys))


def describe(image, node_id: int, static: dict, resources, include_synonyms: bool) -> list[Result]:
    """``resources``: ``[(type, name, keys or None)]`` in request order."""
    node = NodeConfig(image, node_id, static)
    odd = next(((t, n) for t, n, _ in resources if t not in (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)),
               None)
    if odd is not None:  # ConfigHelper refuses the whole request (its authorization step throws)
        message = f"Unexpected resource type UNKNOWN for resource {odd[1]}"
        return [Result(t, n, ErrorCode.INVALID_REQUEST, message) for t, n, _ in resources]
    out = []
    for resource_type, name, keys in resources:
        keys = set(keys) if keys else None
        if resource_type == TOPIC:
            out.append(describe_topic(image, node, name, keys, include_synonyms))
        elif resource_type == BROKER:
            out.append(describe_broker(image, node, name, keys, include_synonyms))
        elif resource_type == BROKER_LOGGER:
            out.append(describe_logger(node, name, keys))
        elif resource_type == CLIENT_METRICS:
            out.append(describe_stored(image, resource_type, name, keys, CLIENT_METRICS_CONFIG,
                                       "Client metrics subscription name must not be empty"))
        else:
            out.append(describe_group(image, node, name, keys, include_synonyms))
    return out
