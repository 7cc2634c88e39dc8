"""The authorizer's checks on the controller listener, in one table, as Kafka's
``ControllerApis`` makes them (``authHelper.authorizeClusterOperation`` and
``authorize`` calls of each handler; ``AclApis`` for the ACL APIs).

``CLUSTER_CHECKS``: the operation on the CLUSTER resource ``kafka-cluster`` that the
whole request needs; refused, the answer is CLUSTER_AUTHORIZATION_FAILED with Kafka's
message ("Request ... needs ALTER permission.") where the response has one.
``TOPIC_CHECKS``: CreateTopics, DeleteTopics and CreatePartitions pass with the
operation on CLUSTER, or on every topic they name (TOPIC resources); otherwise each
topic is answered TOPIC_AUTHORIZATION_FAILED. ``CONFIG_CHECKS``: ALTER_CONFIGS or
DESCRIBE_CONFIGS on CLUSTER for broker resources and on TOPIC for topics, each
refused resource answered with its own error.

The Envelope: the forwarding broker needs CLUSTER_ACTION (else the EnvelopeResponse
carries CLUSTER_AUTHORIZATION_FAILED); the inner request is then checked as the
client's principal (``RequestPrincipal``, DefaultPrincipalData after a 2-byte
version) from the client's address (``ClientHostAddress``).

Differences from Kafka: a request naming several topics or config resources of
which only some are refused is refused whole (Kafka answers the allowed ones).
"""
from __future__ import annotations

import logging

from kraft_server.security import acls as A
from wire.errors import ErrorCode
from wire.messages import RESPONSES

from . import registry as r
from wire.messages import DescribeConfigsResponse
from wire.messages.describe_configs_response import DescribeConfigsResult

from .config_requests import error_response as config_error_response, results_response as config_results
from .controller_writes import error_response

log = logging.getLogger(__name__)

CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS = 30, 29, 31
CLUSTER_CHECKS: dict[int, int] = {
    # Raft RPCs and what brokers and controllers send about themselves
    r.FETCH: A.CLUSTER_ACTION, r.FETCH_SNAPSHOT: A.CLUSTER_ACTION, r.VOTE: A.CLUSTER_ACTION,
    r.BEGIN_QUORUM_EPOCH: A.CLUSTER_ACTION, r.END_QUORUM_EPOCH: A.CLUSTER_ACTION,
    r.UPDATE_RAFT_VOTER: A.CLUSTER_ACTION, r.CONTROLLER_REGISTRATION: A.CLUSTER_ACTION,
    r.BROKER_REGISTRATION: A.CLUSTER_ACTION, r.BROKER_HEARTBEAT: A.CLUSTER_ACTION,
    r.ALTER_PARTITION: A.CLUSTER_ACTION, r.ALLOCATE_PRODUCER_IDS: A.CLUSTER_ACTION,
    r.ASSIGN_REPLICAS_TO_DIRS: A.CLUSTER_ACTION, r.ENVELOPE: A.CLUSTER_ACTION,
    # administration
    r.ADD_RAFT_VOTER: A.ALTER, r.REMOVE_RAFT_VOTER: A.ALTER, r.UPDATE_FEATURES: A.ALTER,
    r.ELECT_LEADERS: A.ALTER, r.UNREGISTER_BROKER: A.ALTER, r.ALTER_PARTITION_REASSIGNMENTS: A.ALTER,
    r.ALTER_USER_SCRAM_CREDENTIALS: A.ALTER, CREATE_ACLS: A.ALTER, DELETE_ACLS: A.ALTER,
    r.DESCRIBE_CLUSTER: A.ALTER,  # sic: ControllerApis.handleDescribeCluster asks ALTER
    r.DESCRIBE_QUORUM: A.DESCRIBE, r.LIST_PARTITION_REASSIGNMENTS: A.DESCRIBE, DESCRIBE_ACLS: A.DESCRIBE,
    r.ALTER_CLIENT_QUOTAS: A.ALTER_CONFIGS,
}
TOPIC_CHECKS: dict[int, int] = {r.CREATE_TOPICS: A.CREATE, r.DELETE_TOPICS: A.DELETE,
                                r.CREATE_PARTITIONS: A.ALTER}
