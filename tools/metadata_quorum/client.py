"""A small blocking admin client: the part of Kafka's ``KafkaAdminClient`` that
``kafka-metadata-quorum`` uses, over our generated codecs.

What it does on the wire, following the Java admin client of Kafka 4.3.1:

- Every new connection opens with ApiVersions (v4, falling back to what the
  server lists when it answers UNSUPPORTED_VERSION); each later request uses
  ``min(our max, server max)``. DescribeQuorum therefore goes out at v3 to our
  node (``CommittedVoters``) and at v2 to Kafka.
- ``--bootstrap-controller``: metadata comes from DescribeCluster with
  ``EndpointType=2`` sent to a bootstrap controller; its ``ControllerId`` names
  the active controller, and every call goes there. NOT_CONTROLLER, and
  NOT_LEADER_OR_FOLLOWER (a follower controller answering), drop the cached
  controller and refresh before the retry (``handleNotControllerError``).
- ``--bootstrap-server``: metadata comes from Metadata (``Topics=[]``) sent to a
  bootstrap broker; calls go to a broker, which forwards them to the controller.
- A call lives until ``default.api.timeout.ms`` (60 s); one request waits at most
  ``request.timeout.ms`` (30 s), a connection attempt ``socket.connection.setup.timeout.ms``
  (10 s). A failed connection is warned about at once, once per address; when no
  bootstrap address ever answered, the call ends with one line on what to check
  (:mod:`.reachability`) instead of Kafka's "Timed out waiting for a node assignment". Retriable failures back off exponentially from
  ``retry.backoff.ms`` (100 ms) to ``retry.backoff.max.ms`` (1 s).
- DescribeQuorum retries any retriable error (its handler throws). AddRaftVoter
  and RemoveRaftVoter retry only the not-controller errors above; any other
  error code completes the call with that error, as in Java. UnregisterController
  also retries REQUEST_TIMED_OUT.

Only PLAINTEXT is spoken; other ``security.protocol`` values are refused.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from wire.errors import ErrorCode
from wire.headers import decode_response
from wire.messages import (
    AddRaftVoterRequest, ApiVersionsRequest, DescribeClusterRequest, DescribeConfigsRequest,
    DescribeQuorumRequest, MetadataRequest, RemoveRaftVoterRequest, UnregisterControllerRequest)
from wire.messages import add_raft_voter_request as _add
from wire.messages import describe_configs_request as _dc
from wire.messages import describe_quorum_request as _dq

from tools.blocking_client import BlockingConnection

from .errors import ClientTimeout, KafkaApiError, TerseError
from .reachability import Reachability, socket_error_text

API_VERSIONS = ApiVersionsRequest.API_KEY
METADATA = MetadataRequest.API_KEY
DESCRIBE_QUORUM = DescribeQuorumRequest.API_KEY
DESCRIBE_CLUSTER = DescribeClusterRequest.API_KEY
ADD_RAFT_VOTER = AddRaftVoterRequest.API_KEY
REMOVE_RAFT_VOTER = RemoveRaftVoterRequest.API_KEY
DESCRIBE_CONFIGS = DescribeConfigsRequest.API_KEY
UNREGISTER_CONTROLLER = UnregisterControllerRequest.API_KEY  # 94, Kafka 4.4.0
BROKER_RESOURCE = 4  # ConfigResource.Type.BROKER

# The highest version of each request this client speaks (our codecs' range).
CLIENT_MAX = {API_VERSIONS: 4, METADATA: 13, DESCRIBE_QUORUM: 3, DESCRIBE_CLUSTER: 2,
              ADD_RAFT_VOTER: 1, REMOVE_RAFT_VOTER: 0, DESCRIBE_CONFIGS: 4, UNREGISTER_CONTROLLER: 0}

METADATA_TOPIC = "__cluster_metadata"
KRAFT_VERSION = "kraft.version"
CONTROLLER_ENDPOINT_TYPE = 2
BROKER_ENDPOINT_TYPE = 1
SOFTWARE_NAME = "kraft-metadata-quorum"
SOFTWARE_VERSION = "0.1.0"


class _Unreachable(Exception):
    """The connection failed or broke; the call may retry elsewhere. ``reason``
    is set when the connection could not be made at all."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason


