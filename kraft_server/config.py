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

from .common.java_numbers import parse_java_integer
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


def _console_listener(name: str, value):
    if not value:
        return None
    from kraft_server.console.listener import parse_console_listener  # the console's own parser
    return parse_console_listener(value, name)


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

_REQUIRED = object()


def _parse_number(name: str, raw: str, kind: str) -> int:
    n = parse_java_integer(raw.strip(), kind)
    if n is None:
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type {kind}")
    return n


def _t_int(name: str, raw: str) -> int:
    return _parse_number(name, raw, "INT")


def _t_long(name: str, raw: str) -> int:
    return _parse_number(name, raw, "LONG")


def _t_short(name: str, raw: str) -> int:
    return _parse_number(name, raw, "SHORT")


def _t_double(name: str, raw: str) -> float:
    try:
        return float(raw.strip())
    except ValueError:
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type DOUBLE") from None


def _t_bool(name: str, raw: str) -> bool:
    s = raw.strip().lower()
    if s not in ("true", "false"):
        raise ConfigError(f"Invalid value {raw} for configuration {name}: Expected value to be either true or false")
    return s == "true"


def _t_string(name: str, raw: str) -> str:
    return raw.strip()


def _t_class(name: str, raw: str) -> str:
    """A Java class name (Kafka's CLASS type), kept as text."""
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
    """One property the node reads: its Kafka name, type (``parse``), default, validator
    and a one-line description (``docs/configuration.md`` is rendered from these by
    ``python -m tools.docs_config``). ``read_by`` names the module that reads it as text
    where it is used (typed there, not by :func:`_typed`); ``per_listener``: it may also be
    given as ``listener.name.<listener>.<name>``."""

    name: str
    parse: Callable[[str, str], object]
    default: object
    check: Callable[[str, object], None] | None = None
    doc: str = ""
    read_by: str | None = None
    per_listener: bool = False


def _t_password(name: str, raw: str) -> str:
    return raw.strip()


GiB = 1024 * 1024 * 1024
MiB = 1024 * 1024
_SECURITY = "kraft_server/security"

