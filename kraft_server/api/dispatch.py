"""Routes each decoded request to its handler (one module per API family).

The pipeline (``kraft_server/net/pipeline.py``) has already checked that the API and
version are served on the listener, so every call here has a handler.
"""
from __future__ import annotations

import logging

from . import registry
from .acl_requests import handle_acl_request
from .api_versions import handle_api_versions_request
from .broker_lifecycle import handle_broker_heartbeat_request, handle_broker_registration_request
from .controller_registration import handle_controller_registration_request
from .controller_writes import handle_controller_write, handle_envelope_request
from .config_requests import handle_alter_configs_request, handle_describe_configs_request
from .describe_cluster import handle_describe_cluster_request
from .describe_quorum import handle_describe_quorum_request
from .groups import handle as handle_group_request
from .metadata import handle_metadata_request
from .raft_rpcs import to_core
from .update_features import forwarded_to_controller
from .topic.consumer_fetch import replica_id
from .topic.describe_topic_partitions import handle_describe_topic_partitions_request
from .topic.list_offsets import handle_list_offsets_request
from .topic.offset_for_leader_epoch import handle_offset_for_leader_epoch_request
from .topic.produce import handle_produce_request

log = logging.getLogger(__name__)


class Dispatcher:
    """``dispatcher(call)``: answer locally or hand the call to the Raft core.

    ``submit(inbound_request)`` queues a request for the core (the Ready loop
    steps it in); ``tables`` maps each listener name to its API table;
    ``advertised`` maps listener names to the (host, port) we advertise;
    ``topics`` (``topic.catalog.Topics``) and ``consumer_fetch`` serve
    ``__cluster_metadata`` and its companion topics to consumers on client listeners (None: no topic, e.g. in unit tests); ``groups`` answers the
    consumer-group APIs (``kraft_server/api/groups``)."""

    def __init__(self, view, submit, *, tables: dict[str, dict[int, tuple[int, int]]],
                 controller_listeners: set[str], advertised: dict[str, tuple[str, int]],
                 topics=None, consumer_fetch=None, groups=None, guard=None):
        self.view = view
        self.topics = topics
        self.consumer_fetch = consumer_fetch
        self.groups = groups  # kraft_server.api.groups.GroupService (client listener)
        self.submit = submit
        self.tables = tables
        self.controller_listeners = controller_listeners
        self.advertised = advertised
        self.guard = guard  # authorize.Guard when authorizer.class.name is set

    def __call__(self, call) -> None:
        if self.guard is not None:  # authorize.py: None when refused (answered)
            if call.listener in self.controller_listeners:
                call = self.guard.admit(call)
            else:
                call = self.guard.admit_client(call, self.topics, call.api_key == registry.FETCH
                                               and not self._consumer_fetch(call))
            if call is None:
                return
        key = call.api_key
        if key == registry.FETCH and call.listener in self.controller_listeners:
            self.submit(to_core(call))  # the hot path: replicas' Fetches, straight to the core
        elif key == registry.API_VERSIONS:
            # KIP-1242's target is checked on a client listener, as a broker's KafkaApis does;
            # not on a controller listener, nor before SASL completes (Kafka's
            # SaslServerAuthenticator answers that ApiVersions itself, unchecked).
            unchecked = (call.listener in self.controller_listeners
                         or getattr(call.pipeline, "authenticating", False))
            handle_api_versions_request(call, self.tables[call.listener], self.view.features(),
                                        None if unchecked else (self.view.cluster_id, self.view.node_id))
        elif key == registry.DESCRIBE_CLUSTER:
            handle_describe_cluster_request(
                call, self.view, controller_listener=call.listener in self.controller_listeners,
                advertised=self.advertised)
        elif key == registry.DESCRIBE_QUORUM:
            handle_describe_quorum_request(call, self.view)
        elif key == registry.CONTROLLER_REGISTRATION:
            handle_controller_registration_request(call, self.view)
        elif key == registry.BROKER_HEARTBEAT:
            handle_broker_heartbeat_request(call, self.view)
        elif key == registry.BROKER_REGISTRATION:
            handle_broker_registration_request(call, self.view)
        elif key in (registry.CREATE_TOPICS, registry.DELETE_TOPICS, registry.ALTER_PARTITION,
                     registry.CREATE_PARTITIONS, registry.UNREGISTER_BROKER, registry.ELECT_LEADERS,
                     registry.ALLOCATE_PRODUCER_IDS, registry.ASSIGN_REPLICAS_TO_DIRS,
                     registry.ALTER_CLIENT_QUOTAS, registry.UNREGISTER_CONTROLLER):
            handle_controller_write(call, self.view)
        elif key in (registry.ALTER_PARTITION_REASSIGNMENTS, registry.LIST_PARTITION_REASSIGNMENTS,
                     registry.ALTER_USER_SCRAM_CREDENTIALS):
            handle_controller_write(call, self.view)
        elif key in registry.ACL_APIS:
            handle_acl_request(call, self.view, self.guard is not None)
        elif key == registry.ENVELOPE:
            handle_envelope_request(call, self.view, self)
        elif key == registry.DESCRIBE_CONFIGS:
            handle_describe_configs_request(call, self.view)
        elif key in (registry.ALTER_CONFIGS, registry.INCREMENTAL_ALTER_CONFIGS):
            handle_alter_configs_request(call, self.view)
        elif key == registry.METADATA:
            handle_metadata_request(call, self.view, self.advertised, self.topics)
        elif key == registry.FETCH and self._consumer_fetch(call):
            self.consumer_fetch.handle(call)
        elif key == registry.LIST_OFFSETS:
            handle_list_offsets_request(call, self.topics)
        elif key == registry.OFFSET_FOR_LEADER_EPOCH:
            handle_offset_for_leader_epoch_request(call, self.topics)
        elif key == registry.DESCRIBE_TOPIC_PARTITIONS:
            handle_describe_topic_partitions_request(call, self.topics)
        elif key in registry.GROUP_APIS and self.groups is not None:
            handle_group_request(call, self.groups, self.view.node_id, self.advertised)
        elif key == registry.PRODUCE:
            handle_produce_request(call, self.topics)
        elif key == registry.UPDATE_FEATURES and forwarded_to_controller(call, self.view):
            pass  # every feature but kraft.version alone: the active controller's (update_features.py)
        elif key in registry.CORE_APIS:
            if key != registry.FETCH and log.isEnabledFor(logging.DEBUG):
                log.debug("received %s on %s", type(call.body).__name__, call.listener)
            self.submit(to_core(call))
        else:  # the listener table let through a key with no handler: our bug
            raise LookupError(f"no handler for API key {key}")

    def _consumer_fetch(self, call) -> bool:
        """A consumer's Fetch (replica id < 0) on a client listener; the Raft fetch
        between quorum members (and any fetch on a controller listener) goes to the core."""
        return (self.consumer_fetch is not None and call.listener not in self.controller_listeners
                and replica_id(call.api_version, call.body) < 0)