def parse_host_port(text: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port``, as ``ClientUtils.parseAndValidateAddresses``."""
    text = text.strip()
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise TerseError(f"Invalid url in bootstrap.servers: {text}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def parse_bootstrap(text: str) -> list[tuple[str, int]]:
    addresses = [parse_host_port(part) for part in text.split(",") if part.strip()]
    if not addresses:
        raise TerseError("No resolvable bootstrap urls given in bootstrap.servers")
    return addresses


@dataclass(frozen=True)
class Replica:
    replica_id: int
    directory_id: uuid.UUID
    log_end_offset: int
    last_fetch_timestamp: int | None  # None: -1 on the wire (unknown)
    last_caught_up_timestamp: int | None

    @property
    def key(self) -> tuple[int, uuid.UUID]:
        return self.replica_id, self.directory_id


@dataclass(frozen=True)
class Endpoint:
    name: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


@dataclass
class QuorumInfo:
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: list[Replica]
    observers: list[Replica]
    committed_voters: list[Replica] | None  # None: the server sent none (v2, or unknown HWM)
    nodes: dict[int, list[Endpoint]] = field(default_factory=dict)
    version: int = 0

    def leader(self) -> Replica:
        for v in self.voters:
            if v.replica_id == self.leader_id:
                return v
        # Java: voters().stream().filter(...).findFirst().get()
        raise TerseError("No value present")


@dataclass(frozen=True)
class NodeAddress:
    node_id: int
    host: str
    port: int


@dataclass
class ClusterMetadata:
    cluster_id: str | None
    controller_id: int
    nodes: list[NodeAddress]


class Connection:
    """One blocking connection: ApiVersions first, then numbered requests."""

    def __init__(self, host: str, port: int, client_id: str, timeout_s: float,
                 connect_timeout_s: float | None = None):
        self.host, self.port = host, port
        self.api_versions: dict[int, tuple[int, int]] = {}
        # Feature levels the server finalized, from ApiVersions v3+ (None before v3).
        # Kafka lists a feature only above level 0 (ApiVersionsResponse), so absent is 0.
        self.finalized_features: dict[str, int] | None = None
        try:
            self._conn = BlockingConnection(host, port, timeout=timeout_s, connect_timeout=connect_timeout_s,
                                            client_id=client_id, nodelay=True)
        except OSError as exc:
            reason = socket_error_text(exc)
            raise _Unreachable(f"{host}:{port}: {reason}", reason) from exc
        self.handshake()

    def close(self) -> None:
        self._conn.close()

    def _exchange(self, version: int, body):
        try:
            self._conn.send(body, version)
            return self._conn.read_frame()
        except OSError as exc:  # ConnectionClosed included
            raise _Unreachable(f"{self.host}:{self.port}: {exc}") from exc

    def handshake(self) -> None:
        """ApiVersions: the server's request ranges and finalized features (asked again
        by a caller that needs the levels as they are now)."""
        request = ApiVersionsRequest(client_software_name=SOFTWARE_NAME,
                                     client_software_version=SOFTWARE_VERSION)
        version = CLIENT_MAX[API_VERSIONS]
        for _ in range(2):
            frame = self._exchange(version, request)
            try:
                _, body = decode_response(frame, API_VERSIONS, version)
            except Exception:
                _, body = decode_response(frame, API_VERSIONS, 0)  # an error answer is v0
            if body.error_code == ErrorCode.UNSUPPORTED_VERSION:
                listed = [k.max_version for k in body.api_keys if k.api_key == API_VERSIONS]
                version = min(listed[0], CLIENT_MAX[API_VERSIONS]) if listed else 0
                continue
            if body.error_code:
                raise KafkaApiError(body.error_code)
            self.api_versions = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
            if version >= 3:
                self.finalized_features = {f.name: f.max_version_level for f in body.finalized_features}
            return
        raise KafkaApiError(ErrorCode.UNSUPPORTED_VERSION)

    def version_for(self, api_key: int) -> int:
        """``min(our max, server max)``; UNSUPPORTED_VERSION if the ranges miss."""
        server = self.api_versions.get(api_key)
        ours = CLIENT_MAX[api_key]
        if server is None or server[0] > ours:
            raise KafkaApiError(ErrorCode.UNSUPPORTED_VERSION,
                                f"The node does not support {_API_NAMES.get(api_key, api_key)}")
        return min(ours, server[1])

    def supports(self, api_key: int) -> bool:
        return api_key in self.api_versions

    def request(self, api_key: int, body, version: int | None = None):
        if version is None:
            version = self.version_for(api_key)
        frame = self._exchange(version, body)
        _, response = decode_response(frame, api_key, version)
        return response, version


_API_NAMES = {DESCRIBE_QUORUM: "DESCRIBE_QUORUM", DESCRIBE_CLUSTER: "DESCRIBE_CLUSTER",
              ADD_RAFT_VOTER: "ADD_RAFT_VOTER", REMOVE_RAFT_VOTER: "REMOVE_RAFT_VOTER",
              METADATA: "METADATA", DESCRIBE_CONFIGS: "DESCRIBE_CONFIGS",
              UNREGISTER_CONTROLLER: "UNREGISTER_CONTROLLER"}


class _RetryNow(Exception):
    """A retriable failure: back off, maybe refresh metadata, and try again."""

    def __init__(self, error: Exception, refresh: bool):
        super().__init__(str(error))
        self.error = error
        self.refresh = refresh


def _int_config(config: dict[str, str], key: str, default: int) -> int:
    try:
        return int(config.get(key, default))
    except ValueError:
        raise TerseError(f"Invalid value {config[key]} for configuration {key}: Not a number of type INT") from None


class AdminClient:
    """``Admin.create(props)`` reduced to the calls the tool makes."""

    def __init__(self, bootstrap: str, *, controllers: bool, config: dict[str, str] | None = None):
        config = dict(config or {})
        protocol = config.get("security.protocol", "PLAINTEXT").upper()
        if protocol != "PLAINTEXT":
            raise TerseError(f"security.protocol={protocol} is not supported by this tool (PLAINTEXT only)")
        self.bootstrap = parse_bootstrap(bootstrap)
        self.controllers = controllers
        self.client_id = config.get("client.id", "adminclient-1")
        self.api_timeout_ms = _int_config(config, "default.api.timeout.ms", 60000)
        self.request_timeout_ms = _int_config(config, "request.timeout.ms", 30000)
        self.backoff_ms = _int_config(config, "retry.backoff.ms", 100)
        self.backoff_max_ms = _int_config(config, "retry.backoff.max.ms", 1000)
        self.connect_timeout_ms = _int_config(config, "socket.connection.setup.timeout.ms", 10000)
        self.reach = Reachability(controllers, self.api_timeout_ms)
        self._conns: dict[tuple[str, int], Connection] = {}
        self._metadata: ClusterMetadata | None = None
        self._voter_endpoints: dict[int, tuple[str, int]] = {}  # from DescribeQuorum's Nodes

    # -- connections and metadata ---------------------------------------------------
    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def __enter__(self) -> "AdminClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _connect(self, host: str, port: int) -> Connection:
        conn = self._conns.get((host, port))
        if conn is None:
            try:
                conn = Connection(host, port, self.client_id, self.request_timeout_ms / 1000,
                                  min(self.connect_timeout_ms, self.request_timeout_ms) / 1000)
            except _Unreachable as exc:
                if exc.reason is not None:
                    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
                    self.reach.failed(address, exc.reason, bootstrap=(host, port) in self.bootstrap)
                raise
            self.reach.connected()
            self._conns[(host, port)] = conn
        return conn

    def _drop(self, conn: Connection) -> None:
        conn.close()
        self._conns.pop((conn.host, conn.port), None)

    def _fetch_metadata(self) -> ClusterMetadata:
        """Ask the bootstrap nodes, one after the other, for the cluster's nodes.

        With several bootstrap controllers, one that knows no active controller
        (a removed voter that stopped following, a node mid-election) does not end
        the search: the next one may know it."""
        last: Exception | None = None
        fallback: ClusterMetadata | None = None
        for host, port in self.bootstrap:
            try:
                conn = self._connect(host, port)
                if self.controllers:
                    body, _ = conn.request(DESCRIBE_CLUSTER, DescribeClusterRequest(
                        include_cluster_authorized_operations=False,
                        endpoint_type=CONTROLLER_ENDPOINT_TYPE))
                    if body.error_code:
                        raise KafkaApiError(body.error_code, body.error_message)
                    md = ClusterMetadata(body.cluster_id, body.controller_id,
                                         [NodeAddress(b.broker_id, b.host, b.port) for b in body.brokers])
                    if any(n.node_id == md.controller_id for n in md.nodes):
                        return md
                    if fallback is None or (fallback.controller_id < 0 <= md.controller_id):
                        fallback = md  # prefer an answer that at least names the controller
                    continue
                body, _ = conn.request(METADATA, MetadataRequest(topics=[], allow_auto_topic_creation=True))
                return ClusterMetadata(body.cluster_id, body.controller_id,
                                       [NodeAddress(b.node_id, b.host, b.port) for b in body.brokers])
            except _Unreachable as exc:
                last = exc
                self._conns.pop((host, port), None)
        if fallback is not None:
            return fallback
        raise _RetryNow(last or _Unreachable("no bootstrap address"), refresh=True)

    def _target(self) -> Connection:
        """The node a call goes to: the active controller, or any broker."""
        if self._metadata is None:
            self._metadata = self._fetch_metadata()
        md = self._metadata
        if self.controllers:
            chosen = [n for n in md.nodes if n.node_id == md.controller_id]
            if not chosen:
                chosen = self._find_unregistered_leader()
        else:
            chosen = list(md.nodes)
        if not chosen:
            self._metadata = None
            raise _RetryNow(_Unreachable("no node assignment yet"), refresh=True)
        last: Exception | None = None
        for node in chosen:
            try:
                return self._connect(node.host, node.port)
            except _Unreachable as exc:
                last = exc
        self._metadata = None
        raise _RetryNow(last, refresh=True)

    def _find_unregistered_leader(self) -> list[NodeAddress]:
        """The Raft leader, asked directly, when DescribeCluster cannot name it.

        A Kafka controller lists and names only registered controllers (KIP-919),
        so one that never registered is invisible to DescribeCluster: a Kafka
        controller that joined a quorum led by our node (which does not take
        ControllerRegistration) and then became leader is one. Kafka's tool then
        times out; we ask the voters we learnt from earlier DescribeQuorum answers,
        and the bootstrap controllers, which of them leads (DescribeQuorum only
        succeeds on the leader)."""
        candidates = list(dict.fromkeys([*self._voter_endpoints.values(), *self.bootstrap]))
        for host, port in candidates:
            try:
                conn = self._connect(host, port)
                body, version = conn.request(DESCRIBE_QUORUM, _describe_quorum_request())
                info = _quorum_info(body, version)
            except (_Unreachable, KafkaApiError):
                continue
            return [NodeAddress(info.leader_id, host, port)]
        return []

    # -- the retry loop ---------------------------------------------------------------
    def _call(self, name: str, attempt, deadline_s: float | None = None):
        """Run ``attempt(conn)`` until it returns, fails for good, or time runs out."""
        start = time.monotonic()
        deadline = deadline_s if deadline_s is not None else start + self.api_timeout_ms / 1000
        tries = 0
        assigned = False
        last: Exception | None = None
        while True:
            conn = None
            try:
                conn = self._target()
                assigned = True
                tries += 1
                return attempt(conn, max(0, int((deadline - time.monotonic()) * 1000)))
            except _Unreachable as exc:
                last = exc
                if conn is not None:
                    self._drop(conn)
                self._metadata = None
            except _RetryNow as exc:
                last = exc.error
                if exc.refresh:
                    self._metadata = None
            backoff = min(self.backoff_max_ms, self.backoff_ms * (2 ** max(0, tries - 1))) / 1000
            if time.monotonic() + backoff >= deadline:
                break
            time.sleep(backoff)  # retry backoff, as the Java client's
        now_ms = int(time.time() * 1000)
        if not assigned:
            if not self.reach.reached and self.reach.failures:
                raise self.reach.give_up()
            raise ClientTimeout(f"Timed out waiting for a node assignment. Call: {name}")
        detail = f": {last.java_text()}" if isinstance(last, KafkaApiError) else (f" ({last})" if last else "")
        raise ClientTimeout(f"Call(callName={name}, tries={tries}) timed out at {now_ms} "
                            f"after {tries} attempt(s){detail}")

    def _not_controller(self, code: int) -> bool:
        return code == ErrorCode.NOT_CONTROLLER or (
            self.controllers and code == ErrorCode.NOT_LEADER_OR_FOLLOWER)

    # -- the calls --------------------------------------------------------------------
    def describe_cluster(self) -> ClusterMetadata:
        def attempt(conn: Connection, _remaining: int) -> ClusterMetadata:
            endpoint_type = CONTROLLER_ENDPOINT_TYPE if self.controllers else BROKER_ENDPOINT_TYPE
            body, _ = conn.request(DESCRIBE_CLUSTER, DescribeClusterRequest(
                include_cluster_authorized_operations=False, endpoint_type=endpoint_type))
            if body.error_code:
                err = KafkaApiError(body.error_code, body.error_message)
                if self._not_controller(body.error_code) or err.retriable:
                    raise _RetryNow(err, refresh=True)
                raise err
            return ClusterMetadata(body.cluster_id, body.controller_id,
                                   [NodeAddress(b.broker_id, b.host, b.port) for b in body.brokers])
        return self._call("describeCluster", attempt)

    def registered_controllers_at(self, host: str, port: int) -> ClusterMetadata:
        """DescribeCluster (controller endpoints) asked once of the controller at
        ``host:port``: the controllers registered (KIP-919) on the listener it was
        asked on. Raises KafkaApiError for an error answer, ``OSError`` when the
        address cannot be reached."""
        try:
            conn = self._connect(host, port)
            body, _ = conn.request(DESCRIBE_CLUSTER, DescribeClusterRequest(
                include_cluster_authorized_operations=False, endpoint_type=CONTROLLER_ENDPOINT_TYPE))
        except _Unreachable as exc:
            raise OSError(exc.reason or str(exc)) from None
        if body.error_code:
            raise KafkaApiError(body.error_code, body.error_message)
        return ClusterMetadata(body.cluster_id, body.controller_id,
                               [NodeAddress(b.broker_id, b.host, b.port) for b in body.brokers])

    def describe_quorum(self, deadline_s: float | None = None) -> QuorumInfo:
        return self._call("describeMetadataQuorum", self._describe_quorum_once, deadline_s)

    def _describe_quorum_once(self, conn: Connection, _remaining: int) -> QuorumInfo:
        body, version = conn.request(DESCRIBE_QUORUM, _describe_quorum_request())
        codes = [body.error_code] + [p.error_code for t in body.topics for p in t.partitions]
        if any(self._not_controller(c) for c in codes):
            code = next(c for c in codes if self._not_controller(c))
            raise _RetryNow(KafkaApiError(code), refresh=True)
        try:
            info = _quorum_info(body, version)
        except KafkaApiError as err:
            if err.retriable:
                raise _RetryNow(err, refresh=False) from None
            raise
        for node_id, endpoints in info.nodes.items():
            if endpoints:
                self._voter_endpoints[node_id] = (endpoints[0].host, endpoints[0].port)
        return info

    def kraft_version(self) -> int | None:
        """kraft.version as the active controller (or a broker) has it finalized now,
        from a fresh ApiVersions; None when the server tells no features (before v3)."""
        def attempt(conn: Connection, _remaining: int) -> int | None:
            conn.handshake()
            if conn.finalized_features is None:
                return None
            return conn.finalized_features.get(KRAFT_VERSION, 0)
        return self._call("apiVersions", attempt)

    def add_raft_voter(self, voter_id: int, directory_id: uuid.UUID, endpoints: list[Endpoint],
                       cluster_id: str | None = None) -> None:
        def attempt(conn: Connection, remaining_ms: int) -> None:
            body, _ = conn.request(ADD_RAFT_VOTER, AddRaftVoterRequest(
                cluster_id=cluster_id, timeout_ms=remaining_ms, voter_id=voter_id,
                voter_directory_id=directory_id,
                listeners=[_add.Listener(name=e.name, host=e.host, port=e.port) for e in endpoints]))
            self._finish_membership_call(body)
        self._call("addRaftVoter", attempt)

    def remove_raft_voter(self, voter_id: int, directory_id: uuid.UUID, cluster_id: str | None = None) -> None:
        def attempt(conn: Connection, _remaining: int) -> None:
            body, _ = conn.request(REMOVE_RAFT_VOTER, RemoveRaftVoterRequest(
                cluster_id=cluster_id, voter_id=voter_id, voter_directory_id=directory_id))
            self._finish_membership_call(body)
        self._call("removeRaftVoter", attempt)

    def unregister_controller(self, controller_id: int) -> None:
        """UnregisterController (Kafka 4.4.0) to the active controller: REQUEST_TIMED_OUT
        is retried, as Java's call does, and so is a not-controller answer; any other
        error ends the call with the server's message."""
        def attempt(conn: Connection, _remaining: int) -> None:
            body, _ = conn.request(UNREGISTER_CONTROLLER, UnregisterControllerRequest(controller_id=controller_id))
            if body.error_code == ErrorCode.REQUEST_TIMED_OUT:
                raise _RetryNow(KafkaApiError(body.error_code, body.error_message), refresh=False)
            self._finish_membership_call(body)
        self._call("unregisterController", attempt)

    def _finish_membership_call(self, body) -> None:
        if self._not_controller(body.error_code):
            raise _RetryNow(KafkaApiError(body.error_code), refresh=True)
        if body.error_code:
            raise KafkaApiError(body.error_code, body.error_message)

    def broker_configs(self, keys: list[str]) -> dict[int, dict[str, str | None] | str]:
        """Each broker's own values of ``keys``: DescribeConfigs of its BROKER resource,
        sent to that broker (static settings included), as Kafka's Admin routes it. A
        broker that cannot be asked maps to the reason, in words."""
        nodes = self._call("listNodes", lambda conn, _r: list(self._metadata.nodes))
        out: dict[int, dict[str, str | None] | str] = {}
        for node in nodes:
            try:
                conn = self._connect(node.host, node.port)
                body, _ = conn.request(DESCRIBE_CONFIGS, DescribeConfigsRequest(resources=[
                    _dc.DescribeConfigsResource(resource_type=BROKER_RESOURCE, resource_name=str(node.node_id),
                                                configuration_keys=list(keys))]))
                result = body.results[0]
                if result.error_code:
                    raise KafkaApiError(result.error_code, result.error_message)
                out[node.node_id] = {c.name: c.value for c in result.configs}
            except _Unreachable as exc:
                out[node.node_id] = f"unreachable ({exc})"
            except KafkaApiError as exc:
                out[node.node_id] = exc.java_text()
        return out

    def target_supports(self, api_key: int) -> bool:
        """Whether the node calls go to advertises ``api_key`` in ApiVersions."""
        return self._call("apiVersions", lambda conn, _r: conn.supports(api_key))


