"""Which APIs each listener serves, with our version ranges.

A controller listener serves the KRaft RPCs, DescribeQuorum, DescribeCluster,
ApiVersions and the active controller's APIs (``CONTROLLER_APIS``: registrations and
heartbeats, topics and partitions, configs, features, quotas, ACLs, SCRAM, Envelope).
An ApiVersions answer lists exactly what we implement (a client that sends anything
else gets its connection closed, as from Kafka for an unknown key).

Differences from Kafka 4.3.1's ranges, on purpose:

- DescribeQuorum goes to v3 (``CommittedVoters``, our extension; Kafka stops at 2,
  so Kafka clients negotiate 2).
- AddRaftVoter/RemoveRaftVoter appear only when the core implements them
  (``reconfiguration=True``; ``RaftNode.SUPPORTS_RECONFIGURATION``).
- UpdateFeatures (57) on the controller listener: kraft.version alone is answered
  by the core (0 -> 1, ``raft/rpc/update_features.py``), any other feature by the
  active controller (``controller/feature_control.py``).

The client listener (any listener not in ``controller.listener.names``) serves
ApiVersions, DescribeCluster and DescribeQuorum (enough for ``kafka-metadata-quorum
--bootstrap-server``), and ``__cluster_metadata``-0 as an ordinary topic to Kafka
consumers (``api/topic/``): Metadata, ListOffsets, Fetch (consumer fetches; a
replica id >= 0 still goes to the core), OffsetForLeaderEpoch,
DescribeTopicPartitions and Produce (advertised from v0 as Kafka brokers do, for librdkafka; refused).
The classic consumer-group APIs, FindCoordinator included, are answered by
``kraft_server/api/groups`` at Kafka 4.3.1's broker ranges.
"""
from __future__ import annotations

from wire.messages import (  # the active controller's APIs (kraft_server/controller)
    AllocateProducerIdsRequest, AlterPartitionRequest, AssignReplicasToDirsRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
    CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest, EnvelopeRequest,
    UnregisterBrokerRequest, UnregisterControllerRequest,
)
from wire.messages import AlterPartitionReassignmentsRequest, ListPartitionReassignmentsRequest
from wire.messages import AlterConfigsRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest  # configs
from wire.messages import AlterClientQuotasRequest
from wire.messages import (
    AddRaftVoterRequest, ApiVersionsRequest, BeginQuorumEpochRequest, ControllerRegistrationRequest,
    DeleteGroupsRequest, DescribeClusterRequest, DescribeGroupsRequest, DescribeQuorumRequest,
    DescribeTopicPartitionsRequest, EndQuorumEpochRequest, FetchRequest, FetchSnapshotRequest,
    FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest,
    ListGroupsRequest, ListOffsetsRequest, MetadataRequest, OffsetCommitRequest,
    OffsetDeleteRequest, OffsetFetchRequest, OffsetForLeaderEpochRequest, ProduceRequest,
    RemoveRaftVoterRequest, SyncGroupRequest, UpdateFeaturesRequest, UpdateRaftVoterRequest,
    VoteRequest,
)

