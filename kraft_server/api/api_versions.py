"""ApiVersions (key 18), v0-5: what this listener serves and which features we know.

Shape checked against a real Kafka 4.3.1 controller (``tests/interop/test_api_versions.py``
compares with ``tests/data/net/real_controller_4.3.1.json``) and, for v5, live against
Kafka 4.4.0's controller and broker (``tests/interop/test_api_versions.py``):

- ``ApiKeys``: the listener's table (``registry.listener_apis``), sorted by key.
- v3+ adds ``SupportedFeatures``, ``FinalizedFeaturesEpoch`` and ``FinalizedFeatures``
  (tagged fields). At v3 Kafka leaves out the supported features whose minimum is 0:
  clients older than KIP-1022 (4.0) read a minimum of 0 as "feature absent". At v4
  all are listed.
- ApiVersions at a version we do not know never reaches this module: the pipeline
  answers it (v0 body, UNSUPPORTED_VERSION, our range for key 18; KIP-511).
- v3+ requests carry the client's software name and version; values that do not
  match Kafka's pattern get INVALID_REQUEST with an empty key list, like Kafka.
- v5 (KIP-1242) requests may name the cluster and node the client means to reach.
  On every listener, naming one without the other is INVALID_REQUEST (Kafka's
  ``ApiVersionsRequest.isValid``). On a client listener (Kafka's broker listener,
  ``KafkaApis``) naming a cluster other than ours, or a node other than this one, is
  REBOOTSTRAP_REQUIRED; a controller listener (Kafka's ``ControllerApis``) does not
  compare them, nor does any listener before SASL authentication completes (Kafka's
  ``SaslServerAuthenticator`` answers that ApiVersions without the check). Either error answer is Kafka's: the error code, throttle time 0, no
  keys and no features, and the connection stays open.
"""
from __future__ import annotations

import re

from wire.errors import ErrorCode
from wire.messages import ApiVersionsResponse
from wire.messages.api_versions_response import ApiVersion, FinalizedFeatureKey, SupportedFeatureKey

from kraft_server.common import features

from .views import Features

# ApiVersionsRequest.isValid: letters, digits, '-' and '.', starting and ending with
# a letter or digit.
SOFTWARE_PATTERN = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

# What a Kafka 4.4.0 controller advertises: every feature it can finalize, in its order;
# the same ranges our controllers register with (``kraft_server/common/features.py``).
SUPPORTED_FEATURES: dict[str, tuple[int, int]] = features.SUPPORTED


def valid_request(body, version: int) -> bool:
    if version >= 5 and (body.cluster_id is None) != (body.node_id == -1):
        return False  # KIP-1242: both or neither
    if version < 3:
        return True
    return bool(SOFTWARE_PATTERN.fullmatch(body.client_software_name or "")
                and SOFTWARE_PATTERN.fullmatch(body.client_software_version or ""))


def misrouted(body, version: int, cluster_id: str, node_id: int) -> bool:
    """KIP-1242: the client named a cluster, and it is not ours or the node is not us."""
    return version >= 5 and body.cluster_id is not None and (
        body.cluster_id != cluster_id or body.node_id != node_id)


def api_versions_response(version: int, apis: dict[int, tuple[int, int]],
                          features: Features, body=None, *,
                          check_target: tuple[str, int] | None = None) -> ApiVersionsResponse:
    """The answer to ApiVersions ``version``; ``check_target`` (cluster id, node id)
    on a client listener, where a v5 request naming another target is refused."""
    if body is not None and not valid_request(body, version):
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
    if body is not None and check_target is not None and misrouted(body, version, *check_target):
        return ApiVersionsResponse(error_code=ErrorCode.REBOOTSTRAP_REQUIRED)
    resp = ApiVersionsResponse(
        error_code=0,
        api_keys=[ApiVersion(api_key=k, min_version=lo, max_version=hi)
                  for k, (lo, hi) in sorted(apis.items())],
    )
    if version >= 3:
        resp.supported_features = [
            SupportedFeatureKey(name=name, min_version=lo, max_version=hi)
            for name, (lo, hi) in features.supported.items()
            if version >= 4 or lo > 0
        ]
        resp.finalized_features_epoch = features.epoch
        resp.finalized_features = [
            FinalizedFeatureKey(name=name, max_version_level=level, min_version_level=level)
            for name, level in features.finalized.items()
        ]
    return resp


def handle_api_versions_request(call, apis: dict[int, tuple[int, int]], features: Features,
                                check_target: tuple[str, int] | None = None) -> None:
    call.respond(api_versions_response(call.api_version, apis, features, call.body,
                                       check_target=check_target))
