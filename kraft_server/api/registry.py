"""Every API we serve, declared once (``API``): its versions on each listener, who
answers it, whether a broker may forward it in an Envelope, its write to the active
controller, its error answer, its deadline and the authorizer's checks.
What reads the table: the dispatcher (``dispatch.py``), ApiVersions
(``listener_apis``), the envelope path (``controller_writes.py``), the write queue's
deadlines (``deadlines.py``) and the authorizer (``authorize.py``);
``docs/compatibility.md`` is rendered from it (``python -m tools.docs_compat``).

A controller listener serves ``Api.controller``, any other listener (the client
listener: ``__cluster_metadata`` as a topic, the classic consumer groups,
``kafka-metadata-quorum --bootstrap-server``) ``Api.client``. An ApiVersions answer
lists exactly these; any other key gets its connection closed, as from Kafka for an
unknown key. ``reconfiguration``: listed only when the core implements voter changes
(``RaftNode.SUPPORTS_RECONFIGURATION``). ``note``: where we differ from Kafka on purpose.

Adding an API: one ``Api(...)`` below (the request and response classes come from
``schemas/`` through ``python -m codegen``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kraft_server.controller import admin_requests as admin
from kraft_server.controller.acls import control as acl_control
from kraft_server.controller.quotas.answers import alter_client_quotas_error_response
from kraft_server.controller.quotas.control import alter_client_quotas_op
from kraft_server.controller.scram import control as scram_control
from kraft_server.controller.cluster import unregister_controller
from kraft_server.controller.replication import reassignment
from kraft_server.security import acls as A
from wire.messages import REQUESTS
from wire.messages import (  # the active controller's APIs (kraft_server/controller)
    AllocateProducerIdsRequest, AlterPartitionRequest, AssignReplicasToDirsRequest, BrokerHeartbeatRequest, BrokerRegistrationRequest,
    CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest, EnvelopeRequest,
    UnregisterBrokerRequest, UnregisterControllerRequest,
)
from wire.messages import AlterPartitionReassignmentsRequest, ListPartitionReassignmentsRequest
from wire.messages import AlterConfigsRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest  # configs
from wire.messages import AlterClientQuotasRequest, AlterUserScramCredentialsRequest
from wire.messages import CreateDelegationTokenRequest, DescribeDelegationTokenRequest, ExpireDelegationTokenRequest
from wire.messages import RenewDelegationTokenRequest
from wire.messages import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest, SaslAuthenticateRequest, SaslHandshakeRequest
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

from . import acl_requests, config_requests, controller_writes, deadlines
from .api_versions import handle_api_versions_request
from .broker_lifecycle import handle_broker_heartbeat_request, handle_broker_registration_request
from .controller_registration import handle_controller_registration_request
from .describe_cluster import handle_describe_cluster_request
from .delegation_tokens import handle_delegation_token_request, handle_describe_delegation_token_request
from .describe_quorum import handle_describe_quorum_request
from .error_answer import error_answer
from .groups import handle as handle_group_request
from .metadata import handle_metadata_request
from .raft_rpcs import to_core
from .topic.describe_topic_partitions import handle_describe_topic_partitions_request
from .topic.list_offsets import handle_list_offsets_request
from .topic.offset_for_leader_epoch import handle_offset_for_leader_epoch_request
from .topic.produce import handle_produce_request
from .update_features import forwarded_to_controller


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
CONTROLLER_REGISTRATION = ControllerRegistrationRequest.API_KEY
ADD_RAFT_VOTER = AddRaftVoterRequest.API_KEY
REMOVE_RAFT_VOTER = RemoveRaftVoterRequest.API_KEY
UPDATE_RAFT_VOTER = UpdateRaftVoterRequest.API_KEY
PRODUCE = ProduceRequest.API_KEY
LIST_OFFSETS = ListOffsetsRequest.API_KEY
FIND_COORDINATOR = FindCoordinatorRequest.API_KEY
OFFSET_FOR_LEADER_EPOCH = OffsetForLeaderEpochRequest.API_KEY
DESCRIBE_TOPIC_PARTITIONS = DescribeTopicPartitionsRequest.API_KEY
BROKER_REGISTRATION = BrokerRegistrationRequest.API_KEY
BROKER_HEARTBEAT = BrokerHeartbeatRequest.API_KEY
CREATE_TOPICS = CreateTopicsRequest.API_KEY
DELETE_TOPICS = DeleteTopicsRequest.API_KEY
ALTER_PARTITION = AlterPartitionRequest.API_KEY
CREATE_PARTITIONS = CreatePartitionsRequest.API_KEY
UNREGISTER_BROKER = UnregisterBrokerRequest.API_KEY
UNREGISTER_CONTROLLER = UnregisterControllerRequest.API_KEY
ELECT_LEADERS = ElectLeadersRequest.API_KEY
ALLOCATE_PRODUCER_IDS = AllocateProducerIdsRequest.API_KEY
ASSIGN_REPLICAS_TO_DIRS = AssignReplicasToDirsRequest.API_KEY
ENVELOPE = EnvelopeRequest.API_KEY
ALTER_PARTITION_REASSIGNMENTS = AlterPartitionReassignmentsRequest.API_KEY
LIST_PARTITION_REASSIGNMENTS = ListPartitionReassignmentsRequest.API_KEY
DESCRIBE_CONFIGS = DescribeConfigsRequest.API_KEY
ALTER_CONFIGS = AlterConfigsRequest.API_KEY
INCREMENTAL_ALTER_CONFIGS = IncrementalAlterConfigsRequest.API_KEY
ALTER_CLIENT_QUOTAS = AlterClientQuotasRequest.API_KEY
ALTER_USER_SCRAM_CREDENTIALS = AlterUserScramCredentialsRequest.API_KEY
CREATE_DELEGATION_TOKEN = CreateDelegationTokenRequest.API_KEY
RENEW_DELEGATION_TOKEN = RenewDelegationTokenRequest.API_KEY
EXPIRE_DELEGATION_TOKEN = ExpireDelegationTokenRequest.API_KEY
DESCRIBE_DELEGATION_TOKEN = DescribeDelegationTokenRequest.API_KEY
CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS = CreateAclsRequest.API_KEY, DescribeAclsRequest.API_KEY, DeleteAclsRequest.API_KEY
SASL_HANDSHAKE, SASL_AUTHENTICATE = SaslHandshakeRequest.API_KEY, SaslAuthenticateRequest.API_KEY

Versions = tuple[int, int]


@dataclass(frozen=True)
class Api:
    """One API. ``handler(dispatcher, call)`` answers it (None: answered before
    dispatch). ``envelope``: a broker may forward it in an Envelope, at the controller
    listener's versions. ``write(version, body, settings) -> (run, fail)``: its
    metadata write in the active controller's queue (``controller_writes.py``).
    ``error_response(version, body, code)``: every part of the request answered with
    ``code`` (None: Kafka's generic ``getErrorResponse``, ``error_answer``).
    ``deadline(version, body)``: whether Kafka's controller queues an event whose
    deadline is the request's TimeoutMs (``deadlines.py``). The authorizer's
    checks (``authorize.py``): ``cluster_check``, the ACL operation on the CLUSTER the
    whole request needs; ``topic_check``, the one on each TOPIC it names;
    ``config_check``, the one on each config resource; ``client_topic_check``, the
    one on each TOPIC whose entries a client listener's answer shows.
    ``core``: the Raft core may answer it (``raft_rpcs.py``)."""
    key: int
    handler: Callable | None
    controller: Versions | None = None
    client: Versions | None = None
    reconfiguration: bool = False
    envelope: bool = False
    write: Callable | None = None
    error_response: Callable | None = None
    deadline: Callable | None = None
    cluster_check: int | None = None
    topic_check: int | None = None
    config_check: int | None = None
    client_topic_check: int | None = None
    core: bool = False
    note: str = ""

    @property
    def name(self) -> str:
        return REQUESTS[self.key].__name__.removesuffix("Request")


# -- handlers: (dispatcher, call) ----------------------------------------------------
def _core(d, call) -> None:
    d.submit(to_core(call))


def _fetch(d, call) -> None:
    """A consumer's Fetch on a client listener is served from the topic; a replica's
    goes to the core (on a controller listener ``Dispatcher`` sends it there first)."""
    if d.consumer_fetch_call(call):
        d.consumer_fetch.handle(call)
    else:
        _core(d, call)


def _update_features(d, call) -> None:
    if not forwarded_to_controller(call, d.view):  # kraft.version alone: the core's
        _core(d, call)


def _api_versions(d, call) -> None:
    # KIP-1242's target is checked on a client listener, as a broker's KafkaApis does;
    # not on a controller listener, nor before SASL completes (Kafka's
    # SaslServerAuthenticator answers that ApiVersions itself, unchecked).
    unchecked = d.on_controller_listener(call) or call.pipeline.authenticating
    handle_api_versions_request(call, d.tables[call.listener], d.view.features(),
                                None if unchecked else (d.view.cluster_id, d.view.node_id))


def _describe_cluster(d, call) -> None:
    handle_describe_cluster_request(call, d.view, controller_listener=d.on_controller_listener(call),
                                    advertised=d.advertised)


def _describe_quorum(d, call) -> None:
    handle_describe_quorum_request(call, d.view)


def _controller_registration(d, call) -> None:
    handle_controller_registration_request(call, d.view)


def _broker_registration(d, call) -> None:
    handle_broker_registration_request(call, d.view)


def _broker_heartbeat(d, call) -> None:
    handle_broker_heartbeat_request(call, d.view)


def _controller_write(d, call) -> None:
    controller_writes.handle_controller_write(call, d.view)


def _envelope(d, call) -> None:
    controller_writes.handle_envelope_request(call, d.view, d, d.guard)


def _delegation_token(d, call) -> None:
    handle_delegation_token_request(call, d.view, d.guard, may_forward=not d.on_controller_listener(call))


def _describe_delegation_token(d, call) -> None:
    handle_describe_delegation_token_request(call, d.view, d.guard)


def _acls(d, call) -> None:
    acl_requests.handle_acl_request(call, d.view, d.guard is not None)


def _describe_configs(d, call) -> None:
    config_requests.handle_describe_configs_request(call, d.view)


def _alter_configs(d, call) -> None:
    config_requests.handle_alter_configs_request(call, d.view)


def _metadata(d, call) -> None:
    handle_metadata_request(call, d.view, d.advertised, d.topics)


def _list_offsets(d, call) -> None:
    handle_list_offsets_request(call, d.topics)


def _offset_for_leader_epoch(d, call) -> None:
    handle_offset_for_leader_epoch_request(call, d.topics)


def _describe_topic_partitions(d, call) -> None:
    handle_describe_topic_partitions_request(call, d.topics)


def _produce(d, call) -> None:
    handle_produce_request(call, d.topics)


def _group(d, call) -> None:
    if d.groups is None:  # no group service (unit tests): our bug if it is ever reached
        raise LookupError(f"no handler for API key {call.api_key}")
    handle_group_request(call, d.groups, d.view.node_id, d.advertised)


def _configs_write(key: int) -> Callable:
    return lambda version, body, settings: config_requests.alter_configs_op(key, version, body)[1]


def _configs_error(key: int) -> Callable:
    return lambda version, body, code: config_requests.error_response(key, body, code)


# -- the table -----------------------------------------------------------------------
_CA, _AL, _DE = A.CLUSTER_ACTION, A.ALTER, A.DESCRIBE
_GROUP = "classic consumer groups (`api/groups`)"
_TOPIC = "`__cluster_metadata` and its companions as topics (`api/topic`)"
_TOKENS = "on a client listener too; another node forwards them to the active controller, as a broker"
APIS: tuple[Api, ...] = (
    # Raft RPCs (the core's, raft_rpcs.py), and what brokers and controllers send about themselves
    Api(FETCH, _fetch, controller=(4, 18), client=(4, 18), cluster_check=_CA, client_topic_check=A.READ, core=True,
        note="on a client listener a consumer's Fetch (replica id < 0) reads the topic; a replica's goes to the core"),
    Api(VOTE, _core, controller=(0, 2), cluster_check=_CA, core=True),
    Api(BEGIN_QUORUM_EPOCH, _core, controller=(0, 1), cluster_check=_CA, core=True),
    Api(END_QUORUM_EPOCH, _core, controller=(0, 1), cluster_check=_CA, core=True),
    Api(FETCH_SNAPSHOT, _core, controller=(0, 1), cluster_check=_CA, core=True),
    Api(UPDATE_RAFT_VOTER, _core, controller=(0, 0), cluster_check=_CA, core=True),
    Api(ADD_RAFT_VOTER, _core, controller=(0, 1), client=(0, 1), reconfiguration=True, envelope=True,
        cluster_check=_AL, core=True),
    Api(REMOVE_RAFT_VOTER, _core, controller=(0, 0), client=(0, 0), reconfiguration=True, envelope=True,
        cluster_check=_AL, core=True),
    Api(UPDATE_FEATURES, _update_features, controller=(0, 2), envelope=True, cluster_check=_AL, core=True,
        note="kraft.version alone is the Raft core's; any other feature the active controller's"),
    Api(CONTROLLER_REGISTRATION, _controller_registration, controller=(0, 0), cluster_check=_CA),
    Api(BROKER_REGISTRATION, _broker_registration, controller=(0, 4), cluster_check=_CA),
    Api(BROKER_HEARTBEAT, _broker_heartbeat, controller=(0, 2), cluster_check=_CA),
    Api(ALTER_PARTITION, _controller_write, controller=(2, 3), cluster_check=_CA,
        write=lambda v, b, s: admin.alter_partition_op(b, v),
        error_response=lambda v, b, code: admin.alter_partition_error_response(code)),
    Api(ALLOCATE_PRODUCER_IDS, _controller_write, controller=(0, 0), cluster_check=_CA,
        write=lambda v, b, s: admin.allocate_producer_ids_op(b),
        error_response=lambda v, b, code: admin.allocate_error_response(code)),
    Api(ASSIGN_REPLICAS_TO_DIRS, _controller_write, controller=(0, 0), cluster_check=_CA,
        write=lambda v, b, s: admin.assign_dirs_op(b),
        error_response=lambda v, b, code: admin.assign_dirs_error_response(code)),
    Api(ENVELOPE, _envelope, controller=(0, 0), cluster_check=_CA),
    # answered on any node, from its views
    Api(API_VERSIONS, _api_versions, controller=(0, 5), client=(0, 5)),
    Api(DESCRIBE_QUORUM, _describe_quorum, controller=(0, 3), client=(0, 3), envelope=True, cluster_check=_DE,
        note="v3 adds CommittedVoters (KIP-1204 draft, ours); Kafka stops at v2 and its clients negotiate down"),
    # sic: Kafka's ControllerApis.handleDescribeCluster asks ALTER
    Api(DESCRIBE_CLUSTER, _describe_cluster, controller=(0, 2), client=(0, 2), cluster_check=_AL),
    Api(SASL_HANDSHAKE, None, controller=(0, 1), client=(0, 1),
        note="answered by the connection's SASL gate (`net/sasl_gate.py`)"),
    Api(SASL_AUTHENTICATE, None, controller=(0, 2), client=(0, 2),
        note="answered by the connection's SASL gate (`net/sasl_gate.py`)"),
    # the active controller's writes (controller_writes.py)
    Api(CREATE_TOPICS, _controller_write, controller=(2, 7), envelope=True, topic_check=A.CREATE,
        write=lambda v, b, s: admin.create_topics_op(b, v, settings=s),
        error_response=lambda v, b, code: admin.create_topics_error_response(b, code),
        deadline=deadlines.create_topics_queued),
    Api(DELETE_TOPICS, _controller_write, controller=(1, 6), envelope=True, topic_check=A.DELETE,
        write=lambda v, b, s: admin.delete_topics_op(b, v),
        error_response=lambda v, b, code: admin.delete_topics_error_response(b, v, code),
        deadline=deadlines.delete_topics_queued),
    Api(CREATE_PARTITIONS, _controller_write, controller=(0, 3), envelope=True, topic_check=A.ALTER,
        write=lambda v, b, s: admin.create_partitions_op(b, v),
        error_response=lambda v, b, code: admin.create_partitions_error_response(b, code),
        deadline=deadlines.create_partitions_queued),
    Api(ELECT_LEADERS, _controller_write, controller=(0, 2), envelope=True, cluster_check=_AL,
        write=lambda v, b, s: admin.elect_leaders_op(b, v),
        error_response=lambda v, b, code: admin.elect_leaders_error_response(b, v, code),
        deadline=deadlines.elect_leaders_queued),
    Api(UNREGISTER_BROKER, _controller_write, controller=(0, 0), envelope=True, cluster_check=_AL,
        write=lambda v, b, s: admin.unregister_broker_op(b),
        error_response=lambda v, b, code: admin.unregister_error_response(code)),
    Api(UNREGISTER_CONTROLLER, _controller_write, controller=(0, 0), envelope=True, cluster_check=_AL,
        write=lambda v, b, s: unregister_controller.unregister_controller_op(b, s.node_id),
        error_response=lambda v, b, code: unregister_controller.error_response(code)),
    Api(ALTER_PARTITION_REASSIGNMENTS, _controller_write, controller=(0, 1), envelope=True, cluster_check=_AL,
        write=lambda v, b, s: reassignment.alter_reassignments_op(b, v),
        error_response=lambda v, b, code: reassignment.alter_error_response(b, code),
        deadline=deadlines.always_queued),
    Api(LIST_PARTITION_REASSIGNMENTS, _controller_write, controller=(0, 0), envelope=True, cluster_check=_DE,
        write=lambda v, b, s: reassignment.list_reassignments_op(b),
        error_response=lambda v, b, code: reassignment.list_error_response(b, code)),
    Api(ALTER_CLIENT_QUOTAS, _controller_write, controller=(0, 1), envelope=True, cluster_check=A.ALTER_CONFIGS,
        write=lambda v, b, s: alter_client_quotas_op(b),
        error_response=lambda v, b, code: alter_client_quotas_error_response(b, code)),
    Api(ALTER_USER_SCRAM_CREDENTIALS, _controller_write, controller=(0, 0), envelope=True, cluster_check=_AL,
        write=lambda v, b, s: scram_control.alter_user_scram_credentials_op(b),
        error_response=lambda v, b, code: scram_control.alter_user_scram_credentials_error_response(b, code)),
    # delegation tokens (delegation_tokens.py, controller/tokens/): decided on the image,
    # written through the write queue. Also on the client listener, where Kafka's
    # AdminClient sends them (a broker's, not a controller's)
    Api(CREATE_DELEGATION_TOKEN, _delegation_token, controller=(1, 3), client=(1, 3), envelope=True,
        note=_TOKENS),
    Api(RENEW_DELEGATION_TOKEN, _delegation_token, controller=(1, 2), client=(1, 2), envelope=True,
        note=_TOKENS),
    Api(EXPIRE_DELEGATION_TOKEN, _delegation_token, controller=(1, 2), client=(1, 2), envelope=True,
        note=_TOKENS),
    Api(DESCRIBE_DELEGATION_TOKEN, _describe_delegation_token, controller=(1, 3), client=(1, 3),
        note="answered by any node from its image, as a broker (Kafka's controller lists it, does not handle it)"),
    # configs (config_requests.py)
    Api(DESCRIBE_CONFIGS, _describe_configs, controller=(1, 4), config_check=A.DESCRIBE_CONFIGS),
    Api(ALTER_CONFIGS, _alter_configs, controller=(0, 2), envelope=True, config_check=A.ALTER_CONFIGS,
        write=_configs_write(ALTER_CONFIGS), error_response=_configs_error(ALTER_CONFIGS)),
    Api(INCREMENTAL_ALTER_CONFIGS, _alter_configs, controller=(0, 1), envelope=True, config_check=A.ALTER_CONFIGS,
        write=_configs_write(INCREMENTAL_ALTER_CONFIGS), error_response=_configs_error(INCREMENTAL_ALTER_CONFIGS)),
    # ACLs (acl_requests.py, controller/acls/control.py)
    Api(DESCRIBE_ACLS, _acls, controller=(1, 3), cluster_check=_DE),
    Api(CREATE_ACLS, _acls, controller=(1, 3), envelope=True, cluster_check=_AL,
        write=lambda v, b, s: acl_control.create_acls_op(b),
        error_response=lambda v, b, code: acl_control.create_acls_error_response(b, code)),
    Api(DELETE_ACLS, _acls, controller=(1, 3), envelope=True, cluster_check=_AL,
        write=lambda v, b, s: acl_control.delete_acls_op(b),
        error_response=lambda v, b, code: acl_control.delete_acls_error_response(b, code)),
    # the client listener: the metadata topic, and the classic consumer groups
    Api(METADATA, _metadata, client=(0, 13), client_topic_check=_DE, note=_TOPIC),
    Api(LIST_OFFSETS, _list_offsets, client=(1, 11), client_topic_check=_DE, note=_TOPIC),
    Api(OFFSET_FOR_LEADER_EPOCH, _offset_for_leader_epoch, client=(2, 4), client_topic_check=_DE, note=_TOPIC),
    Api(DESCRIBE_TOPIC_PARTITIONS, _describe_topic_partitions, client=(0, 0), client_topic_check=_DE, note=_TOPIC),
    Api(PRODUCE, _produce, client=(0, 13),
        note="advertised from v0 as Kafka brokers do (KAFKA-18659, for librdkafka); refused, below v3 the connection closes"),
    Api(OffsetCommitRequest.API_KEY, _group, client=(2, 10), note=_GROUP),
    Api(OffsetFetchRequest.API_KEY, _group, client=(1, 10), note=_GROUP),
    Api(FIND_COORDINATOR, _group, client=(0, 6), note=_GROUP),
    Api(JoinGroupRequest.API_KEY, _group, client=(0, 9), note=_GROUP),
    Api(HeartbeatRequest.API_KEY, _group, client=(0, 4), note=_GROUP),
    Api(LeaveGroupRequest.API_KEY, _group, client=(0, 5), note=_GROUP),
    Api(SyncGroupRequest.API_KEY, _group, client=(0, 5), note=_GROUP),
    Api(DescribeGroupsRequest.API_KEY, _group, client=(0, 6), note=_GROUP),
    Api(ListGroupsRequest.API_KEY, _group, client=(0, 5), note=_GROUP),
    Api(DeleteGroupsRequest.API_KEY, _group, client=(0, 3), note=_GROUP),
    Api(OffsetDeleteRequest.API_KEY, _group, client=(0, 0), note=_GROUP),
)
API: dict[int, Api] = {api.key: api for api in sorted(APIS, key=lambda a: a.key)}
if len(API) != len(APIS):
    raise ValueError("an API key declared twice")


def listener_apis(is_controller_listener: bool, *, reconfiguration: bool = False) -> dict[int, Versions]:
    """The ``{api_key: (min, max)}`` table of one listener, sorted by key."""
    return {api.key: versions for api in API.values()
            if (versions := api.controller if is_controller_listener else api.client) is not None
            and (reconfiguration or not api.reconfiguration)}


def error_response(api_key: int, version: int, body, code: int):
    """Every part of the request answered with ``code`` (NOT_CONTROLLER, a deadline, or
    the authorizer's refusal): the Api's own ``error_response`` where it has one (the
    controller's handlers, which carry the error's default message), otherwise Kafka's
    generic ``getErrorResponse`` (``error_answer``, no message)."""
    api = API.get(api_key)
    if api is not None and api.error_response is not None:
        return api.error_response(version, body, code)
    return error_answer(api_key, version, body, code)


def deadline(api_key: int, version: int, body) -> int | None:
    """The TimeoutMs to give the write queue, or None (``deadlines.py``)."""
    api = API.get(api_key)
    if api is None or api.deadline is None or not api.deadline(version, body):
        return None
    return body.timeout_ms


# Views of the table, by the names the rest of the code and the tests know.
CONTROLLER_APIS = listener_apis(True)
CLIENT_APIS = listener_apis(False)
SASL_APIS = {key: API[key].controller for key in (SASL_HANDSHAKE, SASL_AUTHENTICATE)}
CORE_APIS = frozenset(api.key for api in APIS if api.core)
ENVELOPED = {api.key: api.controller for api in API.values() if api.envelope}
