"""The authorizer's checks on the controller listener, in one table, as Kafka's
``ControllerApis`` makes them (``authHelper.authorizeClusterOperation`` and
``authorize`` calls of each handler; ``AclApis`` for the ACL APIs).

``CLUSTER_CHECKS`` (each API's ``cluster_check`` in ``registry.py``): the operation on
the CLUSTER resource ``kafka-cluster`` that the whole request needs; refused, the answer is CLUSTER_AUTHORIZATION_FAILED with Kafka's
message ("Request ... needs ALTER permission.") where the response has one.
``TOPIC_CHECKS`` (``topic_check``): CreateTopics and DeleteTopics pass whole with the operation on
CLUSTER, else (and CreatePartitions always) topic by topic (TOPIC resources): each refused topic is
answered TOPIC_AUTHORIZATION_FAILED, the others go on (``authorize_items.py``).
``CONFIG_CHECKS`` (``config_check``): ALTER_CONFIGS or DESCRIBE_CONFIGS per config resource, on TOPIC for
topics, GROUP for groups and CLUSTER for the rest; a refused resource is answered
TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED, the others go on.

The Envelope: the forwarding broker needs CLUSTER_ACTION (else the EnvelopeResponse
carries CLUSTER_AUTHORIZATION_FAILED); the inner request is then checked as the
client's principal (``RequestPrincipal``, DefaultPrincipalData after a 2-byte
version) from the client's address (``ClientHostAddress``).
"""
from __future__ import annotations

import logging

from kraft_server.controller.configs import definitions as configs
from kraft_server.security import acls as A
from wire.messages.delete_topics_request import DeleteTopicState
from wire.errors import ErrorCode
from wire.messages import RESPONSES

from . import registry as r
from .authorize_groups import GROUP_APIS, admit_group_call
from .authorize_items import ConfigsHidden, split_configs, split_topics
from .authorize_topics import Masked
from .call import Narrowed

log = logging.getLogger(__name__)

# ``Api.cluster_check`` of every API that has one (``registry.py``)
CLUSTER_CHECKS: dict[int, int] = {api.key: api.cluster_check for api in r.API.values() if api.cluster_check is not None}
TOPIC_CHECKS: dict[int, int] = {api.key: api.topic_check for api in r.API.values() if api.topic_check is not None}
CONFIG_CHECKS: dict[int, int] = {api.key: api.config_check for api in r.API.values() if api.config_check is not None}
CLIENT_TOPIC_CHECKS: dict[int, int] = {api.key: api.client_topic_check for api in r.API.values()
                                       if api.client_topic_check is not None}
# config resource type -> ACL resource type (anything else: the cluster's)
_CONFIG_RESOURCES = {configs.TOPIC: A.TOPIC, configs.GROUP: A.GROUP}


def call_host(call) -> str:
    return call.host


def refusal(api_key: int, version: int, body, code: int, message: str | None):
    """The whole request answered with ``code``."""
    cls = RESPONSES[api_key]
    if "error_code" in cls.__slots__:
        if "error_message" in cls.__slots__:
            return cls(error_code=code, error_message=message)
        return cls(error_code=code)
    return r.error_response(api_key, version, body, code)


class Guard:
    """``admit(call)``: the call to go on with (itself, or ``Narrowed``), or None when
    it was answered here (refused)."""

    def __init__(self, authorizer, image) -> None:
        self.authorizer = authorizer
        self.image = image  # () -> the committed MetadataImage (its ``acls``)

    def allowed(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        return self.authorizer.authorize(self.image().acls.index(), principal, host, operation,
                                         resource_type, name)

    def admit(self, call):
        principal, host = call.principal, call_host(call)
        api_key, version, body = call.api_key, call.api_version, call.body
        op = CLUSTER_CHECKS.get(api_key)
        if op is not None:
            if self.allowed(principal, host, op, A.CLUSTER, A.CLUSTER_NAME):
                return call
            message = (f"Request Request(listenerName={call.listener}, principal={principal}, host={host}, "
                       f"apiKey={api_key}) needs {A.OPERATIONS[op]} permission.")
            log.info("refused %s: %s", call, message)
            call.respond(refusal(api_key, version, body, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message))
            return None
        if api_key == r.CREATE_TOPICS and version >= 5:  # configs are in the answer
            def describable(name):
                return self.allowed(principal, host, A.DESCRIBE_CONFIGS, A.TOPIC, name)
            if not all(describable(t.name) for t in body.topics):
                call = ConfigsHidden(call, describable)
        parts = self._items(principal, host, api_key, version, body)
        if parts is None:
            return call
        narrowed, refused_answer, join = parts
        if narrowed is None:
            call.respond(refused_answer)
            return None
        return Narrowed(call, narrowed, join)

    def admit_client(self, call, topics, replica_fetch: bool):
        """A client listener's call (``authorize_topics.py``)."""
        api_key = call.api_key
        if api_key == r.DESCRIBE_QUORUM or (api_key == r.FETCH and replica_fetch):
            return self.admit(call)
        principal, host = call.principal, call_host(call)
        if api_key in GROUP_APIS:
            return admit_group_call(call, lambda op, kind, name: self.allowed(principal, host, op, kind, name))
        op = CLIENT_TOPIC_CHECKS.get(api_key)
        if op is None:
            return call
        return Masked(call, lambda name: not self.allowed(principal, host, op, A.TOPIC, name), topics)

    def _items(self, principal, host, api_key, version, body):
        op = TOPIC_CHECKS.get(api_key)
        if op is not None:
            if api_key != r.CREATE_PARTITIONS and self.allowed(principal, host, op, A.CLUSTER, A.CLUSTER_NAME):
                return None  # CreatePartitions has no cluster-wide grant (filterAlterAuthorizedTopics)
            return split_topics(api_key, version, body,
                                lambda name: self.allowed(principal, host, op, A.TOPIC, name), self._topic_name)
        op = CONFIG_CHECKS.get(api_key)
        if op is not None:
            def allowed(res):
                kind = _CONFIG_RESOURCES.get(res.resource_type, A.CLUSTER)
                return self.allowed(principal, host, op, kind,
                                    A.CLUSTER_NAME if kind == A.CLUSTER else res.resource_name)
            return split_configs(api_key, body, allowed)
        return None

    def _topic_name(self, item):
        if item.name:
            return item.name
        if not isinstance(item, DeleteTopicState):  # only DeleteTopics v6 names topics by id
            return None
        topic = self.image().topics.by_id.get(item.topic_id)
        return None if topic is None else topic.name