# The keys come from the generated messages (schemas/), the one place they are written.
API_VERSIONS = ApiVersionsRequest.API_KEY
FETCH = FetchRequest.API_KEY
METADATA = MetadataRequest.API_KEY
VOTE = VoteRequest.API_KEY
BEGIN_QUORUM_EPOCH = BeginQuorumEpochRequest.API_KEY
END_QUORUM_EPOCH = EndQuorumEpochRequest.API_KEY
DESCRIBE_QUORUM = DescribeQuorumRequest.API_KEY
UPDATE_FEATURES = UpdateFeaturesRequest.API_KEY
FETCH_SNAPSHOT = FetchSnapshotRequest.API_KEY
DESCRIBE_CLUSTER = DescribeClusterRequest.API_KEY
CONTROLLER_REGISTRATION = ControllerRegistrationRequest.API_KEY  # KIP-919; controller listener only, as in Kafka
ADD_RAFT_VOTER = AddRaftVoterRequest.API_KEY
REMOVE_RAFT_VOTER = RemoveRaftVoterRequest.API_KEY
UPDATE_RAFT_VOTER = UpdateRaftVoterRequest.API_KEY
PRODUCE = ProduceRequest.API_KEY
LIST_OFFSETS = ListOffsetsRequest.API_KEY
FIND_COORDINATOR = FindCoordinatorRequest.API_KEY
OFFSET_FOR_LEADER_EPOCH = OffsetForLeaderEpochRequest.API_KEY
DESCRIBE_TOPIC_PARTITIONS = DescribeTopicPartitionsRequest.API_KEY
BROKER_REGISTRATION = BrokerRegistrationRequest.API_KEY  # the active controller's (controller/)
BROKER_HEARTBEAT = BrokerHeartbeatRequest.API_KEY
CREATE_TOPICS = CreateTopicsRequest.API_KEY
DELETE_TOPICS = DeleteTopicsRequest.API_KEY
ALTER_PARTITION = AlterPartitionRequest.API_KEY
CREATE_PARTITIONS = CreatePartitionsRequest.API_KEY
UNREGISTER_BROKER = UnregisterBrokerRequest.API_KEY
UNREGISTER_CONTROLLER = UnregisterControllerRequest.API_KEY  # 94, Kafka 4.4.0
ELECT_LEADERS = ElectLeadersRequest.API_KEY
ALLOCATE_PRODUCER_IDS = AllocateProducerIdsRequest.API_KEY
ASSIGN_REPLICAS_TO_DIRS = AssignReplicasToDirsRequest.API_KEY
ENVELOPE = EnvelopeRequest.API_KEY
ALTER_PARTITION_REASSIGNMENTS = AlterPartitionReassignmentsRequest.API_KEY  # controller/reassignment.py
LIST_PARTITION_REASSIGNMENTS = ListPartitionReassignmentsRequest.API_KEY
DESCRIBE_CONFIGS = DescribeConfigsRequest.API_KEY  # kraft_server/api/config_requests.py
ALTER_CONFIGS = AlterConfigsRequest.API_KEY
INCREMENTAL_ALTER_CONFIGS = IncrementalAlterConfigsRequest.API_KEY
ALTER_CLIENT_QUOTAS = AlterClientQuotasRequest.API_KEY
# SASL (kraft_server/net/sasl_gate.py answers them; listed on every listener, as Kafka does)
from wire.messages import SaslAuthenticateRequest, SaslHandshakeRequest  # noqa: E402
SASL_APIS: dict[int, tuple[int, int]] = {SaslHandshakeRequest.API_KEY: (0, 1),
                                         SaslAuthenticateRequest.API_KEY: (0, 2)}
from wire.messages import AlterUserScramCredentialsRequest  # noqa: E402
ALTER_USER_SCRAM_CREDENTIALS = AlterUserScramCredentialsRequest.API_KEY  # controller/scram_control.py
SCRAM_APIS: dict[int, tuple[int, int]] = {ALTER_USER_SCRAM_CREDENTIALS: (0, 0)}  # controller listener

from wire.messages import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest  # noqa: E402
CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS = CreateAclsRequest.API_KEY, DescribeAclsRequest.API_KEY, DeleteAclsRequest.API_KEY
ACL_APIS: dict[int, tuple[int, int]] = {CREATE_ACLS: (1, 3), DESCRIBE_ACLS: (1, 3), DELETE_ACLS: (1, 3)}  # controller/acl_control.py