def _describe_quorum_request() -> DescribeQuorumRequest:
    return DescribeQuorumRequest(topics=[_dq.TopicData(
        topic_name=METADATA_TOPIC, partitions=[_dq.PartitionData(partition_index=0)])])


def _replica(r, version: int) -> Replica:
    return Replica(
        replica_id=r.replica_id,
        directory_id=r.replica_directory_id,
        log_end_offset=r.log_end_offset,
        last_fetch_timestamp=None if r.last_fetch_timestamp == -1 else r.last_fetch_timestamp,
        last_caught_up_timestamp=None if r.last_caught_up_timestamp == -1 else r.last_caught_up_timestamp,
    )


def _quorum_info(body, version: int) -> QuorumInfo:
    """The checks of ``KafkaAdminClient.describeMetadataQuorum``'s handler, then the data."""
    if body.error_code:
        raise KafkaApiError(body.error_code, body.error_message or None)
    if len(body.topics) != 1:
        raise KafkaApiError(-1, f"DescribeMetadataQuorum received {len(body.topics)} topics when 1 was expected")
    topic = body.topics[0]
    if topic.topic_name != METADATA_TOPIC:
        raise KafkaApiError(-1, f"DescribeMetadataQuorum received a topic with name {topic.topic_name} "
                                f"when {METADATA_TOPIC} was expected")
    if len(topic.partitions) != 1:
        raise KafkaApiError(-1, f"DescribeMetadataQuorum received a topic {topic.topic_name} with "
                                f"{len(topic.partitions)} partitions when 1 was expected")
    p = topic.partitions[0]
    if p.partition_index != 0:
        raise KafkaApiError(-1, f"DescribeMetadataQuorum received a single partition with index "
                                f"{p.partition_index} when 0 was expected")
    if p.error_code:
        raise KafkaApiError(p.error_code, p.error_message or None)
    committed = getattr(p, "committed_voters", None)
    return QuorumInfo(
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        high_watermark=p.high_watermark,
        voters=[_replica(r, version) for r in p.current_voters],
        observers=[_replica(r, version) for r in p.observers],
        committed_voters=None if committed is None or version < 3 else [_replica(r, version) for r in committed],
        nodes={n.node_id: [Endpoint(l.name, l.host, l.port) for l in n.listeners] for n in body.nodes},
        version=version,
    )
