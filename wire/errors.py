"""Kafka's error codes: every ``org.apache.kafka.common.protocol.Errors`` of 4.4.0.

Generated from Apache Kafka 4.4.0's ``Errors.values()`` by
``tests/java/ErrorsDump.java`` run against the pinned kafka-clients jar
(``python -m tools.kafka_dist.errors_table > wire/errors.py``);
``tests/interop/test_errors.py`` re-runs that program and checks this module against
it exactly.

Each row: code, name, retriable (the Java exception is a
``RetriableException``), the Java exception's simple class name (``None`` for
NONE), and Kafka's default message (what Java clients and tools print).

    ErrorCode.NOT_LEADER_OR_FOLLOWER == 6
    error_name(6) == "NOT_LEADER_OR_FOLLOWER"
    is_retriable(6) is True
    ERRORS[6].message
    error_info(9999) is ERRORS[-1]  # unknown codes: UNKNOWN_SERVER_ERROR, as Errors.forCode does
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

KAFKA_VERSION = "4.4.0"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    code: int
    name: str
    retriable: bool
    exception: str | None
    message: str


# fmt: off
_TABLE: tuple[tuple[int, str, bool, str | None, str], ...] = (
    (-1, "UNKNOWN_SERVER_ERROR", False, "UnknownServerException",
     "The server experienced an unexpected error when processing the request."),
    (0, "NONE", False, None,
     "NONE"),
    (1, "OFFSET_OUT_OF_RANGE", False, "OffsetOutOfRangeException",
     "The requested offset is not within the range of offsets maintained by the server."),
    (2, "CORRUPT_MESSAGE", True, "CorruptRecordException",
     "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt."),
    (3, "UNKNOWN_TOPIC_OR_PARTITION", True, "UnknownTopicOrPartitionException",
     "This server does not host this topic-partition."),
    (4, "INVALID_FETCH_SIZE", False, "InvalidFetchSizeException",
     "The requested fetch size is invalid."),
    (5, "LEADER_NOT_AVAILABLE", True, "LeaderNotAvailableException",
     "There is no leader for this topic-partition as we are in the middle of a leadership election."),
    (6, "NOT_LEADER_OR_FOLLOWER", True, "NotLeaderOrFollowerException",
     "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."),
    (7, "REQUEST_TIMED_OUT", True, "TimeoutException",
     "The request timed out."),
    (8, "BROKER_NOT_AVAILABLE", False, "BrokerNotAvailableException",
     "The broker is not available."),
    (9, "REPLICA_NOT_AVAILABLE", True, "ReplicaNotAvailableException",
     "The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition."),
    (10, "MESSAGE_TOO_LARGE", False, "RecordTooLargeException",
     "The request included a message larger than the max message size the server will accept."),
    (11, "STALE_CONTROLLER_EPOCH", False, "ControllerMovedException",
     "The controller moved to another broker."),
    (12, "OFFSET_METADATA_TOO_LARGE", False, "OffsetMetadataTooLarge",
     "The metadata field of the offset request was too large."),
    (13, "NETWORK_EXCEPTION", True, "NetworkException",
     "The server disconnected before a response was received."),
    (14, "COORDINATOR_LOAD_IN_PROGRESS", True, "CoordinatorLoadInProgressException",
     "The coordinator is loading and hence can't process requests."),
    (15, "COORDINATOR_NOT_AVAILABLE", True, "CoordinatorNotAvailableException",
     "The coordinator is not available."),
    (16, "NOT_COORDINATOR", True, "NotCoordinatorException",
     "This is not the correct coordinator."),
    (17, "INVALID_TOPIC_EXCEPTION", False, "InvalidTopicException",
     "The request attempted to perform an operation on an invalid topic."),
    (18, "RECORD_LIST_TOO_LARGE", False, "RecordBatchTooLargeException",
     "The request included message batch larger than the configured segment size on the server."),
    (19, "NOT_ENOUGH_REPLICAS", True, "NotEnoughReplicasException",
     "Messages are rejected since there are fewer in-sync replicas than required."),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True, "NotEnoughReplicasAfterAppendException",
     "Messages are written to the log, but to fewer in-sync replicas than required."),
    (21, "INVALID_REQUIRED_ACKS", False, "InvalidRequiredAcksException",
     "Produce request specified an invalid value for required acks."),
    (22, "ILLEGAL_GENERATION", False, "IllegalGenerationException",
     "Specified group generation id is not valid."),
    (23, "INCONSISTENT_GROUP_PROTOCOL", False, "InconsistentGroupProtocolException",
     "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list."),
    (24, "INVALID_GROUP_ID", False, "InvalidGroupIdException",
     "The group id is invalid."),
    (25, "UNKNOWN_MEMBER_ID", False, "UnknownMemberIdException",
     "The coordinator is not aware of this member."),
    (26, "INVALID_SESSION_TIMEOUT", False, "InvalidSessionTimeoutException",
     "The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms)."),
    (27, "REBALANCE_IN_PROGRESS", False, "RebalanceInProgressException",
     "The group is rebalancing, so a rejoin is needed."),
    (28, "INVALID_COMMIT_OFFSET_SIZE", False, "InvalidCommitOffsetSizeException",
     "The committing offset data size is not valid."),
    (29, "TOPIC_AUTHORIZATION_FAILED", False, "TopicAuthorizationException",
     "Topic authorization failed."),
    (30, "GROUP_AUTHORIZATION_FAILED", False, "GroupAuthorizationException",
     "Group authorization failed."),
    (31, "CLUSTER_AUTHORIZATION_FAILED", False, "ClusterAuthorizationException",
     "Cluster authorization failed."),
    (32, "INVALID_TIMESTAMP", False, "InvalidTimestampException",
     "The timestamp of the message is out of acceptable range."),
    (33, "UNSUPPORTED_SASL_MECHANISM", False, "UnsupportedSaslMechanismException",
     "The broker does not support the requested SASL mechanism."),
    (34, "ILLEGAL_SASL_STATE", False, "IllegalSaslStateException",
     "Request is not valid given the current SASL state."),
    (35, "UNSUPPORTED_VERSION", False, "UnsupportedVersionException",
     "The version of API is not supported."),
    (36, "TOPIC_ALREADY_EXISTS", False, "TopicExistsException",
     "Topic with this name already exists."),
    (37, "INVALID_PARTITIONS", False, "InvalidPartitionsException",
     "Number of partitions is below 1."),
    (38, "INVALID_REPLICATION_FACTOR", False, "InvalidReplicationFactorException",
     "Replication factor is below 1 or larger than the number of available brokers."),
    (39, "INVALID_REPLICA_ASSIGNMENT", False, "InvalidReplicaAssignmentException",
     "Replica assignment is invalid."),
    (40, "INVALID_CONFIG", False, "InvalidConfigurationException",
     "Configuration is invalid."),
    (41, "NOT_CONTROLLER", True, "NotControllerException",
     "This is not the correct controller for this cluster."),
    (42, "INVALID_REQUEST", False, "InvalidRequestException",
     "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False, "UnsupportedForMessageFormatException",
     "The message format version on the broker does not support the request."),
    (44, "POLICY_VIOLATION", False, "PolicyViolationException",
     "Request parameters do not satisfy the configured policy."),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False, "OutOfOrderSequenceException",
     "The broker received an out of order sequence number."),
    (46, "DUPLICATE_SEQUENCE_NUMBER", False, "DuplicateSequenceException",
     "The broker received a duplicate sequence number."),
    (47, "INVALID_PRODUCER_EPOCH", False, "InvalidProducerEpochException",
     "Producer attempted to produce with an old epoch."),
    (48, "INVALID_TXN_STATE", False, "InvalidTxnStateException",
     "The producer attempted a transactional operation in an invalid state."),
    (49, "INVALID_PRODUCER_ID_MAPPING", False, "InvalidPidMappingException",
     "The producer attempted to use a producer id which is not currently assigned to its transactional id."),
    (50, "INVALID_TRANSACTION_TIMEOUT", False, "InvalidTxnTimeoutException",
     "The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms)."),
    (51, "CONCURRENT_TRANSACTIONS", True, "ConcurrentTransactionsException",
     "The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing."),
    (52, "TRANSACTION_COORDINATOR_FENCED", False, "TransactionCoordinatorFencedException",
     "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer."),
    (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False, "TransactionalIdAuthorizationException",
     "Transactional Id authorization failed."),
    (54, "SECURITY_DISABLED", False, "SecurityDisabledException",
     "Security features are disabled."),
    (55, "OPERATION_NOT_ATTEMPTED", False, "OperationNotAttemptedException",
     "The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest."),
    (56, "KAFKA_STORAGE_ERROR", True, "KafkaStorageException",
     "Disk error when trying to access log file on the disk."),
    (57, "LOG_DIR_NOT_FOUND", False, "LogDirNotFoundException",
     "The user-specified log directory is not found in the broker config."),
    (58, "SASL_AUTHENTICATION_FAILED", False, "SaslAuthenticationException",
     "SASL Authentication failed."),
    (59, "UNKNOWN_PRODUCER_ID", False, "UnknownProducerIdException",
     "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception."),
    (60, "REASSIGNMENT_IN_PROGRESS", False, "ReassignmentInProgressException",
     "A partition reassignment is in progress."),
    (61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "DelegationTokenDisabledException",
     "Delegation Token feature is not enabled."),
    (62, "DELEGATION_TOKEN_NOT_FOUND", False, "DelegationTokenNotFoundException",
     "Delegation Token is not found on server."),
    (63, "DELEGATION_TOKEN_OWNER_MISMATCH", False, "DelegationTokenOwnerMismatchException",
     "Specified Principal is not valid Owner/Renewer."),
    (64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False, "UnsupportedByAuthenticationException",
     "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels."),
    (65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "DelegationTokenAuthorizationException",
     "Delegation Token authorization failed."),
    (66, "DELEGATION_TOKEN_EXPIRED", False, "DelegationTokenExpiredException",
     "Delegation Token is expired."),
    (67, "INVALID_PRINCIPAL_TYPE", False, "InvalidPrincipalTypeException",
     "Supplied principalType is not supported."),
    (68, "NON_EMPTY_GROUP", False, "GroupNotEmptyException",
     "The group is not empty."),
    (69, "GROUP_ID_NOT_FOUND", False, "GroupIdNotFoundException",
     "The group id does not exist."),
    (70, "FETCH_SESSION_ID_NOT_FOUND", True, "FetchSessionIdNotFoundException",
     "The fetch session ID was not found."),
    (71, "INVALID_FETCH_SESSION_EPOCH", True, "InvalidFetchSessionEpochException",
     "The fetch session epoch is invalid."),
    (72, "LISTENER_NOT_FOUND", True, "ListenerNotFoundException",
     "There is no listener on the leader broker that matches the listener on which metadata request was processed."),
    (73, "TOPIC_DELETION_DISABLED", False, "TopicDeletionDisabledException",
     "Topic deletion is disabled."),
    (74, "FENCED_LEADER_EPOCH", True, "FencedLeaderEpochException",
     "The leader epoch in the request is older than the epoch on the broker."),
    (75, "UNKNOWN_LEADER_EPOCH", True, "UnknownLeaderEpochException",
     "The leader epoch in the request is newer than the epoch on the broker."),
    (76, "UNSUPPORTED_COMPRESSION_TYPE", False, "UnsupportedCompressionTypeException",
     "The requesting client does not support the compression type of given partition."),
    (77, "STALE_BROKER_EPOCH", False, "StaleBrokerEpochException",
     "Broker epoch has changed."),
    (78, "OFFSET_NOT_AVAILABLE", True, "OffsetNotAvailableException",
     "The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing."),
    (79, "MEMBER_ID_REQUIRED", False, "MemberIdRequiredException",
     "The group member needs to have a valid member id before actually entering a consumer group."),
    (80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "PreferredLeaderNotAvailableException",
     "The preferred leader was not available."),
    (81, "GROUP_MAX_SIZE_REACHED", False, "GroupMaxSizeReachedException",
     "The group has reached its maximum size."),
    (82, "FENCED_INSTANCE_ID", False, "FencedInstanceIdException",
     "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id."),
    (83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True, "EligibleLeadersNotAvailableException",
     "Eligible topic partition leaders are not available."),
    (84, "ELECTION_NOT_NEEDED", True, "ElectionNotNeededException",
     "Leader election not needed for topic partition."),
    (85, "NO_REASSIGNMENT_IN_PROGRESS", False, "NoReassignmentInProgressException",
     "No partition reassignment is in progress."),
    (86, "GROUP_SUBSCRIBED_TO_TOPIC", False, "GroupSubscribedToTopicException",
     "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
    (87, "INVALID_RECORD", False, "InvalidRecordException",
     "This record has failed the validation on broker and hence will be rejected."),
    (88, "UNSTABLE_OFFSET_COMMIT", True, "UnstableOffsetCommitException",
     "There are unstable offsets that need to be cleared."),
    (89, "THROTTLING_QUOTA_EXCEEDED", True, "ThrottlingQuotaExceededException",
     "The throttling quota has been exceeded."),
    (90, "PRODUCER_FENCED", False, "ProducerFencedException",
     "There is a newer producer with the same transactionalId which fences the current one."),
    (91, "RESOURCE_NOT_FOUND", False, "ResourceNotFoundException",
     "A request illegally referred to a resource that does not exist."),
    (92, "DUPLICATE_RESOURCE", False, "DuplicateResourceException",
     "A request illegally referred to the same resource twice."),
    (93, "UNACCEPTABLE_CREDENTIAL", False, "UnacceptableCredentialException",
     "Requested credential would not meet criteria for acceptability."),
    (94, "INCONSISTENT_VOTER_SET", False, "InconsistentVoterSetException",
     "Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters."),
    (95, "INVALID_UPDATE_VERSION", False, "InvalidUpdateVersionException",
     "The given update version was invalid."),
    (96, "FEATURE_UPDATE_FAILED", False, "FeatureUpdateFailedException",
     "Unable to update finalized features due to an unexpected server error."),
    (97, "PRINCIPAL_DESERIALIZATION_FAILURE", False, "PrincipalDeserializationException",
     "Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup."),
    (98, "SNAPSHOT_NOT_FOUND", False, "SnapshotNotFoundException",
     "Requested snapshot was not found."),
    (99, "POSITION_OUT_OF_RANGE", False, "PositionOutOfRangeException",
     "Requested position is not greater than or equal to zero, and less than the size of the snapshot."),
    (100, "UNKNOWN_TOPIC_ID", True, "UnknownTopicIdException",
     "This server does not host this topic ID."),
    (101, "DUPLICATE_BROKER_REGISTRATION", False, "DuplicateBrokerRegistrationException",
     "This broker ID is already in use."),
    (102, "BROKER_ID_NOT_REGISTERED", False, "BrokerIdNotRegisteredException",
     "The given broker ID was not registered."),
    (103, "INCONSISTENT_TOPIC_ID", True, "InconsistentTopicIdException",
     "The log's topic ID did not match the topic ID in the request."),
    (104, "INCONSISTENT_CLUSTER_ID", False, "InconsistentClusterIdException",
     "The clusterId in the request does not match that found on the server."),
    (105, "TRANSACTIONAL_ID_NOT_FOUND", False, "TransactionalIdNotFoundException",
     "The transactionalId could not be found."),
    (106, "FETCH_SESSION_TOPIC_ID_ERROR", True, "FetchSessionTopicIdException",
     "The fetch session encountered inconsistent topic ID usage."),
    (107, "INELIGIBLE_REPLICA", False, "IneligibleReplicaException",
     "The new ISR contains at least one ineligible replica."),
    (108, "NEW_LEADER_ELECTED", False, "NewLeaderElectedException",
     "The AlterPartition request successfully updated the partition state but the leader has changed."),
    (109, "OFFSET_MOVED_TO_TIERED_STORAGE", False, "OffsetMovedToTieredStorageException",
     "The requested offset is moved to tiered storage."),
    (110, "FENCED_MEMBER_EPOCH", False, "FencedMemberEpochException",
     "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin."),
    (111, "UNRELEASED_INSTANCE_ID", False, "UnreleasedInstanceIdException",
     "The instance ID is still used by another member in the consumer group. That member must leave first."),
    (112, "UNSUPPORTED_ASSIGNOR", False, "UnsupportedAssignorException",
     "The assignor or its version range is not supported by the consumer group."),
    (113, "STALE_MEMBER_EPOCH", False, "StaleMemberEpochException",
     "The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API."),
    (114, "MISMATCHED_ENDPOINT_TYPE", False, "MismatchedEndpointTypeException",
     "The request was sent to an endpoint of the wrong type."),
    (115, "UNSUPPORTED_ENDPOINT_TYPE", False, "UnsupportedEndpointTypeException",
     "This endpoint type is not supported yet."),
    (116, "UNKNOWN_CONTROLLER_ID", False, "UnknownControllerIdException",
     "This controller ID is not known."),
    (117, "UNKNOWN_SUBSCRIPTION_ID", False, "UnknownSubscriptionIdException",
     "Client sent a push telemetry request with an invalid or outdated subscription ID."),
    (118, "TELEMETRY_TOO_LARGE", False, "TelemetryTooLargeException",
     "Client sent a push telemetry request larger than the maximum size the broker will accept."),
    (119, "INVALID_REGISTRATION", False, "InvalidRegistrationException",
     "The controller has considered the broker registration to be invalid."),
    (120, "TRANSACTION_ABORTABLE", False, "TransactionAbortableException",
     "The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID."),
    (121, "INVALID_RECORD_STATE", False, "InvalidRecordStateException",
     "The record state is invalid. The acknowledgement of delivery could not be completed."),
    (122, "SHARE_SESSION_NOT_FOUND", True, "ShareSessionNotFoundException",
     "The share session was not found."),
    (123, "INVALID_SHARE_SESSION_EPOCH", True, "InvalidShareSessionEpochException",
     "The share session epoch is invalid."),
    (124, "FENCED_STATE_EPOCH", False, "FencedStateEpochException",
     "The coordinator rejected the request because the state epoch did not match."),
    (125, "INVALID_VOTER_KEY", False, "InvalidVoterKeyException",
     "The voter key doesn't match the receiving replica's key."),
    (126, "DUPLICATE_VOTER", False, "DuplicateVoterException",
     "The voter is already part of the set of voters."),
    (127, "VOTER_NOT_FOUND", False, "VoterNotFoundException",
     "The voter is not part of the set of voters."),
    (128, "INVALID_REGULAR_EXPRESSION", False, "InvalidRegularExpression",
     "The regular expression is not valid."),
    (129, "REBOOTSTRAP_REQUIRED", False, "RebootstrapRequiredException",
     "Client metadata is stale. The client should rebootstrap to obtain new metadata."),
    (130, "STREAMS_INVALID_TOPOLOGY", False, "StreamsInvalidTopologyException",
     "The supplied topology is invalid."),
    (131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False, "StreamsInvalidTopologyEpochException",
     "The supplied topology epoch is invalid."),
    (132, "STREAMS_TOPOLOGY_FENCED", False, "StreamsTopologyFencedException",
     "The supplied topology epoch is outdated."),
    (133, "SHARE_SESSION_LIMIT_REACHED", True, "ShareSessionLimitReachedException",
     "The limit of share sessions has been reached."),
    (134, "GROUP_DELETION_FAILED", False, "GroupDeletionFailedException",
     "DeleteGroups could not complete; see the error message on the per-group result for details."),
    (135, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED", False, "StreamsTopologyDescriptionUpdateFailedException",
     "The broker could not process the topology description update; see the error message for details."),
    (136, "CONTROLLER_ID_NOT_REGISTERED", False, "ControllerIdNotRegisteredException",
     "The given controller ID was not registered."),
)
# fmt: on


class ErrorCode(IntEnum):
    """Kafka error codes, members named as in Kafka's ``Errors`` enum."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    STALE_CONTROLLER_EPOCH = 11
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    SECURITY_DISABLED = 54
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57
    SASL_AUTHENTICATION_FAILED = 58
    UNKNOWN_PRODUCER_ID = 59
    REASSIGNMENT_IN_PROGRESS = 60
    DELEGATION_TOKEN_AUTH_DISABLED = 61
    DELEGATION_TOKEN_NOT_FOUND = 62
    DELEGATION_TOKEN_OWNER_MISMATCH = 63
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65
    DELEGATION_TOKEN_EXPIRED = 66
    INVALID_PRINCIPAL_TYPE = 67
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    LISTENER_NOT_FOUND = 72
    TOPIC_DELETION_DISABLED = 73
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    STALE_BROKER_EPOCH = 77
    OFFSET_NOT_AVAILABLE = 78
    MEMBER_ID_REQUIRED = 79
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    INVALID_RECORD = 87
    UNSTABLE_OFFSET_COMMIT = 88
    THROTTLING_QUOTA_EXCEEDED = 89
    PRODUCER_FENCED = 90
    RESOURCE_NOT_FOUND = 91
    DUPLICATE_RESOURCE = 92
    UNACCEPTABLE_CREDENTIAL = 93
    INCONSISTENT_VOTER_SET = 94
    INVALID_UPDATE_VERSION = 95
    FEATURE_UPDATE_FAILED = 96
    PRINCIPAL_DESERIALIZATION_FAILURE = 97
    SNAPSHOT_NOT_FOUND = 98
    POSITION_OUT_OF_RANGE = 99
    UNKNOWN_TOPIC_ID = 100
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_TOPIC_ID = 103
    INCONSISTENT_CLUSTER_ID = 104
    TRANSACTIONAL_ID_NOT_FOUND = 105
    FETCH_SESSION_TOPIC_ID_ERROR = 106
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    OFFSET_MOVED_TO_TIERED_STORAGE = 109
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    MISMATCHED_ENDPOINT_TYPE = 114
    UNSUPPORTED_ENDPOINT_TYPE = 115
    UNKNOWN_CONTROLLER_ID = 116
    UNKNOWN_SUBSCRIPTION_ID = 117
    TELEMETRY_TOO_LARGE = 118
    INVALID_REGISTRATION = 119
    TRANSACTION_ABORTABLE = 120
    INVALID_RECORD_STATE = 121
    SHARE_SESSION_NOT_FOUND = 122
    INVALID_SHARE_SESSION_EPOCH = 123
    FENCED_STATE_EPOCH = 124
    INVALID_VOTER_KEY = 125
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127
    INVALID_REGULAR_EXPRESSION = 128
    REBOOTSTRAP_REQUIRED = 129
    STREAMS_INVALID_TOPOLOGY = 130
    STREAMS_INVALID_TOPOLOGY_EPOCH = 131
    STREAMS_TOPOLOGY_FENCED = 132
    SHARE_SESSION_LIMIT_REACHED = 133
    GROUP_DELETION_FAILED = 134
    STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED = 135
    CONTROLLER_ID_NOT_REGISTERED = 136


ERRORS: dict[int, ErrorInfo] = {row[0]: ErrorInfo(*row) for row in _TABLE}
ERRORS_BY_NAME: dict[str, ErrorInfo] = {e.name: e for e in ERRORS.values()}
UNKNOWN_SERVER_ERROR = ERRORS[-1]


def error_info(code: int) -> ErrorInfo:
    """The error for ``code``; unknown codes give UNKNOWN_SERVER_ERROR (like ``Errors.forCode``)."""
    return ERRORS.get(code, UNKNOWN_SERVER_ERROR)


def error_name(code: int) -> str:
    """Kafka's name for ``code``, or ``"UNKNOWN_ERROR_CODE(<code>)"`` for a code Kafka 4.4.0 lacks."""
    info = ERRORS.get(code)
    return info.name if info is not None else f"UNKNOWN_ERROR_CODE({code})"


def is_retriable(code: int) -> bool:
    """Whether Kafka's exception for ``code`` is retriable (unknown codes: no)."""
    info = ERRORS.get(code)
    return info is not None and info.retriable


def error_message(code: int) -> str:
    """Kafka's default message for ``code`` (unknown codes get UNKNOWN_SERVER_ERROR's)."""
    return error_info(code).message
