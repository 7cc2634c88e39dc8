"""Every API key of Apache Kafka 4.4.0 (the default release), as plain data: reference data for the tests.

The server takes its API keys from the generated messages (``XRequest.API_KEY``,
from ``schemas/``); this table describes all of Kafka's APIs, which the server
neither implements nor needs, so it lives with the tests that use it.

One row per ``*Request.json`` in kafka-clients 4.4.0 (``common/message/``), which is
also one row per ``org.apache.kafka.common.protocol.ApiKeys`` constant, in key order
0-94. ``tests/unit/tools/test_api_keys.py`` checks every row against the JSON in the jar.

Each row: the key; Kafka's ``ApiKeys`` enum name (``"FETCH"``); the JSON message
name prefix (``"Fetch"``, as in ``FetchRequest.json``); the request's
``validVersions`` as ``min_version``..``max_version``; its ``listeners``; the first
flexible version (``None`` when the API never became flexible); and whether
upstream marks the latest version unstable (``latestVersionUnstable``).

Unusual rows:

- Keys 4-7 (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown) are the
  ZooKeeper-era inter-broker APIs. 4.4.0 keeps their JSON files and enum constants
  but with ``validVersions "none"`` and no listeners; they are written here as
  0..-1 (an empty range), which is what Kafka's ``ApiMessageType`` reports.
- InitProducerId (22) has ``validVersions 0-6`` with ``latestVersionUnstable``: a
  stock 4.4.0 server advertises only 0-5 (see :meth:`ApiKeyInfo.advertised_max`).
- SaslHandshake (17) and OffsetDelete (47) are never flexible.
- AddRaftVoter (80) and RemoveRaftVoter (81) list ``["controller", "broker"]``;
  the order in the JSON carries no meaning, so listeners are a frozenset.

    API_KEYS[1].name == "FETCH"
    API_KEYS_BY_NAME["ADD_RAFT_VOTER"].key == 80
    API_KEYS[52].listeners == frozenset({"controller"})
    API_KEYS[18].response_header_version(3) == 0   # ApiVersions: always header v0
"""

from __future__ import annotations

from dataclasses import dataclass

from wire.headers import API_VERSIONS_KEY

KAFKA_VERSION = "4.4.0"

BROKER = "broker"
CONTROLLER = "controller"


