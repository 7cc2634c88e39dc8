"""Where peers listen: the endpoints of the voter set, those learned from responses
(NodeEndpoints), a leader's that removed itself (in no voter set, still known by the
quorum state), and the ``controller.quorum.bootstrap.servers`` taken in turn."""
from __future__ import annotations

from kraft_server.raft.boundary import Destination, Endpoint


class PeerAddresses:
    def __init__(self, config):
        self.config = config
        self._learned: dict[int, tuple[Endpoint, ...]] = {}
        self._bootstrap_next = 0

    def remember(self, node_id: int, endpoints: tuple[Endpoint, ...]) -> None:
        if node_id >= 0 and node_id != self.config.node_id and endpoints:
            self._learned[node_id] = endpoints

    def endpoints_for(self, node_id: int, voters, state) -> tuple[Endpoint, ...]:
        node = voters.node(node_id)
        if node is not None and node.endpoints:
            return node.endpoints
        if node_id in self._learned:
            return self._learned[node_id]
        if state is not None and state.leader_id == node_id and state.leader_endpoints:
            return state.leader_endpoints
        return ()

    def destination(self, node_id: int, eps: tuple[Endpoint, ...]) -> Destination | None:
        """``node_id`` at its endpoint on our default listener (else its first one)."""
        if not eps:
            return None
        listener = self.config.default_listener
        return Destination(node_id, next((e for e in eps if e.name == listener), eps[0]))

    def bootstrap(self) -> Destination | None:
        """Next bootstrap server; with a static quorum the voters' addresses serve as
        bootstrap servers (Kafka does the same)."""
        servers = self.config.bootstrap_servers or tuple(
            (v.host, v.port) for v in self.config.static_voters)
        if not servers:
            return None
        host, port = servers[self._bootstrap_next % len(servers)]
        self._bootstrap_next += 1
        return Destination(-1, Endpoint(self.config.default_listener, host, port))

    def bootstrap_count(self) -> int:
        return len(self.config.bootstrap_servers) or len(self.config.static_voters)
