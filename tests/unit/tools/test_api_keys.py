"""tests/support/kafka_api_keys.py against the request JSON files inside kafka-clients 4.4.0 (the default release)."""

from __future__ import annotations

import json
import re
import struct
import zipfile
from pathlib import Path

import pytest

from tests.support.kafka_api_keys import (API_KEYS, API_KEYS_BY_NAME, CONTROLLER_API_KEYS, KAFKA_VERSION,
                                  ApiKeyInfo, api_key_info)

MESSAGE_DIR = "common/message/"
M2_JAR = (Path.home() / ".m2/repository/org/apache/kafka/kafka-clients" / KAFKA_VERSION
          / f"kafka-clients-{KAFKA_VERSION}.jar")


def _clients_jar() -> Path:
    try:
        from tools.kafka_dist import upstream_jar

        jar = Path(upstream_jar("kafka-clients"))
        if jar.is_file():
            return jar
    except Exception:  # not importable yet, or the distribution cannot be prepared here
        pass
    if M2_JAR.is_file():
        return M2_JAR
    pytest.skip(f"kafka-clients {KAFKA_VERSION} jar not found (tools.kafka_dist or {M2_JAR})")


@pytest.fixture(scope="module")
def jar() -> zipfile.ZipFile:
    with zipfile.ZipFile(_clients_jar()) as z:
        yield z


def _load(z: zipfile.ZipFile, name: str) -> dict:
    # Kafka's spec files are JSON with full-line // comments (the license header).
    text = z.read(name).decode("utf-8")
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


@pytest.fixture(scope="module")
def upstream_requests(jar) -> dict[int, dict]:
    out: dict[int, dict] = {}
    for name in jar.namelist():
        if name.startswith(MESSAGE_DIR) and name.endswith("Request.json"):
            spec = _load(jar, name)
            if spec.get("type") == "request":
                assert spec["apiKey"] not in out, f"duplicate api key in {name}"
                out[spec["apiKey"]] = spec
    return out


def _range(text: str) -> tuple[int, int]:
    if text == "none":
        return 0, -1
    if text.endswith("+"):
        raise AssertionError(f"open-ended validVersions {text!r}")
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def _first_flexible(text: str | None) -> int | None:
    if text is None or text == "none":
        return None
    assert text.endswith("+"), text  # every 4.4.0 request is "N+" or "none"
    return int(text[:-1])


def _enum_name(message_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", message_name).upper()


def test_table_matches_every_request_json(upstream_requests):
    assert len(upstream_requests) == 95
    assert sorted(API_KEYS) == sorted(upstream_requests)
    for key, spec in upstream_requests.items():
        info = API_KEYS[key]
        lo, hi = _range(spec["validVersions"])
        expected = ApiKeyInfo(
            key=key,
            name=_enum_name(info.message_name),
            message_name=spec["name"].removesuffix("Request"),
            min_version=lo,
            max_version=hi,
            listeners=frozenset(spec.get("listeners", [])),
            first_flexible_version=_first_flexible(spec.get("flexibleVersions")),
            latest_version_unstable=bool(spec.get("latestVersionUnstable", False)),
        )
        assert info == expected, spec["name"]


def test_every_request_has_its_response(jar):
    names = set(jar.namelist())
    for info in API_KEYS.values():
        assert f"{MESSAGE_DIR}{info.response_name}.json" in names
        response = _load(jar, f"{MESSAGE_DIR}{info.response_name}.json")
        assert (response["apiKey"], response["type"]) == (info.key, "response")
        assert _range(response["validVersions"]) == (info.min_version, info.max_version)
        assert _first_flexible(response.get("flexibleVersions")) == info.first_flexible_version


def test_enum_names_are_constants_of_kafka_api_keys(jar):
    # Each ApiKeys constant name is a CONSTANT_Utf8 entry of ApiKeys.class:
    # tag 1, u2 length, the bytes. No JDK needed.
    cls = jar.read("org/apache/kafka/common/protocol/ApiKeys.class")
    for info in API_KEYS.values():
        utf8 = struct.pack(">BH", 1, len(info.name)) + info.name.encode()
        assert utf8 in cls, info.name


def test_table_shape():
    assert sorted(API_KEYS) == list(range(95))
    assert len(API_KEYS_BY_NAME) == len(API_KEYS)
    for key, info in API_KEYS.items():
        assert info.key == key and API_KEYS_BY_NAME[info.name] is info
        assert info.name == _enum_name(info.message_name)
        assert info.removed == (not info.listeners)
    assert api_key_info(1000) is None and api_key_info(52) is API_KEYS[52]


def test_pinned_facts():
    # kraft-protocol-facts.md §1: what a 4.3.1 controller advertises, and 4.4.0's UnregisterController.
    controller = {1, *range(17, 21), *range(29, 34), *range(36, 42), *range(43, 47),
                  *range(49, 61), 62, 63, 64, 67, 70, 73, 80, 81, 82, 94}
    assert CONTROLLER_API_KEYS == controller
    fetch = API_KEYS[1]
    assert (fetch.name, fetch.message_name, fetch.min_version, fetch.max_version) == ("FETCH", "Fetch", 4, 18)
    assert API_KEYS_BY_NAME["ADD_RAFT_VOTER"].key == 80
    assert API_KEYS_BY_NAME["UPDATE_RAFT_VOTER"].listeners == frozenset({"controller"})
    assert API_KEYS[3].listeners == frozenset({"broker"})
    assert [API_KEYS[k].removed for k in range(3, 9)] == [False, True, True, True, True, False]
    producer_id = API_KEYS[22]
    assert producer_id.max_version == 6 and producer_id.advertised_max() == 5
    assert producer_id.advertised_max(unstable_enabled=True) == 6


def test_header_versions():
    api_versions, vote, begin, handshake = API_KEYS[18], API_KEYS[52], API_KEYS[53], API_KEYS[17]
    assert [api_versions.request_header_version(v) for v in range(5)] == [1, 1, 1, 2, 2]
    assert [api_versions.response_header_version(v) for v in range(5)] == [0] * 5
    assert vote.request_header_version(0) == 2 and vote.response_header_version(0) == 1
    assert begin.request_header_version(0) == 1 and begin.request_header_version(1) == 2
    assert handshake.request_header_version(1) == 1 and handshake.response_header_version(1) == 0


def test_the_generated_messages_carry_kafkas_keys():
    """The server's API keys are the generated messages' ``API_KEY``; they agree with this table."""
    from wire.messages import REQUESTS, RESPONSES

    for key, cls in REQUESTS.items():
        assert cls.API_KEY == key and cls.__name__ == API_KEYS[key].request_name
    for key, cls in RESPONSES.items():
        assert cls.API_KEY == key and cls.__name__ == API_KEYS[key].response_name
