"""ApiVersions v0-4 and the v0 fallback, compared with what a real Kafka 4.3.1
controller answered (but for what 4.4.0 changed: ``NEWER_APIS``, ``NEWER_FEATURES``) (recorded in tests/data/net/real_controller_4.3.1.json by
starting ``tools.kafka_dist.controller.KafkaController`` and sending it ApiVersions
with our codecs; ``test_interop_quorum.py`` repeats the comparison live)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraft_server.api.api_versions import SUPPORTED_FEATURES, api_versions_response
from kraft_server.api.registry import DESCRIBE_QUORUM, UNREGISTER_CONTROLLER, listener_apis
from kraft_server.api.views import Features
from wire.headers import decode_response, encode_response
from wire.messages import ApiVersionsRequest

REAL = json.loads((Path(__file__).parents[1] / "data/net/real_controller_4.3.1.json").read_text())
FEATURES = Features(supported=dict(SUPPORTED_FEATURES),
                    finalized={"kraft.version": 1, "metadata.version": 30}, epoch=11)


def real(version):
    frame = bytes.fromhex(REAL[f"apiversions_v{version}"])
    return frame, decode_response(frame, 18, version)[1]


# What Kafka 4.4.0 changed against the recorded 4.3.1 answer, and we follow
# (tests/interop/test_kafka_4_4.py compares with a live 4.4.0 controller).
NEWER_APIS = {UNREGISTER_CONTROLLER: (0, 0)}
NEWER_FEATURES = {"metadata.version": (7, 33), "share.version": (0, 2)}


def compare_with_real(ours, theirs, version):
    """Same shape, our ranges: every API we list is listed by Kafka with the same
    range (DescribeQuorum: ours goes one higher), features likewise, but for
    what 4.4.0 changed (``NEWER_*``)."""
    assert ours.error_code == theirs.error_code == 0
    real_ranges = {k.api_key: (k.min_version, k.max_version) for k in theirs.api_keys}
    real_ranges.update(NEWER_APIS)
    keys = [k.api_key for k in ours.api_keys]
    assert keys == sorted(keys)
    assert set(NEWER_APIS) <= set(keys)
    for k in ours.api_keys:
        lo, hi = real_ranges[k.api_key]
        if k.api_key == DESCRIBE_QUORUM:
            assert (k.min_version, k.max_version) == (lo, hi + 1)
        else:
            assert (k.min_version, k.max_version) == (lo, hi), k.api_key
    real_supported = {f.name: (f.min_version, f.max_version) for f in theirs.supported_features}
    real_supported.update({n: r for n, r in NEWER_FEATURES.items() if n in real_supported})
    ours_supported = {f.name: (f.min_version, f.max_version) for f in ours.supported_features}
    for name, rng in ours_supported.items():
        assert real_supported[name] == rng
    # Kafka omits min-0 features at v3 and lists them at v4; so do we.
    assert {n for n in ours_supported if SUPPORTED_FEATURES[n][0] == 0} <= (
        set(real_supported) if version >= 4 else set())
    if version >= 3:
        assert ours.finalized_features and ours.finalized_features_epoch >= 0
        real_final = {f.name: (f.min_version_level, f.max_version_level) for f in theirs.finalized_features}
        for f in ours.finalized_features:
            assert real_final[f.name] == (f.min_version_level, f.max_version_level)
    else:
        assert not ours.supported_features and not ours.finalized_features


@pytest.mark.parametrize("version", range(5))
def test_recorded_answer_round_trips_through_our_codec(version):
    frame, body = real(version)
    assert encode_response(18, version, 7, body)[4:] == frame


@pytest.mark.parametrize("version", range(5))
def test_same_shape_as_kafka(version):
    ours = api_versions_response(version, listener_apis(True), FEATURES,
                                 ApiVersionsRequest(client_software_name="x", client_software_version="1"))
    compare_with_real(ours, real(version)[1], version)


def test_v3_leaves_out_features_with_minimum_zero():
    ours = api_versions_response(3, listener_apis(True), FEATURES)
    assert [f.name for f in ours.supported_features] == ["metadata.version"]
    ours = api_versions_response(4, listener_apis(True), FEATURES)
    assert [f.name for f in ours.supported_features] == [
        "group.version", "kraft.version", "metadata.version", "share.version", "streams.version",
        "transaction.version", "eligible.leader.replicas.version"]  # Kafka's order


def test_bad_software_name_is_invalid_request():
    # Recorded: Kafka answers INVALID_REQUEST with no keys for client name "bad name!".
    ours = api_versions_response(3, listener_apis(True), FEATURES,
                                 ApiVersionsRequest(client_software_name="bad name!",
                                                    client_software_version="1"))
    assert ours.error_code == 42 and ours.api_keys == []


def test_controller_listener_lists_exactly_what_we_implement():
    # SaslHandshake (17) and SaslAuthenticate (36) on every listener, as a Kafka 4.3.1
    # controller lists them (0-1, 0-2) on PLAINTEXT and SASL_SSL listeners alike;
    # AlterUserScramCredentials (51) and Describe/Create/DeleteAcls (29-31) on the controller listener.
    # UnregisterController (94): Kafka 4.4.0's, on the controller listener.
    assert sorted(listener_apis(True)) == [1, 17, 18, 19, 20, 29, 30, 31, 32, 33, 36, 37, 43, 44, 45, 46, 49, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 62, 63, 64, 67, 70, 73, 82, 94]
    assert sorted(listener_apis(True, reconfiguration=True)) == [1, 17, 18, 19, 20, 29, 30, 31, 32, 33, 36, 37, 43, 44, 45, 46, 49, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 62, 63, 64, 67, 70, 73, 80, 81, 82, 94]
    assert sorted(listener_apis(False)) == [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 23, 36, 42, 47, 55, 60, 75]
