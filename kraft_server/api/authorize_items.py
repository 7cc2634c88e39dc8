"""Requests that name several topics or config resources, authorized item by item as
Kafka's ``ControllerApis`` does (``createTopics``, ``deleteTopics``,
``createPartitions``, ``authorizeAlterResource``, ``ConfigHelper``): the refused items
are answered with their authorization error, the others go on as a narrower request,
and the two answers are joined (refused items first, as Kafka adds them to the
response before the controller's results).

``split(api_key, version, body, allowed, topic_name)`` returns None when every item
may go on, else ``(narrowed body or None when nothing is left, refused answer, join)``.
"""
from __future__ import annotations

import copy

from wire.errors import ErrorCode, error_message
from wire.messages import DescribeConfigsResponse
from wire.messages.describe_configs_response import DescribeConfigsResult

from . import registry as r
from .call import CallWrapper
from .config_requests import results_response as config_results

# topic APIs: the request's list of topics, and the response's list of results
TOPIC_LISTS = {r.CREATE_TOPICS: ("topics", "topics"), r.DELETE_TOPICS: ("topics", "responses"),
               r.CREATE_PARTITIONS: ("topics", "results")}
CONFIG_LISTS = {r.ALTER_CONFIGS: "responses", r.INCREMENTAL_ALTER_CONFIGS: "responses",
                r.DESCRIBE_CONFIGS: "results"}
# config resource type -> the error when refused (TOPIC, GROUP; anything else is the cluster's)
CONFIG_ERRORS = {2: ErrorCode.TOPIC_AUTHORIZATION_FAILED, 32: ErrorCode.GROUP_AUTHORIZATION_FAILED}


def narrowed_body(body, attr: str, items):
    narrowed = copy.copy(body)
    setattr(narrowed, attr, items)
    return narrowed


def joiner(attr: str, refused_answer):
    def join(answer):
        setattr(answer, attr, list(getattr(refused_answer, attr)) + list(getattr(answer, attr)))
        return answer
    return join


def split_topics(api_key: int, version: int, body, allowed, topic_name):
    """``allowed(name) -> bool``; ``topic_name(item) -> name or None`` (an id we cannot
    name is left to the controller, which answers UNKNOWN_TOPIC_ID)."""
    attr, result_attr = TOPIC_LISTS[api_key]
    if api_key == r.DELETE_TOPICS and version < 6:
        attr = "topic_names"
    items = list(getattr(body, attr))
    name_of = (lambda n: n) if attr == "topic_names" else topic_name
    refused = [t for t in items if name_of(t) is not None and not allowed(name_of(t))]
    if not refused:
        return None
    kept = [t for t in items if not any(t is x for x in refused)]
    refused_answer = r.error_response(api_key, version, narrowed_body(body, attr, refused),
                                      ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return (narrowed_body(body, attr, kept) if kept else None), refused_answer, joiner(result_attr, refused_answer)


def split_configs(api_key: int, body, allowed):
    """``allowed(resource) -> bool`` for each config resource of the request."""
    refused = [res for res in body.resources if not allowed(res)]
    if not refused:
        return None
    kept = [res for res in body.resources if not any(res is x for x in refused)]
    codes = [(res, CONFIG_ERRORS.get(res.resource_type, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)) for res in refused]
    if api_key == r.DESCRIBE_CONFIGS:
        refused_answer = DescribeConfigsResponse(throttle_time_ms=0, results=[DescribeConfigsResult(
            error_code=code, error_message=error_message(code), resource_type=res.resource_type,
            resource_name=res.resource_name, configs=[]) for res, code in codes])
    else:
        refused_answer = config_results(api_key, [(res.resource_type, res.resource_name, code,
                                                   error_message(code)) for res, code in codes])
    return ((narrowed_body(body, "resources", kept) if kept else None), refused_answer,
            joiner(CONFIG_LISTS[api_key], refused_answer))


class ConfigsHidden(CallWrapper):
    """CreateTopics v5+ with an authorizer: a created topic the principal may not
    DESCRIBE_CONFIGS is answered without its configs, partition count or replication
    factor, and with TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED, as Kafka's
    ``ReplicationControlManager.createTopics`` answers topics outside ``describable``."""

    def __init__(self, call, describable) -> None:
        super().__init__(call)
        self.describable = describable  # describable(name) -> bool

    def respond(self, body, api_version: int | None = None, shared: bool = False) -> None:
        for t in body.topics:
            if t.error_code == 0 and not self.describable(t.name):
                t.configs, t.num_partitions, t.replication_factor = [], -1, -1
                t.topic_config_error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
        self.call.respond(body, api_version)
