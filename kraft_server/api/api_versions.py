"""ApiVersions (key 18), v0-4: what this listener serves and which features we know.

Shape checked against a real Kafka 4.3.1 controller (``tests/interop/test_api_versions.py``
compares with ``tests/data/net/real_controller_4.3.1.json``):

- ``ApiKeys``: the listener's table (``registry.listener_apis``), sorted by key.
- v3+ adds ``SupportedFeatures``, ``FinalizedFeaturesEpoch`` and ``FinalizedFeatures``
  (tagged fields). At v3 Kafka leaves out the supported features whose minimum is 0:
  clients older than KIP-1022 (4.0) read a minimum of 0 as "feature absent". At v4
  all are listed.
- ApiVersions at a version we do not know never reaches this module: the pipeline
  answers it (v0 body, UNSUPPORTED_VERSION, our range for key 18; KIP-511).
- v3+ requests carry the client's software name and version; values that do not
  match Kafka's pattern get INVALID_REQUEST with an empty key list, like Kafka.
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
    if version < 3:
        return True
    return bool(SOFTWARE_PATTERN.fullmatch(body.client_software_name or "")
                and SOFTWARE_PATTERN.fullmatch(body.client_software_version or ""))


def api_versions_response(version: int, apis: dict[int, tuple[int, int]],
                          features: Features, body=None) -> ApiVersionsResponse:
    if body is not None and not valid_request(body, version):
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST)
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


def handle_api_versions_request(call, apis: dict[int, tuple[int, int]], features: Features) -> None:
    call.respond(api_versions_response(call.api_version, apis, features, call.body))
