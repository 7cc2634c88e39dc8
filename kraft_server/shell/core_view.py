"""``CoreView``: the only module that knows the core's internals, turned into the plain
values the API handlers read (``kraft_server/api/views.py``)."""
from __future__ import annotations

from kraft_server.api.api_versions import SUPPORTED_FEATURES
from kraft_server.api.views import ZERO_UUID, Features, ListenerAddress, QuorumView, ReplicaView, VoterView


def _endpoints(node) -> tuple[ListenerAddress, ...]:
    return tuple(ListenerAddress(e.name, e.host, e.port) for e in node.endpoints)


class CoreView:
    """Adapts ``RaftNode``'s views to ``kraft_server.api.views.NodeView``."""

    def __init__(self, core, node_id: int, cluster_id: str, bootstrap_levels: dict[str, int], clock,
                 controller=None):
        self.core = core
        self.controller = controller  # kraft_server.controller.Controller: the committed image
        self.node_id = node_id
        self.cluster_id = cluster_id
        self._levels = bootstrap_levels
        self._clock = clock

    def now_ms(self) -> int:
        return self._clock()

    def leader_id(self) -> int:
        leader = self.core.leader_id
        return -1 if leader is None else leader

    def voters(self) -> tuple[VoterView, ...]:
        return tuple(VoterView(n.key.node_id, n.key.directory_id, _endpoints(n))
                     for n in self.core.voter_set().nodes)

    def controller_registrations(self):
        """The committed image's RegisterControllerRecords by id, or None while the image
        knows no metadata.version (nothing bootstrapped yet): DescribeCluster's source."""
        controller = self.controller
        if controller is None or not controller.image.has_metadata:
            return None
        return controller.image.controllers, controller.image.metadata_version()

    def features(self) -> Features:
        controller = self.controller
        if controller is not None:
            # Committed FeatureLevelRecords; the epoch is the image's offset
            # (KRaftMetadataCache.features), -1 before the first record.
            finalized, epoch = controller.finalized_features()
            return Features(supported=dict(SUPPORTED_FEATURES), finalized=finalized, epoch=epoch)
        finalized = {"kraft.version": self.core.kraft_version()}
        if "metadata.version" in self._levels:
            finalized["metadata.version"] = self._levels["metadata.version"]
        hwm = self.core.high_watermark
        epoch = hwm - 1 if hwm is not None and hwm > 0 else -1
        return Features(supported=dict(SUPPORTED_FEATURES), finalized=finalized, epoch=epoch)

    def quorum(self, now_ms: int) -> QuorumView:
        core = self.core
        leader = self.leader_id()
        states = core.replica_states(now_ms) if leader == self.node_id else None
        if states is None:  # not the leader (KafkaRaftClient answers NOT_LEADER_OR_FOLLOWER)
            return QuorumView(is_leader=False, leader_id=leader, epoch=core.epoch)
        voter_states, observer_states = states
        voters = tuple(sorted((_replica(r) for r in voter_states), key=lambda r: r.replica_id))
        observers = tuple(sorted((_replica(r) for r in observer_states), key=lambda r: r.replica_id))
        hwm = core.high_watermark
        committed = None
        if hwm is not None:
            # The set as of the HWM (seed 002): a voter whose removal is not committed
            # yet is an observer in the leader's states, and one being added has no
            # committed entry yet.
            known = {(r.replica_id, r.directory_id): r for r in observers + voters}
            committed = tuple(
                known.get((n.key.node_id, n.key.directory_id or ZERO_UUID))
                or ReplicaView(n.key.node_id, n.key.directory_id or ZERO_UUID)
                for n in core.committed_voter_set().nodes)
        return QuorumView(is_leader=True, leader_id=leader, epoch=core.epoch,
                          high_watermark=-1 if hwm is None else hwm,
                          voters=voters, observers=observers, voter_nodes=self.voters(),
                          committed_voters=committed)


def _replica(r) -> ReplicaView:
    """A core ``roles.leader.ReplicaState`` as a DescribeQuorum row."""
    return ReplicaView(
        replica_id=r.key.node_id,
        directory_id=r.key.directory_id or ZERO_UUID,
        log_end_offset=r.end_offset,
        last_fetch_timestamp=r.last_fetch_ms,
        last_caught_up_timestamp=r.last_caught_up_ms,
    )