CONFIG_CHECKS: dict[int, int] = {r.ALTER_CONFIGS: A.ALTER_CONFIGS, r.INCREMENTAL_ALTER_CONFIGS: A.ALTER_CONFIGS,
                                 r.DESCRIBE_CONFIGS: A.DESCRIBE_CONFIGS}
# config resource type -> (ACL resource type, error when refused)
_CONFIG_RESOURCES = {2: (A.TOPIC, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                     32: (A.GROUP, ErrorCode.GROUP_AUTHORIZATION_FAILED)}


def call_host(call) -> str:
    host = getattr(call, "host", None)
    if host is None:
        peer = getattr(getattr(call, "pipeline", None), "peer", None)
        host = peer[0] if isinstance(peer, tuple) and peer else ""
    return host


def _topic_names(api_key: int, body) -> list[str]:
    if api_key == r.DELETE_TOPICS:
        names = [t.name for t in getattr(body, "topics", ()) or ()]
        return names + list(getattr(body, "topic_names", ()) or ())
    return [t.name for t in body.topics]


def refusal(api_key: int, version: int, body, code: int, message: str | None):
    """The whole request answered with ``code``."""
    cls = RESPONSES[api_key]
    if "error_code" in cls.__slots__:
        if "error_message" in cls.__slots__:
            return cls(error_code=code, error_message=message)
        return cls(error_code=code)
    if api_key in CONFIG_CHECKS and api_key != r.DESCRIBE_CONFIGS:
        return config_error_response(api_key, body, code)
    return error_response(api_key, version, body, code)


class Guard:
    """``refuse(call)``: answer a request the caller may not make (True), or let it pass."""

    def __init__(self, authorizer, image) -> None:
        self.authorizer = authorizer
        self.image = image  # () -> the committed MetadataImage (its ``acls``)

    def allowed(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        return self.authorizer.authorize(self.image().acls.index(), principal, host, operation,
                                         resource_type, name)

    def refuse(self, call) -> bool:
        answer = self.check(call, call.api_key, call.api_version, call.body)
        if answer is None:
            return False
        call.respond(answer)
        return True

    def check(self, call, api_key: int, version: int, body):
        """None when allowed, else the answer to send."""
        principal, host = call.principal, call_host(call)
        op = CLUSTER_CHECKS.get(api_key)
        if op is not None:
            if self.allowed(principal, host, op, A.CLUSTER, A.CLUSTER_NAME):
                return None
            message = (f"Request Request(listenerName={call.listener}, principal={principal}, host={host}, "
                       f"apiKey={api_key}) needs {A.OPERATIONS[op]} permission.")
            log.info("refused %s: %s", call, message)
            return refusal(api_key, version, body, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message)
        op = TOPIC_CHECKS.get(api_key)
        if op is not None:
            if self.allowed(principal, host, op, A.CLUSTER, A.CLUSTER_NAME) or all(
                    self.allowed(principal, host, op, A.TOPIC, n) for n in _topic_names(api_key, body) if n):
                return None
            return error_response(api_key, version, body, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        op = CONFIG_CHECKS.get(api_key)
        if op is not None:
            return self._configs(principal, host, op, api_key, body)
        return None

    def _configs(self, principal, host, op, api_key, body):
        codes = []
        for res in body.resources:
            kind, code = _CONFIG_RESOURCES.get(res.resource_type, (A.CLUSTER, ErrorCode.CLUSTER_AUTHORIZATION_FAILED))
            name = res.resource_name if kind != A.CLUSTER else A.CLUSTER_NAME
            codes.append((res, 0 if self.allowed(principal, host, op, kind, name) else code))
        if all(code == 0 for _, code in codes):
            return None
        # each resource answered with the error of its own type (refused whole, see above)
        codes = [(res, code or _CONFIG_RESOURCES.get(res.resource_type, (0, ErrorCode.CLUSTER_AUTHORIZATION_FAILED))[1])
                 for res, code in codes]
        if api_key == r.DESCRIBE_CONFIGS:
            return DescribeConfigsResponse(throttle_time_ms=0, results=[DescribeConfigsResult(
                error_code=code, error_message=None, resource_type=res.resource_type,
                resource_name=res.resource_name, configs=[]) for res, code in codes])
        return config_results(api_key, [(res.resource_type, res.resource_name, code, None) for res, code in codes])