@dataclass(frozen=True, slots=True)
class ApiKeyInfo:
    key: int
    name: str  # ApiKeys enum name, e.g. "FETCH"
    message_name: str  # JSON message prefix, e.g. "Fetch" for FetchRequest/FetchResponse
    min_version: int
    max_version: int  # max < min: no valid version (removed API)
    listeners: frozenset[str]
    first_flexible_version: int | None = None  # flexibleVersions "N+", or None for "none"
    latest_version_unstable: bool = False

    @property
    def removed(self) -> bool:
        """True for the APIs whose validVersions is "none" (keys 4-7)."""
        return self.max_version < self.min_version

    @property
    def request_name(self) -> str:
        return self.message_name + "Request"

    @property
    def response_name(self) -> str:
        return self.message_name + "Response"

    def is_valid_version(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def is_flexible(self, version: int) -> bool:
        return self.first_flexible_version is not None and version >= self.first_flexible_version

    def advertised_max(self, unstable_enabled: bool = False) -> int:
        """The highest version a server advertises (``unstable.api.versions.enable``)."""
        if self.latest_version_unstable and not unstable_enabled:
            return self.max_version - 1
        return self.max_version

    def request_header_version(self, version: int) -> int:
        return 2 if self.is_flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        if self.key == API_VERSIONS_KEY:
            return 0  # KIP-511: readable before the client knows the server's range
        return 1 if self.is_flexible(version) else 0


_B = frozenset({BROKER})
_C = frozenset({CONTROLLER})
_BC = frozenset({BROKER, CONTROLLER})
_NONE: frozenset[str] = frozenset()

# fmt: off
# (key, enum name, message name, min, max, listeners, first flexible version[, latest unstable])
_TABLE: tuple[tuple, ...] = (
    (0, "PRODUCE", "Produce", 3, 13, _B, 9),
    (1, "FETCH", "Fetch", 4, 18, _BC, 12),
    (2, "LIST_OFFSETS", "ListOffsets", 1, 11, _B, 6),
    (3, "METADATA", "Metadata", 0, 13, _B, 9),
    (4, "LEADER_AND_ISR", "LeaderAndIsr", 0, -1, _NONE, None),
    (5, "STOP_REPLICA", "StopReplica", 0, -1, _NONE, None),
    (6, "UPDATE_METADATA", "UpdateMetadata", 0, -1, _NONE, None),
    (7, "CONTROLLED_SHUTDOWN", "ControlledShutdown", 0, -1, _NONE, None),
    (8, "OFFSET_COMMIT", "OffsetCommit", 2, 10, _B, 8),
    (9, "OFFSET_FETCH", "OffsetFetch", 1, 10, _B, 6),
    (10, "FIND_COORDINATOR", "FindCoordinator", 0, 6, _B, 3),
    (11, "JOIN_GROUP", "JoinGroup", 0, 9, _B, 6),
    (12, "HEARTBEAT", "Heartbeat", 0, 4, _B, 4),
    (13, "LEAVE_GROUP", "LeaveGroup", 0, 5, _B, 4),
    (14, "SYNC_GROUP", "SyncGroup", 0, 5, _B, 4),
    (15, "DESCRIBE_GROUPS", "DescribeGroups", 0, 6, _B, 5),
    (16, "LIST_GROUPS", "ListGroups", 0, 5, _B, 3),
    (17, "SASL_HANDSHAKE", "SaslHandshake", 0, 1, _BC, None),
    (18, "API_VERSIONS", "ApiVersions", 0, 5, _BC, 3),
    (19, "CREATE_TOPICS", "CreateTopics", 2, 7, _BC, 5),
    (20, "DELETE_TOPICS", "DeleteTopics", 1, 6, _BC, 4),
    (21, "DELETE_RECORDS", "DeleteRecords", 0, 2, _B, 2),
    (22, "INIT_PRODUCER_ID", "InitProducerId", 0, 6, _B, 2, True),
    (23, "OFFSET_FOR_LEADER_EPOCH", "OffsetForLeaderEpoch", 2, 4, _B, 4),
    (24, "ADD_PARTITIONS_TO_TXN", "AddPartitionsToTxn", 0, 5, _B, 3),
    (25, "ADD_OFFSETS_TO_TXN", "AddOffsetsToTxn", 0, 4, _B, 3),
    (26, "END_TXN", "EndTxn", 0, 5, _B, 3),
    (27, "WRITE_TXN_MARKERS", "WriteTxnMarkers", 1, 2, _B, 1),
    (28, "TXN_OFFSET_COMMIT", "TxnOffsetCommit", 0, 6, _B, 3),
    (29, "DESCRIBE_ACLS", "DescribeAcls", 1, 3, _BC, 2),
    (30, "CREATE_ACLS", "CreateAcls", 1, 3, _BC, 2),
    (31, "DELETE_ACLS", "DeleteAcls", 1, 3, _BC, 2),
    (32, "DESCRIBE_CONFIGS", "DescribeConfigs", 1, 4, _BC, 4),
    (33, "ALTER_CONFIGS", "AlterConfigs", 0, 2, _BC, 2),
    (34, "ALTER_REPLICA_LOG_DIRS", "AlterReplicaLogDirs", 1, 2, _B, 2),
    (35, "DESCRIBE_LOG_DIRS", "DescribeLogDirs", 1, 5, _B, 2),
    (36, "SASL_AUTHENTICATE", "SaslAuthenticate", 0, 2, _BC, 2),
    (37, "CREATE_PARTITIONS", "CreatePartitions", 0, 3, _BC, 2),
    (38, "CREATE_DELEGATION_TOKEN", "CreateDelegationToken", 1, 3, _BC, 2),
    (39, "RENEW_DELEGATION_TOKEN", "RenewDelegationToken", 1, 2, _BC, 2),
    (40, "EXPIRE_DELEGATION_TOKEN", "ExpireDelegationToken", 1, 2, _BC, 2),
    (41, "DESCRIBE_DELEGATION_TOKEN", "DescribeDelegationToken", 1, 3, _BC, 2),
    (42, "DELETE_GROUPS", "DeleteGroups", 0, 3, _B, 2),
    (43, "ELECT_LEADERS", "ElectLeaders", 0, 2, _BC, 2),
    (44, "INCREMENTAL_ALTER_CONFIGS", "IncrementalAlterConfigs", 0, 1, _BC, 1),
    (45, "ALTER_PARTITION_REASSIGNMENTS", "AlterPartitionReassignments", 0, 1, _BC, 0),
    (46, "LIST_PARTITION_REASSIGNMENTS", "ListPartitionReassignments", 0, 0, _BC, 0),
    (47, "OFFSET_DELETE", "OffsetDelete", 0, 0, _B, None),
    (48, "DESCRIBE_CLIENT_QUOTAS", "DescribeClientQuotas", 0, 1, _B, 1),
    (49, "ALTER_CLIENT_QUOTAS", "AlterClientQuotas", 0, 1, _BC, 1),
    (50, "DESCRIBE_USER_SCRAM_CREDENTIALS", "DescribeUserScramCredentials", 0, 0, _BC, 0),
    (51, "ALTER_USER_SCRAM_CREDENTIALS", "AlterUserScramCredentials", 0, 0, _BC, 0),
    (52, "VOTE", "Vote", 0, 2, _C, 0),
    (53, "BEGIN_QUORUM_EPOCH", "BeginQuorumEpoch", 0, 1, _C, 1),
    (54, "END_QUORUM_EPOCH", "EndQuorumEpoch", 0, 1, _C, 1),
    (55, "DESCRIBE_QUORUM", "DescribeQuorum", 0, 2, _BC, 0),
    (56, "ALTER_PARTITION", "AlterPartition", 2, 3, _C, 0),
    (57, "UPDATE_FEATURES", "UpdateFeatures", 0, 2, _BC, 0),
    (58, "ENVELOPE", "Envelope", 0, 0, _C, 0),
    (59, "FETCH_SNAPSHOT", "FetchSnapshot", 0, 1, _C, 0),
    (60, "DESCRIBE_CLUSTER", "DescribeCluster", 0, 2, _BC, 0),
    (61, "DESCRIBE_PRODUCERS", "DescribeProducers", 0, 0, _B, 0),
    (62, "BROKER_REGISTRATION", "BrokerRegistration", 0, 4, _C, 0),
    (63, "BROKER_HEARTBEAT", "BrokerHeartbeat", 0, 2, _C, 0),
    (64, "UNREGISTER_BROKER", "UnregisterBroker", 0, 0, _BC, 0),
    (65, "DESCRIBE_TRANSACTIONS", "DescribeTransactions", 0, 0, _B, 0),
    (66, "LIST_TRANSACTIONS", "ListTransactions", 0, 2, _B, 0),
    (67, "ALLOCATE_PRODUCER_IDS", "AllocateProducerIds", 0, 0, _C, 0),
    (68, "CONSUMER_GROUP_HEARTBEAT", "ConsumerGroupHeartbeat", 0, 1, _B, 0),
    (69, "CONSUMER_GROUP_DESCRIBE", "ConsumerGroupDescribe", 0, 1, _B, 0),
    (70, "CONTROLLER_REGISTRATION", "ControllerRegistration", 0, 0, _C, 0),
    (71, "GET_TELEMETRY_SUBSCRIPTIONS", "GetTelemetrySubscriptions", 0, 0, _B, 0),
    (72, "PUSH_TELEMETRY", "PushTelemetry", 0, 0, _B, 0),
    (73, "ASSIGN_REPLICAS_TO_DIRS", "AssignReplicasToDirs", 0, 0, _C, 0),
    (74, "LIST_CONFIG_RESOURCES", "ListConfigResources", 0, 1, _B, 0),
    (75, "DESCRIBE_TOPIC_PARTITIONS", "DescribeTopicPartitions", 0, 0, _B, 0),
    (76, "SHARE_GROUP_HEARTBEAT", "ShareGroupHeartbeat", 1, 1, _B, 0),
    (77, "SHARE_GROUP_DESCRIBE", "ShareGroupDescribe", 1, 1, _B, 0),
    (78, "SHARE_FETCH", "ShareFetch", 1, 2, _B, 0),
    (79, "SHARE_ACKNOWLEDGE", "ShareAcknowledge", 1, 2, _B, 0),
    (80, "ADD_RAFT_VOTER", "AddRaftVoter", 0, 1, _BC, 0),
    (81, "REMOVE_RAFT_VOTER", "RemoveRaftVoter", 0, 0, _BC, 0),
    (82, "UPDATE_RAFT_VOTER", "UpdateRaftVoter", 0, 0, _C, 0),
    (83, "INITIALIZE_SHARE_GROUP_STATE", "InitializeShareGroupState", 0, 0, _B, 0),
    (84, "READ_SHARE_GROUP_STATE", "ReadShareGroupState", 0, 0, _B, 0),
    (85, "WRITE_SHARE_GROUP_STATE", "WriteShareGroupState", 0, 1, _B, 0),
    (86, "DELETE_SHARE_GROUP_STATE", "DeleteShareGroupState", 0, 0, _B, 0),
    (87, "READ_SHARE_GROUP_STATE_SUMMARY", "ReadShareGroupStateSummary", 0, 1, _B, 0),
    (88, "STREAMS_GROUP_HEARTBEAT", "StreamsGroupHeartbeat", 0, 1, _B, 0),
    (89, "STREAMS_GROUP_DESCRIBE", "StreamsGroupDescribe", 0, 1, _B, 0),
    (90, "DESCRIBE_SHARE_GROUP_OFFSETS", "DescribeShareGroupOffsets", 0, 1, _B, 0),
    (91, "ALTER_SHARE_GROUP_OFFSETS", "AlterShareGroupOffsets", 0, 0, _B, 0),
    (92, "DELETE_SHARE_GROUP_OFFSETS", "DeleteShareGroupOffsets", 0, 0, _B, 0),
    (93, "STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE", "StreamsGroupTopologyDescriptionUpdate", 0, 0, _B, 0),
    (94, "UNREGISTER_CONTROLLER", "UnregisterController", 0, 0, _BC, 0),
)
# fmt: on

API_KEYS: dict[int, ApiKeyInfo] = {row[0]: ApiKeyInfo(*row) for row in _TABLE}
API_KEYS_BY_NAME: dict[str, ApiKeyInfo] = {info.name: info for info in API_KEYS.values()}

# What a 4.4.0 KRaft controller can be asked over its listener (before intersecting with
# what we implement): the keys whose request JSON lists "controller".
CONTROLLER_API_KEYS: frozenset[int] = frozenset(
    k for k, info in API_KEYS.items() if CONTROLLER in info.listeners)


def api_key_info(key: int) -> ApiKeyInfo | None:
    """The row for ``key``, or None for a key Kafka 4.4.0 does not define."""
    return API_KEYS.get(key)
