"""The leader's check that it can reach a new voter's endpoints before it commits
them (AddRaftVoter; KAFKA-20661 is what an unreachable committed endpoint does: the
voters cannot reach each other and no leader can be elected).

Kafka 4.4.0's ``AddVoterHandler`` sends ApiVersions to the new voter's endpoint on
the leader's default listener only; a failed answer (a refused connection reaches
it as BROKER_NOT_AVAILABLE) or no answer within ``controller.quorum.request.timeout.ms``
refuses the change with REQUEST_TIMED_OUT. Its other listeners' endpoints are
committed unchecked. We send ApiVersions to the default listener's endpoint first
(its answer carries the kraft.version range), then to each other endpoint on a
listener the leader's outbound security can speak (``QuorumConfig.probe_listeners``),
one after the other; any failure refuses the change with Kafka's code and a message
naming the endpoint and what happened. An endpoint on a listener the leader does
not have cannot be checked and is committed as Kafka commits it.

The core only asks (an ``OutboundRequest``) and hears (an ``InboundResponse`` or its
``SendFailure``); the shell does the connecting and the timing.
"""
from __future__ import annotations

from wire.errors import error_info
from wire.messages import ApiVersionsRequest
from wire.uuids import uuid_to_str

from kraft_server.raft.boundary import Destination, Endpoint, SendFailure

API_VERSIONS_KEY = ApiVersionsRequest.API_KEY


def endpoints_to_probe(config, endpoints: tuple[Endpoint, ...]) -> list[Endpoint]:
    """The default listener's endpoint first, then the others the leader can speak to,
    each address once."""
    default = config.default_listener
    first = [e for e in endpoints if e.name == default][:1]
    rest = [e for e in endpoints if e.name != default and e.name in config.probe_listeners]
    out: list[Endpoint] = []
    for e in first + rest:
        if all((e.host, e.port) != (o.host, o.port) for o in out):
            out.append(e)
    return out


def send(node, change, endpoint: Endpoint, now_ms: int) -> bool:
    """ApiVersions to ``endpoint`` for ``change`` (a ``membership.PendingChange``),
    whose timer restarts for the answer. False when the destination is busy or
    backing off."""
    body = ApiVersionsRequest(client_software_name="kraft-server", client_software_version="0.1.0")
    if not node.send(Destination(change.key.node_id, endpoint), API_VERSIONS_KEY, body, now_ms):
        return False
    timeout = node.config.request_timeout_ms
    change.probe_correlation = node.last_correlation()
    change.probing = endpoint
    change.deadline_ms = now_ms + timeout
    change.timeout_message = refusal(change.key, failure_text(endpoint, SendFailure.TIMEOUT, 0, timeout))
    return True


def _address(e: Endpoint) -> str:
    host = f"[{e.host}]" if ":" in e.host else e.host
    return f"{e.name}://{host}:{e.port}"


def failure_text(endpoint: Endpoint, failure: SendFailure | None, error_code: int, timeout_ms: int) -> str:
    """What went wrong with the probe of ``endpoint``, in plain words."""
    where = _address(endpoint)
    if failure is SendFailure.TIMEOUT:
        return f"{where} did not answer within {timeout_ms} ms (controller.quorum.request.timeout.ms)"
    if failure is SendFailure.DISCONNECTED:
        return f"the connection to {where} was refused or closed"
    if failure is SendFailure.UNSUPPORTED_VERSION:
        return f"{where} does not take API_VERSIONS"
    return f"{where} answered with error {error_info(error_code).name}"


def refusal(key, text: str) -> str:
    """The AddRaftVoter error message for a failed probe."""
    who = f"controller {key.node_id} (directory id {uuid_to_str(key.directory_id)})"
    return (f"Aborted add voter operation for {who} since API_VERSIONS to its endpoint failed: {text}. "
            f"Voters must reach each other: check that controller {key.node_id} is running "
            f"and that its advertised.listeners give an address the controllers can reach")