CONTROLLER_APIS: dict[int, tuple[int, int]] = {
    FETCH: (4, 18),
    API_VERSIONS: (0, 5),
    VOTE: (0, 2),
    BEGIN_QUORUM_EPOCH: (0, 1),
    END_QUORUM_EPOCH: (0, 1),
    DESCRIBE_QUORUM: (0, 3),
    FETCH_SNAPSHOT: (0, 1),
    DESCRIBE_CLUSTER: (0, 2),
    CONTROLLER_REGISTRATION: (0, 0),  # answered by kraft_server/controller (registration.py)
    UPDATE_RAFT_VOTER: (0, 0),
    UPDATE_FEATURES: (0, 2),  # kraft.version alone: raft/rpc/update_features.py; else controller/feature_control.py
    BROKER_REGISTRATION: (0, 4),  # kraft_server/controller/broker_requests.py
    BROKER_HEARTBEAT: (0, 2),
    CREATE_TOPICS: (2, 7),  # kraft_server/api/controller_writes.py
    DELETE_TOPICS: (1, 6),
    ALTER_PARTITION: (2, 3),
    CREATE_PARTITIONS: (0, 3),
    UNREGISTER_BROKER: (0, 0),
    ELECT_LEADERS: (0, 2),
    ALLOCATE_PRODUCER_IDS: (0, 0),
    ASSIGN_REPLICAS_TO_DIRS: (0, 0),
    ENVELOPE: (0, 0),
    ALTER_PARTITION_REASSIGNMENTS: (0, 1),
    LIST_PARTITION_REASSIGNMENTS: (0, 0),
    DESCRIBE_CONFIGS: (1, 4),
    ALTER_CONFIGS: (0, 2),
    INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ALTER_CLIENT_QUOTAS: (0, 1),  # kraft_server/controller/client_quotas.py
    UNREGISTER_CONTROLLER: (0, 0),  # controller/cluster/unregister_controller.py (Kafka 4.4.0)
}
RECONFIGURATION_APIS: dict[int, tuple[int, int]] = {
    ADD_RAFT_VOTER: (0, 1),
    REMOVE_RAFT_VOTER: (0, 0),
}
# The classic consumer-group APIs, at the versions a Kafka 4.3.1 broker serves
# (its specs' validVersions); answered by kraft_server/api/groups.
GROUP_APIS: dict[int, tuple[int, int]] = {
    OffsetCommitRequest.API_KEY: (2, 10),
    OffsetFetchRequest.API_KEY: (1, 10),
    FindCoordinatorRequest.API_KEY: (0, 6),
    JoinGroupRequest.API_KEY: (0, 9),
    HeartbeatRequest.API_KEY: (0, 4),
    LeaveGroupRequest.API_KEY: (0, 5),
    SyncGroupRequest.API_KEY: (0, 5),
    DescribeGroupsRequest.API_KEY: (0, 6),
    ListGroupsRequest.API_KEY: (0, 5),
    DeleteGroupsRequest.API_KEY: (0, 3),
    OffsetDeleteRequest.API_KEY: (0, 0),
}
CLIENT_APIS: dict[int, tuple[int, int]] = {
    PRODUCE: (0, 13),  # min 0 as Kafka brokers advertise (KAFKA-18659); below 3 closes the connection
    FETCH: (4, 18),
    LIST_OFFSETS: (1, 11),
    METADATA: (0, 13),
    FIND_COORDINATOR: (0, 6),
    OFFSET_FOR_LEADER_EPOCH: (2, 4),
    DESCRIBE_TOPIC_PARTITIONS: (0, 0),
    API_VERSIONS: (0, 5),
    DESCRIBE_QUORUM: (0, 3),
    DESCRIBE_CLUSTER: (0, 2),
    **GROUP_APIS,
}

# The RPCs the Raft core answers (through InboundRequest / OutboundResponse).
CORE_APIS = frozenset({FETCH, VOTE, BEGIN_QUORUM_EPOCH, END_QUORUM_EPOCH, FETCH_SNAPSHOT,
                       UPDATE_RAFT_VOTER, ADD_RAFT_VOTER, REMOVE_RAFT_VOTER, UPDATE_FEATURES})


def listener_apis(is_controller_listener: bool, *, reconfiguration: bool = False) -> dict[int, tuple[int, int]]:
    """The ``{api_key: (min, max)}`` table of one listener, sorted by key."""
    if not is_controller_listener:
        apis = dict(CLIENT_APIS)
        if reconfiguration:
            apis.update(RECONFIGURATION_APIS)  # Kafka serves these on broker listeners too
    else:
        apis = dict(CONTROLLER_APIS)
        if reconfiguration:
            apis.update(RECONFIGURATION_APIS)
        apis.update(SCRAM_APIS)
        apis.update(ACL_APIS)
    apis.update(SASL_APIS)
    return dict(sorted(apis.items()))
