"""The node's configuration: a Kafka ``server.properties`` read with Kafka's names,
types, defaults and validators (``KafkaConfig``, ``QuorumConfig``, ``KRaftConfigs``,
``MetadataLogConfig`` of Apache Kafka 4.3.1).

Two layers:

* ``java_properties`` reads the file's Java ``Properties`` syntax;
* :func:`KafkaConfig.from_props` types and validates the values the way
  ``ConfigDef.parseType`` does (values are trimmed; lists split on commas) and
  raises :class:`ConfigError` with Kafka's wording, e.g.
  ``Invalid value abc for configuration node.id: Not a number of type INT``.

Listener, voter and bootstrap-server strings are parsed into small value types
(:class:`Endpoint`, :class:`Voter`) following Kafka's ``Utils.getHost/getPort``
(IPv6 hosts in brackets, an empty host meaning "all interfaces").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from .java_properties import PropertiesSyntaxError, load_properties, parse_properties

__all__ = [
    "ConfigError", "Endpoint", "KafkaConfig", "Voter", "load_properties", "parse_properties",
    "parse_bootstrap_servers", "parse_host_port", "parse_listeners", "parse_voters",
]


class ConfigError(ValueError):
    """An invalid or missing configuration value (Kafka's ``ConfigException``).
    ``where`` is the property at fault (or the file); by default the one the
    message names in Kafka's wording ("... for configuration <name>: ...")."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        if where is None:
            named = re.search(r'for configuration ([\w.\-]+)|configuration "([\w.\-]+)"', message)
            where = (named.group(1) or named.group(2)) if named else None
        self.where = where


# ---------------------------------------------------------------------------------
# Endpoints: listeners, voters, bootstrap servers
# ---------------------------------------------------------------------------------

_HOST_PORT = re.compile(r"^\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class Endpoint:
    """A listener (``name`` upper-cased, as Kafka's ``ListenerName.normalised``) or a
    plain ``host:port`` (``name`` empty). ``host`` is "" for "all interfaces"."""

    name: str
    host: str
    port: int

    def host_port(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.name}://{self.host_port()}" if self.name else self.host_port()


@dataclass(frozen=True)
class Voter:
    """One ``controller.quorum.voters`` entry: ``id@host:port``."""

    node_id: int
    host: str
    port: int


def _check_port(port: int, what: str, prop: str) -> int:
    if not 0 <= port <= 65535:
        raise ConfigError(f"Invalid value {what} for configuration {prop}: port {port} is out of range")
    return port


def parse_listeners(value: list[str] | str, prop: str = "listeners") -> list[Endpoint]:
    """``NAME://host:port,...`` → endpoints; names must be unique."""
    items = _as_list(value)
    out: list[Endpoint] = []
    for item in items:
        m = _LISTENER.match(item)
        if not m:
            raise ConfigError(
                f"Invalid value {','.join(items)} for configuration {prop}: "
                f"Unable to parse {item} to a broker endpoint"
            )
        name = m.group(1).upper()
        out.append(Endpoint(name, m.group(2), _check_port(int(m.group(3)), item, prop)))
    names = [e.name for e in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(
            f"Invalid value {','.join(items)} for configuration {prop}: "
            f"Each listener must have a different name, listeners: {','.join(items)}"
        )
    return out


def parse_host_port(item: str, prop: str) -> Endpoint:
    m = _HOST_PORT.match(item.strip())
    if not m or not m.group(1):
        raise ConfigError(f"Invalid value {item} for configuration {prop}: Unable to parse host and port from {item}")
    return Endpoint("", m.group(1), _check_port(int(m.group(2)), item, prop))


def parse_bootstrap_servers(value: list[str] | str, prop: str = "controller.quorum.bootstrap.servers") -> list[Endpoint]:
    """``host:port,...`` → endpoints."""
    return [parse_host_port(item, prop) for item in _as_list(value)]


def parse_voters(value: list[str] | str, prop: str = "controller.quorum.voters") -> list[Voter]:
    """``id@host:port,...`` → voters (Kafka's ``QuorumConfig.parseVoterConnections``)."""
    out: list[Voter] = []
    for item in _as_list(value):
        node, sep, address = item.partition("@")
        if not sep:
            raise ConfigError(
                f"Invalid value {item} for configuration {prop}: "
                f"Failed to parse voter string '{item}', expected format is '{{id}}@{{host}}:{{port}}'"
            )
        try:
            node_id = int(node)
        except ValueError:
            raise ConfigError(
                f"Invalid value {item} for configuration {prop}: Failed to parse node id '{node}'"
            ) from None
        ep = parse_host_port(address, prop)
        out.append(Voter(node_id, ep.host, ep.port))
    ids = [v.node_id for v in out]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"Invalid value {','.join(_as_list(value))} for configuration {prop}: duplicate voter ids")
    return out


def _as_list(value: list[str] | str) -> list[str]:
    if isinstance(value, list):
        return value
    value = value.strip()
    return [] if not value else re.split(r"\s*,\s*", value)


# ---------------------------------------------------------------------------------
# Types and validators (ConfigDef)
# ---------------------------------------------------------------------------------

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_REQUIRED = object()
_JAVA_INT = re.compile(r"^[+-]?[0-9]+$")


def _parse_number(name: str, raw: str, kind: str, lo: int, hi: int) -> int:
    s = raw.strip()
    if not _JAVA_INT.match(s) or not lo <= int(s) <= hi:
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type {kind}")
    return int(s)


def _t_int(name: str, raw: str) -> int:
    return _parse_number(name, raw, "INT", _INT_MIN, _INT_MAX)


def _t_long(name: str, raw: str) -> int:
    return _parse_number(name, raw, "LONG", _LONG_MIN, _LONG_MAX)


def _t_bool(name: str, raw: str) -> bool:
    s = raw.strip().lower()
    if s not in ("true", "false"):
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Expected value to be either true or false")
    return s == "true"


def _t_string(name: str, raw: str) -> str:
    return raw.strip()


def _t_list(name: str, raw: str) -> list[str]:
    return _as_list(raw)


def _at_least(n: int) -> Callable[[str, object], None]:
    def check(name: str, value: object) -> None:
        if value is not None and value < n:  # type: ignore[operator]
            raise ConfigError(f"Invalid value {value} for configuration {name}: Value must be at least {n}")

    return check


def _roles(name: str, value: object) -> None:
    allowed = ("broker", "controller")
    roles = list(value or [])  # type: ignore[arg-type]
    for r in roles:
        if r not in allowed:
            raise ConfigError(f"Invalid value {','.join(roles)} for configuration {name}: String must be one of: broker, controller")
    if len(set(roles)) != len(roles):
        raise ConfigError(f"Invalid value {','.join(roles)} for configuration {name}: Configuration '{name}' values must not be duplicated.")


@dataclass(frozen=True)
class _Def:
    name: str
    parse: Callable[[str, str], object]
    default: object
    check: Callable[[str, object], None] | None = None


GiB = 1024 * 1024 * 1024
MiB = 1024 * 1024

# Kafka 4.3.1's names, types, defaults and validators (checked against its ConfigDef).
DEFINITIONS: tuple[_Def, ...] = (
    _Def("node.id", _t_int, _REQUIRED, _at_least(0)),
    _Def("process.roles", _t_list, _REQUIRED, _roles),
    _Def("listeners", _t_list, ["PLAINTEXT://:9092"]),
    _Def("advertised.listeners", _t_list, None),
    _Def("controller.listener.names", _t_list, _REQUIRED),
    _Def("listener.security.protocol.map", _t_string,
         "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"),
    _Def("controller.quorum.voters", _t_list, []),
    _Def("controller.quorum.bootstrap.servers", _t_list, []),
    _Def("metadata.log.dir", _t_string, None),
    _Def("log.dirs", _t_list, None),
    _Def("log.dir", _t_list, ["/tmp/kafka-logs"]),
    _Def("controller.quorum.election.timeout.ms", _t_int, 1000, _at_least(0)),
    _Def("controller.quorum.fetch.timeout.ms", _t_int, 2000, _at_least(0)),
    _Def("controller.quorum.election.backoff.max.ms", _t_int, 1000, _at_least(0)),
    _Def("controller.quorum.request.timeout.ms", _t_int, 2000, _at_least(0)),
    _Def("controller.quorum.retry.backoff.ms", _t_int, 20, _at_least(0)),
    _Def("controller.quorum.append.linger.ms", _t_int, 25, _at_least(0)),
    _Def("controller.quorum.auto.join.enable", _t_bool, False),
    _Def("metadata.log.segment.bytes", _t_int, GiB, _at_least(8 * MiB)),
    # Kafka's internal override used by its own tests to roll tiny segments.
    _Def("internal.metadata.log.segment.bytes", _t_int, None, _at_least(12)),
    _Def("metadata.log.segment.ms", _t_long, 7 * 24 * 3600 * 1000),
    _Def("metadata.max.retention.bytes", _t_long, 100 * MiB),
    _Def("metadata.max.retention.ms", _t_long, 7 * 24 * 3600 * 1000),
    _Def("metadata.log.max.record.bytes.between.snapshots", _t_long, 20 * MiB, _at_least(1)),
    _Def("metadata.log.max.snapshot.interval.ms", _t_long, 3600 * 1000, _at_least(0)),
    _Def("metadata.max.idle.interval.ms", _t_int, 500, _at_least(0)),
    # The active controller's broker sessions (kraft_server/controller/broker_sessions.py).
    _Def("broker.session.timeout.ms", _t_int, 9000, _at_least(1)),
    # Half of it is how long a heartbeat may wait for the controller (REQUEST_TIMED_OUT).
    _Def("broker.heartbeat.interval.ms", _t_int, 2000, _at_least(1)),
    # The periodic preferred-leader election (kraft_server/controller/elections.py).
    _Def("auto.leader.rebalance.enable", _t_bool, True),
    _Def("leader.imbalance.check.interval.seconds", _t_long, 300, _at_least(1)),
    _Def("unclean.leader.election.interval.ms", _t_long, 300000, _at_least(1)),
    _Def("socket.request.max.bytes", _t_int, 100 * MiB, _at_least(1)),
    # Connection limits (kraft_server/net/limits.py), Kafka's names and defaults.
    _Def("max.connections", _t_int, 2147483647, _at_least(0)),
    _Def("max.connections.per.ip", _t_int, 2147483647, _at_least(0)),
    _Def("connections.max.idle.ms", _t_long, 600000),
    # Requests read and not yet taken up by the Ready loop (kraft_server/net/request_queue.py).
    _Def("queued.max.requests", _t_int, 500, _at_least(1)),
    # The classic group coordinator (kraft_server/api/groups), Kafka's names and defaults.
    _Def("group.initial.rebalance.delay.ms", _t_int, 3000, _at_least(0)),
    _Def("group.min.session.timeout.ms", _t_int, 6000),
    _Def("group.max.session.timeout.ms", _t_int, 1800000),
    _Def("group.max.size", _t_int, 2147483647, _at_least(1)),
    _Def("offset.metadata.max.bytes", _t_int, 4096),
    _Def("offsets.retention.minutes", _t_int, 10080, _at_least(1)),
    _Def("offsets.retention.check.interval.ms", _t_long, 600000, _at_least(1)),
    # Consumer fetch sessions (KIP-227) kept for __cluster_metadata readers.
    _Def("max.incremental.fetch.session.cache.slots", _t_int, 1000, _at_least(0)),
    # Ours, not Kafka's: HOST:PORT of an optional Prometheus text endpoint (GET /metrics)
    # exporting the raft-metrics group; unset (the default) serves none.
    _Def("kraft.metrics.prometheus.listener", _t_string, None,
         lambda name, value: parse_host_port(value, name) if value else None),
    # Ours: fence a broker at once on evidence of a crash, not only when its session
    # expires (kraft_server/controller/cluster/broker_liveness.py).
    _Def("kraft.broker.fast.fencing.enable", _t_bool, True),
    # Ours: HOST:PORT of the read-only quorum console (kraft_server/console); unset: none.
    # It shares one HTTP server with the Prometheus endpoint when both name the same address.
    _Def("kraft.console.listener", _t_string, None,
         lambda name, value: parse_host_port(value, name) if value else None),
    # Ours: ``id@host:port`` of other nodes' consoles, so a page can link to the leader's.
    _Def("kraft.console.peers", _t_list, [], lambda name, value: parse_voters(value, name)),
)
_BY_NAME = {d.name: d for d in DEFINITIONS}


def _typed(props: Mapping[str, str]) -> dict[str, object]:
    values: dict[str, object] = {}
    for d in DEFINITIONS:
        if d.name in props and props[d.name] is not None:
            value = d.parse(d.name, str(props[d.name]))
        elif d.default is _REQUIRED:
            raise ConfigError(f'Missing required configuration "{d.name}" which has no default value.')
        else:
            value = d.default
        if d.check is not None:
            d.check(d.name, value)
        values[d.name] = value
    return values


# ---------------------------------------------------------------------------------
# The typed config
# ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class KafkaConfig:
    """What the node needs from ``server.properties``, typed; ``raw`` keeps every
    property as read (unknown ones included, as Kafka logs and ignores them)."""

    node_id: int
    process_roles: tuple[str, ...]
    listeners: tuple[Endpoint, ...]
    advertised_listeners: tuple[Endpoint, ...]
    controller_listener_names: tuple[str, ...]
    listener_security_protocol_map: dict[str, str]
    quorum_voters: tuple[Voter, ...]
    quorum_bootstrap_servers: tuple[Endpoint, ...]
    metadata_log_dir: Path
    log_dirs: tuple[Path, ...]
    quorum_election_timeout_ms: int
    quorum_fetch_timeout_ms: int
    quorum_election_backoff_max_ms: int
    quorum_request_timeout_ms: int
    quorum_retry_backoff_ms: int
    quorum_append_linger_ms: int
    quorum_auto_join_enable: bool
    metadata_log_segment_bytes: int
    metadata_log_segment_ms: int
    metadata_max_retention_bytes: int
    metadata_max_retention_ms: int
    metadata_log_max_record_bytes_between_snapshots: int
    metadata_log_max_snapshot_interval_ms: int
    metadata_max_idle_interval_ms: int
    socket_request_max_bytes: int
    raw: dict[str, str] = field(default_factory=dict, compare=False, repr=False)
    values: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    # -- construction ------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path) -> "KafkaConfig":
        try:
            props = load_properties(path)
        except PropertiesSyntaxError as exc:
            raise ConfigError(f"{path}: {exc}", str(path)) from None
        return cls.from_props(props)

    @classmethod
    def from_props(cls, props: Mapping[str, object]) -> "KafkaConfig":
        raw = {str(k): str(v) for k, v in props.items()}
        v = _typed(raw)
        listeners = parse_listeners(v["listeners"], "listeners")  # type: ignore[arg-type]
        advertised = (
            parse_listeners(v["advertised.listeners"], "advertised.listeners")  # type: ignore[arg-type]
            if v["advertised.listeners"] is not None
            else []
        )
        log_dirs = v["log.dirs"] if v["log.dirs"] is not None else v["log.dir"]
        if not log_dirs:
            raise ConfigError("At least one log directory must be defined via log.dirs or log.dir.", "log.dirs")
        metadata_dir = v["metadata.log.dir"] or log_dirs[0]  # type: ignore[index]
        segment_bytes = v["internal.metadata.log.segment.bytes"] or v["metadata.log.segment.bytes"]
        config = cls(
            node_id=v["node.id"],  # type: ignore[arg-type]
            process_roles=tuple(v["process.roles"]),  # type: ignore[arg-type]
            listeners=tuple(listeners),
            advertised_listeners=tuple(advertised),
            controller_listener_names=tuple(n.upper() for n in v["controller.listener.names"]),  # type: ignore[union-attr]
            listener_security_protocol_map=_protocol_map(raw, v),
            quorum_voters=tuple(parse_voters(v["controller.quorum.voters"])),  # type: ignore[arg-type]
            quorum_bootstrap_servers=tuple(parse_bootstrap_servers(v["controller.quorum.bootstrap.servers"])),  # type: ignore[arg-type]
            metadata_log_dir=Path(metadata_dir),
            log_dirs=tuple(Path(p) for p in log_dirs),  # type: ignore[union-attr]
            quorum_election_timeout_ms=v["controller.quorum.election.timeout.ms"],  # type: ignore[arg-type]
            quorum_fetch_timeout_ms=v["controller.quorum.fetch.timeout.ms"],  # type: ignore[arg-type]
            quorum_election_backoff_max_ms=v["controller.quorum.election.backoff.max.ms"],  # type: ignore[arg-type]
            quorum_request_timeout_ms=v["controller.quorum.request.timeout.ms"],  # type: ignore[arg-type]
            quorum_retry_backoff_ms=v["controller.quorum.retry.backoff.ms"],  # type: ignore[arg-type]
            quorum_append_linger_ms=v["controller.quorum.append.linger.ms"],  # type: ignore[arg-type]
            quorum_auto_join_enable=v["controller.quorum.auto.join.enable"],  # type: ignore[arg-type]
            metadata_log_segment_bytes=segment_bytes,  # type: ignore[arg-type]
            metadata_log_segment_ms=v["metadata.log.segment.ms"],  # type: ignore[arg-type]
            metadata_max_retention_bytes=v["metadata.max.retention.bytes"],  # type: ignore[arg-type]
            metadata_max_retention_ms=v["metadata.max.retention.ms"],  # type: ignore[arg-type]
            metadata_log_max_record_bytes_between_snapshots=v["metadata.log.max.record.bytes.between.snapshots"],  # type: ignore[arg-type]
            metadata_log_max_snapshot_interval_ms=v["metadata.log.max.snapshot.interval.ms"],  # type: ignore[arg-type]
            metadata_max_idle_interval_ms=v["metadata.max.idle.interval.ms"],  # type: ignore[arg-type]
            socket_request_max_bytes=v["socket.request.max.bytes"],  # type: ignore[arg-type]
            raw=raw,
            values=v,
        )
        config._validate()
        return config

    def _validate(self) -> None:
        """Kafka's KRaft cross-checks (``KafkaConfig.validateValues``) that matter here."""
        if "controller" in self.process_roles:
            if not self.controller_listener_names:
                raise ConfigError("controller.listener.names must contain at least one value when running KRaft "
                                  "with just the controller role", "controller.listener.names")
            names = {e.name for e in self.listeners}
            for n in self.controller_listener_names:
                if n not in names:
                    raise ConfigError(
                        f"requirement failed: controller.listener.names must only contain values appearing in the 'listeners' "
                        f"configuration when running the KRaft controller role", "controller.listener.names"
                    )
        for e in (*self.listeners, *self.advertised_listeners):
            if e.name not in self.listener_security_protocol_map:
                raise ConfigError(
                    f"Invalid value {self.raw.get('listeners', '')} for configuration listeners: "
                    f"No security protocol defined for listener {e.name}"
                )

    # -- derived -------------------------------------------------------------------
    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles

    @property
    def is_static_quorum(self) -> bool:
        """``controller.quorum.voters`` set: kraft.version 0, no dynamic voters."""
        return bool(self.quorum_voters)

    def effective_advertised_listeners(self) -> tuple[Endpoint, ...]:
        """``advertised.listeners`` overrides ``listeners`` by name (Kafka's rule)."""
        adv = {e.name: e for e in self.advertised_listeners}
        return tuple(adv.get(e.name, e) for e in self.listeners) + tuple(
            e for e in self.advertised_listeners if e.name not in {l.name for l in self.listeners}
        )

    def controller_endpoints(self) -> tuple[Endpoint, ...]:
        """The advertised controller listeners, in ``controller.listener.names`` order."""
        by_name = {e.name: e for e in self.effective_advertised_listeners()}
        return tuple(by_name[n] for n in self.controller_listener_names if n in by_name)

    def __getitem__(self, name: str) -> object:
        """Any defined property by its Kafka name, typed (``config["node.id"]``)."""
        return self.values[name]


def _protocol_map(raw: Mapping[str, str], v: Mapping[str, object]) -> dict[str, str]:
    """Kafka maps unmapped controller listener names to PLAINTEXT when
    ``listener.security.protocol.map`` is left at its default."""
    out = _parse_protocol_map(v["listener.security.protocol.map"])  # type: ignore[arg-type]
    if "listener.security.protocol.map" not in raw:
        for name in v["controller.listener.names"]:  # type: ignore[union-attr]
            out.setdefault(name.upper(), "PLAINTEXT")
    return out


def _parse_protocol_map(value: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in _as_list(value):
        name, sep, proto = item.partition(":")
        if not sep or not name.strip() or not proto.strip():
            raise ConfigError(
                f"Invalid value {value} for configuration listener.security.protocol.map: "
                f"Map entry '{item}' is improperly formatted"
            )
        out[name.strip().upper()] = proto.strip().upper()
    return out
