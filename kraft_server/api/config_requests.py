"""DescribeConfigs (32, v1-4), AlterConfigs (33, v0-2) and IncrementalAlterConfigs
(44, v0-1) on the controller listener, as Kafka's ``ControllerApis`` takes them apart
(decisions in ``kraft_server/controller/configs``).

DescribeConfigs is a read: any controller answers it at once from its committed image
and its own config. The two alters are write-queue operations of the active
controller, answered after commit (NOT_CONTROLLER elsewhere); a 4.3.1 broker forwards
them in an Envelope. Before the controller sees them: a resource type Kafka does not
know gets UNSUPPORTED_VERSION "Unknown resource type N.", a resource named twice
INVALID_REQUEST "Duplicate resource.", a type the alter cannot take INVALID_REQUEST
"Unexpected resource type X."; BROKER_LOGGER in IncrementalAlterConfigs changes this
process's log levels and writes nothing (``configs/loggers.py``). For a key given twice
the last operation wins (Kafka's HashMap).
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode, error_message
from wire.messages import AlterConfigsResponse, DescribeConfigsResponse, IncrementalAlterConfigsResponse
from wire.messages.alter_configs_response import AlterConfigsResourceResponse as LegacyResult
from wire.messages.describe_configs_response import (
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
)
from wire.messages.incremental_alter_configs_response import AlterConfigsResourceResponse as IncrementalResult

from kraft_server.controller.configs import control, loggers
from kraft_server.controller.configs.definitions import (
    BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP, RESOURCE_NAMES, TOPIC)
from kraft_server.controller.configs.describe import describe
from kraft_server.controller.configs.validation import ResourceError
from kraft_server.controller.write_queue import Write

log = logging.getLogger(__name__)

INCREMENTAL = 44
LEGACY = 33
ALTERABLE = frozenset({TOPIC, BROKER, CLIENT_METRICS, GROUP})


def _describe_result(r, version: int) -> DescribeConfigsResult:
    return DescribeConfigsResult(
        error_code=r.error, error_message=r.message, resource_type=r.resource_type, resource_name=r.name,
        configs=[DescribeConfigsResourceResult(
            name=e.name, value=e.value, read_only=e.read_only, config_source=e.source, is_sensitive=e.sensitive,
            synonyms=[DescribeConfigsSynonym(name=n, value=v, source=s) for n, v, s in e.synonyms],
            config_type=e.config_type, documentation=None) for e in r.entries])


def handle_describe_configs_request(call, view) -> None:
    body = call.body
    controller = view.controller
    resources = [(r.resource_type, r.resource_name, r.configuration_keys) for r in body.resources]
    results = describe(controller.image, controller.settings.node_id, controller.settings.static_configs,
                       resources, body.include_synonyms)
    call.respond(DescribeConfigsResponse(throttle_time_ms=0, results=[_describe_result(r, call.api_version)
                                                                       for r in results]))


def _response(api_key: int, results) -> object:
    """``results``: ``(type, name, code, message)``."""
    cls, item = (IncrementalAlterConfigsResponse, IncrementalResult) if api_key == INCREMENTAL else (
        AlterConfigsResponse, LegacyResult)
    return cls(throttle_time_ms=0, responses=[
        item(error_code=c, error_message=m, resource_type=t, resource_name=n) for t, n, c, m in results])


results_response = _response


def error_response(api_key: int, body, code: int):
    return _response(api_key, [(r.resource_type, r.resource_name, code, error_message(code)) for r in body.resources])


def _split(api_key: int, body, node_id: int | None):
    """``(answered, changes)``: results decided here, and ``(type, name, payload)`` for
    the controller. Runs BROKER_LOGGER changes (incremental only)."""
    answered, changes, seen, duplicates = [], {}, set(), set()
    for r in body.resources:
        t, n = r.resource_type, r.resource_name
        if t not in RESOURCE_NAMES or t == 0:
            answered.append((t, n, ErrorCode.UNSUPPORTED_VERSION, f"Unknown resource type {t}."))
            continue
        if api_key == INCREMENTAL and t == BROKER_LOGGER:
            try:
                loggers.apply(node_id if node_id is not None else -1, n,
                              [(c.name, c.config_operation, c.value) for c in r.configs], body.validate_only)
                answered.append((t, n, ErrorCode.NONE, None))
            except ResourceError as exc:
                answered.append((t, n, exc.code, exc.message))
            continue
        if (t, n) in duplicates:
            continue
        if (t, n) in seen:
            duplicates.add((t, n))
            changes.pop((t, n), None)
            answered.append((t, n, ErrorCode.INVALID_REQUEST, "Duplicate resource."))
            continue
        seen.add((t, n))
        if api_key == INCREMENTAL:
            changes[(t, n)] = {c.name: (c.config_operation, c.value) for c in r.configs}
        else:
            changes[(t, n)] = {c.name: c.value for c in r.configs}
    # then authorizeAlterResource: a type the controller does not alter
    answered += [(t, n, ErrorCode.INVALID_REQUEST, f"Unexpected resource type {RESOURCE_NAMES[t]}.")
                 for t, n in changes if t not in ALTERABLE]
    return answered, [(t, n, payload) for (t, n), payload in changes.items() if t in ALTERABLE]


def alter_configs_op(api_key: int, version: int, body, node_id: int | None = None):
    """``(name, (run, fail))`` for the write queue."""
    decide = control.incremental_records if api_key == INCREMENTAL else control.legacy_records

    def run(image, next_offset, now_ms):
        answered, changes = _split(api_key, body, node_id)
        results, records = control.alter(image, changes, decide)
        if body.validate_only:
            records = []
        elif records:
            log.info("[Controller] config changes for %s", ", ".join(
                f"{RESOURCE_NAMES.get(t, t)}:{n}" for t, n, code, _ in results if code == 0))
        response = _response(api_key, answered + results)
        return Write(records, lambda: response)
    name = "IncrementalAlterConfigs" if api_key == INCREMENTAL else "AlterConfigs"
    return name, (run, lambda code: error_response(api_key, body, code))


def handle_alter_configs_request(call, view) -> None:
    controller = view.controller
    respond = call.respond
    if controller is None:
        respond(error_response(call.api_key, call.body, ErrorCode.NOT_CONTROLLER))
        return
    name, (run, fail) = alter_configs_op(call.api_key, call.api_version, call.body, controller.settings.node_id)
    controller.submit_write(name, run, fail, lambda body: None if call.done else respond(body))