# Kafka 4.3.1's names, types, defaults and validators (checked against its ConfigDef).
DEFINITIONS: tuple[_Def, ...] = (
    # -- the node and its listeners
    _Def("node.id", _t_int, _REQUIRED, _at_least(0), doc="This node's id, unique in the cluster."),
    _Def("process.roles", _t_list, _REQUIRED, _roles,
         doc="Must include `controller`: this node is a KRaft controller (start-up stops otherwise)."),
    _Def("listeners", _t_list, ["PLAINTEXT://:9092"],
         doc="`NAME://host:port` of every listener; an empty host means all interfaces."),
    _Def("advertised.listeners", _t_list, None,
         doc="Addresses given to others, by listener name; unset: `listeners`."),
    _Def("controller.listener.names", _t_list, _REQUIRED,
         doc="Listeners that are controller listeners; every other listener is a client listener."),
    _Def("listener.security.protocol.map", _t_string,
         "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
         doc="`NAME:PROTOCOL` pairs; unmapped controller listeners are PLAINTEXT while this is left at its default."),
    # -- the quorum
    _Def("controller.quorum.voters", _t_list, [],
         doc="`id@host:port` of every voter: a static quorum (kraft.version 0). Leave empty for a dynamic quorum."),
    _Def("controller.quorum.bootstrap.servers", _t_list, [],
         doc="`host:port` of controllers to find the quorum through (a dynamic quorum)."),
    _Def("controller.quorum.election.timeout.ms", _t_int, 1000, _at_least(0),
         doc="How long a follower waits without a leader before it stands for election."),
    _Def("controller.quorum.fetch.timeout.ms", _t_int, 2000, _at_least(0),
         doc="How long a follower waits without a successful Fetch before it looks for a new leader."),
    _Def("controller.quorum.election.backoff.max.ms", _t_int, 1000, _at_least(0),
         doc="The longest random back-off before a new election after a lost one."),
    _Def("controller.quorum.request.timeout.ms", _t_int, 2000, _at_least(0),
         doc="How long a Raft request waits for its answer."),
    _Def("controller.quorum.retry.backoff.ms", _t_int, 20, _at_least(0),
         doc="The pause before a failed Raft request is retried."),
    _Def("controller.quorum.append.linger.ms", _t_int, 25, _at_least(0),
         doc="How long the leader gathers proposals into one batch before it appends them."),
    _Def("controller.quorum.auto.join.enable", _t_bool, False,
         doc="An observer adds itself as a voter (AddRaftVoter) once caught up."),
    # -- the metadata log
    _Def("metadata.log.dir", _t_string, None,
         doc="Directory of the metadata log, snapshots and `quorum-state`; unset: the first of the log directories."),
    _Def("log.dirs", _t_list, None, doc="Log directories; each is formatted and checked at start-up."),
    _Def("log.dir", _t_list, ["/tmp/kafka-logs"], doc="Used when `log.dirs` is unset."),
    _Def("metadata.log.segment.bytes", _t_int, GiB, _at_least(8 * MiB),
         doc="Size at which the metadata log rolls to a new segment."),
    # Kafka's internal override used by its own tests to roll tiny segments.
    _Def("internal.metadata.log.segment.bytes", _t_int, None, _at_least(12),
         doc="Kafka's internal override of `metadata.log.segment.bytes` (tests roll tiny segments with it)."),
    _Def("metadata.log.segment.ms", _t_long, 7 * 24 * 3600 * 1000,
         doc="Age at which the metadata log rolls to a new segment."),
    _Def("metadata.max.retention.bytes", _t_long, 100 * MiB,
         doc="Log size past which segments covered by a snapshot are deleted."),
    _Def("metadata.max.retention.ms", _t_long, 7 * 24 * 3600 * 1000,
         doc="Age past which segments covered by a snapshot are deleted."),
    _Def("metadata.log.max.record.bytes.between.snapshots", _t_long, 20 * MiB, _at_least(1),
         doc="Bytes of new records that trigger a snapshot."),
    _Def("metadata.log.max.snapshot.interval.ms", _t_long, 3600 * 1000, _at_least(0),
         doc="Time after which new records trigger a snapshot (0: never by time)."),
    _Def("metadata.max.idle.interval.ms", _t_int, 500, _at_least(0),
         doc="The active controller writes a NoOpRecord this often, so the log never idles."),
    # -- the active controller and its brokers
    # The active controller's broker sessions (kraft_server/controller/cluster/broker_sessions.py).
    _Def("broker.session.timeout.ms", _t_int, 9000, _at_least(1),
         doc="A broker without a heartbeat for this long is fenced."),
    # Half of it is how long a heartbeat may wait for the controller (REQUEST_TIMED_OUT).
    _Def("broker.heartbeat.interval.ms", _t_int, 2000, _at_least(1),
         doc="Brokers' heartbeat interval; half of it is a heartbeat's deadline in the controller's queue."),
    # The periodic preferred-leader election (kraft_server/controller/replication/elections.py).
    _Def("auto.leader.rebalance.enable", _t_bool, True,
         doc="Move leaderships back to preferred replicas periodically."),
    _Def("leader.imbalance.check.interval.seconds", _t_long, 300, _at_least(1),
         doc="How often the preferred-leader election runs."),
    _Def("unclean.leader.election.interval.ms", _t_long, 300000, _at_least(1),
         doc="How often leaderless partitions of topics with `unclean.leader.election.enable=true` get a leader."),
    # Ours: fence a broker at once on evidence of a crash, not only when its session
    # expires (kraft_server/controller/cluster/broker_liveness.py).
    _Def("kraft.broker.fast.fencing.enable", _t_bool, True,
         doc="Ours: fence a crashed broker at once (its connections closed and its listener refusing)."),
    # -- connections and requests
    _Def("socket.request.max.bytes", _t_int, 100 * MiB, _at_least(1), doc="The largest request accepted."),
    # Connection limits (kraft_server/net/limits.py), Kafka's names and defaults.
    _Def("max.connections", _t_int, 2147483647, _at_least(0), doc="Connections accepted at once, all listeners."),
    _Def("max.connections.per.ip", _t_int, 2147483647, _at_least(0), doc="Connections accepted at once from one address."),
    _Def("connections.max.idle.ms", _t_long, 600000,
         doc="An idle connection, or an unfinished TLS or SASL handshake, is closed after this."),
    # Requests read and not yet taken up by the Ready loop (kraft_server/net/request_queue.py).
    _Def("queued.max.requests", _t_int, 500, _at_least(1),
         doc="Requests read and not yet taken up; past this the node stops reading sockets."),
    # Consumer fetch sessions (KIP-227) kept for __cluster_metadata readers.
    _Def("max.incremental.fetch.session.cache.slots", _t_int, 1000, _at_least(0),
         doc="Incremental fetch sessions kept for consumers (least recently used evicted)."),
    # -- the classic group coordinator (kraft_server/api/groups), Kafka's names and defaults
    _Def("group.initial.rebalance.delay.ms", _t_int, 3000, _at_least(0),
         doc="How long the first rebalance of an empty group waits for more members."),
    _Def("group.min.session.timeout.ms", _t_int, 6000, doc="The shortest session timeout a member may ask for."),
    _Def("group.max.session.timeout.ms", _t_int, 1800000, doc="The longest session timeout a member may ask for."),
    _Def("group.max.size", _t_int, 2147483647, _at_least(1), doc="Members a group may have."),
    _Def("offset.metadata.max.bytes", _t_int, 4096, doc="The longest metadata string of a committed offset."),
    _Def("offsets.retention.minutes", _t_int, 10080, _at_least(1),
         doc="Committed offsets of a group Empty this long expire."),
    _Def("offsets.retention.check.interval.ms", _t_long, 600000, _at_least(1),
         doc="How often expired offsets are removed."),
    # -- ours: HTTP endpoints
    # Ours, not Kafka's: HOST:PORT of an optional Prometheus text endpoint (GET /metrics)
    # exporting the raft-metrics group; unset (the default) serves none.
    _Def("kraft.metrics.prometheus.listener", _t_string, None,
         lambda name, value: parse_host_port(value, name) if value else None,
         doc="Ours: `HOST:PORT` of a Prometheus endpoint (`GET /metrics`); unset: none."),
    # Ours: HOST:PORT of the read-only quorum console (kraft_server/console); unset: none.
    # It shares one HTTP server with the Prometheus endpoint when both name the same address.
    _Def("kraft.console.listener", _t_string, None, _console_listener,
         doc="Ours: `[PROTOCOL://]HOST:PORT` of the read-only quorum console; unset: none. `PLAINTEXT` "
             "(the default: HTTP, no login), `SSL` (HTTPS, mutual TLS with `ssl.client.auth`) or `SASL_SSL` "
             "(HTTPS and a Basic login of the node's PLAIN/SCRAM users); `ssl.*`/`sasl.*` as for a "
             "listener named `CONSOLE`."),
    # Ours: ``id@host:port`` of other nodes' consoles, so a page can link to the leader's.
    _Def("kraft.console.peers", _t_list, [], lambda name, value: parse_voters(value, name),
         doc="Ours: `id@host:port` of the other nodes' consoles, so a page links to the leader's."),
    # -- security: read as text per listener (kraft_server/security), Kafka's names
    _Def("ssl.keystore.type", _t_string, "JKS", read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="`PEM` or `PKCS12`; a JKS store stops start-up with the `keytool` command that converts it."),
    _Def("ssl.keystore.location", _t_string, None, read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="The key store file (PEM: one file with the key and its chain)."),
    _Def("ssl.keystore.password", _t_password, None, read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="Opens a PKCS12 key store."),
    _Def("ssl.keystore.key", _t_password, None, read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="The private key as inline PEM (needs `ssl.keystore.type=PEM`)."),
    _Def("ssl.keystore.certificate.chain", _t_password, None, read_by=f"{_SECURITY}/keystores.py",
         per_listener=True, doc="The certificate chain as inline PEM (needs `ssl.keystore.type=PEM`)."),
    _Def("ssl.key.password", _t_password, None, read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="Decrypts an encrypted PEM private key."),
    _Def("ssl.truststore.type", _t_string, "JKS", read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="`PEM` or `PKCS12`."),
    _Def("ssl.truststore.location", _t_string, None, read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="The trust store file; with no trust store the system's roots are trusted."),
    _Def("ssl.truststore.password", _t_password, None, read_by=f"{_SECURITY}/keystores.py", per_listener=True,
         doc="Opens a PKCS12 trust store."),
    _Def("ssl.truststore.certificates", _t_password, None, read_by=f"{_SECURITY}/keystores.py",
         per_listener=True, doc="Trusted certificates as inline PEM."),
    _Def("ssl.client.auth", _t_string, "none", read_by=f"{_SECURITY}/tls.py", per_listener=True,
         doc="`none`, `requested` or `required`: whether clients must show a certificate."),
    _Def("ssl.enabled.protocols", _t_list, ["TLSv1.2", "TLSv1.3"], read_by=f"{_SECURITY}/tls.py",
         per_listener=True, doc="TLS versions allowed."),
    _Def("ssl.cipher.suites", _t_list, None, read_by=f"{_SECURITY}/tls.py", per_listener=True,
         doc="Cipher suites by IANA name; unset: the TLS library's defaults."),
    _Def("ssl.endpoint.identification.algorithm", _t_string, "https", read_by=f"{_SECURITY}/tls.py",
         per_listener=True, doc="`https` checks a peer controller's host name; empty turns the check off."),
    _Def("ssl.principal.mapping.rules", _t_string, "DEFAULT", read_by=f"{_SECURITY}/listeners.py",
         per_listener=True, doc="`RULE:<regex>/<replacement>/[LU]` rules mapping a certificate's subject to a user name."),
    _Def("sasl.enabled.mechanisms", _t_list, ["GSSAPI"], read_by=f"{_SECURITY}/sasl_config.py",
         per_listener=True,
         doc="SASL mechanisms of a SASL listener: `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`, `OAUTHBEARER` "
             "(GSSAPI is not served)."),
    _Def("sasl.jaas.config", _t_password, None, read_by=f"{_SECURITY}/sasl_config.py", per_listener=True,
         doc="The JAAS entry; also `listener.name.<l>.<mechanism>.sasl.jaas.config`."),
    _Def("sasl.mechanism.controller.protocol", _t_string, "GSSAPI", read_by=f"{_SECURITY}/sasl_config.py",
         doc="The mechanism this node uses when it dials other controllers."),
    _Def("connections.max.reauth.ms", _t_long, 0, read_by=f"{_SECURITY}/sasl_config.py", per_listener=True,
         doc="Lifetime of a SASL session (0: no limit); also per listener and mechanism."),
    _Def("sasl.server.callback.handler.class", _t_class, None, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="Unset, or Kafka's `OAuthBearerValidatorCallbackHandler` for OAUTHBEARER."),
    _Def("sasl.oauthbearer.jwks.endpoint.url", _t_string, None, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="OAUTHBEARER: the JWKS (`https:`, `http:` or `file:`) whose keys verify tokens."),
    _Def("sasl.oauthbearer.jwks.endpoint.refresh.ms", _t_long, 3600000, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="How often the JWKS is fetched again; an unknown key id also fetches it."),
    _Def("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", _t_long, 100, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="First wait before a failed JWKS fetch is retried; doubled each time."),
    _Def("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", _t_long, 10000,
         read_by=f"{_SECURITY}/oauth_config.py", per_listener=True, doc="Longest wait between JWKS retries."),
    _Def("sasl.oauthbearer.expected.audience", _t_list, [], read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="Audiences a token's `aud` must name one of."),
    _Def("sasl.oauthbearer.expected.issuer", _t_string, None, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="The issuer a token's `iss` must equal."),
    _Def("sasl.oauthbearer.allow.unverified.audience", _t_bool, False, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="Accept tokens without checking `aud` (else the expected audience is required)."),
    _Def("sasl.oauthbearer.allow.unverified.issuer", _t_bool, False, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="Accept tokens without checking `iss` (else the expected issuer is required)."),
    _Def("sasl.oauthbearer.clock.skew.seconds", _t_int, 30, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="Leeway for a token's `exp` and `nbf`."),
    _Def("sasl.oauthbearer.scope.claim.name", _t_string, "scope", read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="The claim holding a token's scopes."),
    _Def("sasl.oauthbearer.sub.claim.name", _t_string, "sub", read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="The claim naming a token's principal (`User:<value>`)."),
    _Def("sasl.login.callback.handler.class", _t_class, None, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="Kafka's `OAuthBearerLoginCallbackHandler` when this node logs in with OAUTHBEARER."),
    _Def("sasl.oauthbearer.token.endpoint.url", _t_string, None, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="OAUTHBEARER login: the OAuth token endpoint (client credentials grant)."),
    _Def("sasl.oauthbearer.client.credentials.client.id", _t_string, None, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="OAUTHBEARER login: the client id (else the JAAS option `clientId`)."),
    _Def("sasl.oauthbearer.client.credentials.client.secret", _t_password, None,
         read_by=f"{_SECURITY}/oauth_config.py", per_listener=True,
         doc="OAUTHBEARER login: the client secret (else the JAAS option `clientSecret`)."),
    _Def("sasl.oauthbearer.scope", _t_string, None, read_by=f"{_SECURITY}/oauth_config.py", per_listener=True,
         doc="OAUTHBEARER login: the scope asked for (else the JAAS option `scope`)."),
    _Def("sasl.login.retry.backoff.ms", _t_long, 100, read_by=f"{_SECURITY}/oauth_config.py", per_listener=True,
         doc="First wait before a failed token request is retried; doubled each time."),
    _Def("sasl.login.retry.backoff.max.ms", _t_long, 10000, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="Longest wait between token request retries."),
    _Def("sasl.login.refresh.window.factor", _t_double, 0.8, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="OAUTHBEARER login: the share of a token's life (0.5 to 1.0) after which it is renewed."),
    _Def("sasl.login.refresh.window.jitter", _t_double, 0.05, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="OAUTHBEARER login: up to this share (0 to 0.25) is added at random to the factor."),
    _Def("sasl.login.refresh.min.period.seconds", _t_short, 60, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="OAUTHBEARER login: the least wait before a renewal (0 to 900)."),
    _Def("sasl.login.refresh.buffer.seconds", _t_short, 300, read_by=f"{_SECURITY}/oauth_config.py",
         per_listener=True, doc="OAUTHBEARER login: renew at least this long before `exp` (0 to 3600); both "
                                "margins are ignored for a token that expires sooner than their sum."),
    _Def("authorizer.class.name", _t_string, "", read_by=f"{_SECURITY}/authorizer.py",
         doc="`org.apache.kafka.metadata.authorizer.StandardAuthorizer` turns ACL checks on; empty: none."),
    _Def("super.users", _t_string, "", read_by=f"{_SECURITY}/authorizer.py",
         doc="Principals allowed everything, separated by `;` (`User:a;User:b`)."),
    _Def("allow.everyone.if.no.acl.found", _t_bool, False, read_by=f"{_SECURITY}/authorizer.py",
         doc="Allow access to a resource that has no ACL."),
    # -- delegation tokens (kraft_server/controller/tokens), Kafka's DelegationTokenManagerConfigs
    _Def("delegation.token.secret.key", _t_password, None,
         doc="Signs delegation tokens (HMAC-SHA512); unset or empty: tokens are disabled. The same on every node."),
    _Def("delegation.token.max.lifetime.ms", _t_long, 7 * 24 * 3_600_000, _at_least(1),
         doc="A token's longest life; renewals never go past it."),
    _Def("delegation.token.expiry.time.ms", _t_long, 24 * 3_600_000, _at_least(1),
         doc="How long a token lives from its creation or last renewal."),
    _Def("delegation.token.expiry.check.interval.ms", _t_long, 3_600_000, _at_least(1),
         doc="How often the active controller removes expired tokens."),
)
_BY_NAME = {d.name: d for d in DEFINITIONS}


def _typed(props: Mapping[str, str]) -> dict[str, object]:
    values: dict[str, object] = {}
    for d in DEFINITIONS:
        if d.read_by is not None:  # read as text where it is used
            continue
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
