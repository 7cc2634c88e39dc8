"""The core's configuration from the node's: ``QuorumConfig`` built from the properties
and the formatted directory (``meta.properties``)."""
from __future__ import annotations

from kraft_server.api.views import ZERO_UUID
from kraft_server.config import KafkaConfig
from kraft_server.log.startup import StorageInfo
from kraft_server.raft import Endpoint, QuorumConfig, StaticVoter


def probe_listeners(config: KafkaConfig) -> tuple[str, ...]:
    """The controller listeners after the first that share its security protocol: the
    outbound channel speaks that protocol, so it can reach a peer's endpoints on them."""
    from kraft_server.security.listeners import protocol_of
    names = config.controller_listener_names
    if not names:
        return ()
    default = protocol_of(config, names[0])
    return tuple(n for n in names[1:] if protocol_of(config, n) == default)


def quorum_config(config: KafkaConfig, meta: StorageInfo) -> QuorumConfig:
    return QuorumConfig(
        node_id=config.node_id,
        cluster_id=meta.cluster_id,
        directory_id=meta.directory_id or ZERO_UUID,
        static_voters=tuple(StaticVoter(v.node_id, v.host, v.port) for v in config.quorum_voters),
        bootstrap_servers=tuple((e.host, e.port) for e in config.quorum_bootstrap_servers),
        listeners=tuple(Endpoint(e.name, e.host, e.port) for e in config.controller_endpoints()),
        probe_listeners=probe_listeners(config),
        election_timeout_ms=config.quorum_election_timeout_ms,
        fetch_timeout_ms=config.quorum_fetch_timeout_ms,
        election_backoff_max_ms=config.quorum_election_backoff_max_ms,
        request_timeout_ms=config.quorum_request_timeout_ms,
        retry_backoff_ms=config.quorum_retry_backoff_ms,
        append_linger_ms=config.quorum_append_linger_ms,
        auto_join=config.quorum_auto_join_enable,
    )
