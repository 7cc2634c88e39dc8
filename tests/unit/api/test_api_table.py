"""The API table (``kraft_server/api/registry.py``) against what the server answered
before the table existed: ``tests/data/api/table.json`` was dumped from the seven
places it replaced (the listeners' ranges for the four listener kinds, the APIs an
Envelope may carry, the write-queue deadlines, the authorizer's CLUSTER checks and the
core's RPCs; then, before they moved into the table too, the authorizer's checks topic
by topic, config resource by resource and on a client listener). A change of range or
check shows here first; when it is meant (a new Kafka release), update the JSON with
the change.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kraft_server.api import registry
from kraft_server.api.authorize import CLUSTER_CHECKS
from wire.messages import REQUESTS, RESPONSES

EXPECTED = json.loads((Path(__file__).resolve().parents[2] / "data" / "api" / "table.json").read_text())


def _ranges(table: dict) -> dict:
    return {str(k): list(v) for k, v in table.items()}


@pytest.mark.parametrize("controller", [True, False])
@pytest.mark.parametrize("reconfiguration", [False, True])
def test_listener_ranges(controller, reconfiguration):
    apis = registry.listener_apis(controller, reconfiguration=reconfiguration)
    assert list(apis) == sorted(apis)
    assert _ranges(apis) == EXPECTED["listener_apis"][f"controller={controller},reconfiguration={reconfiguration}"]


def test_enveloped_apis():
    assert _ranges(dict(sorted(registry.ENVELOPED.items()))) == EXPECTED["enveloped"]
    dispatched = sorted(k for k, api in registry.API.items() if api.envelope and api.write is None)
    assert dispatched == EXPECTED["enveloped_dispatched"]


def test_deadlines_and_cluster_checks_and_core():
    deadlines = {str(k): api.deadline.__name__ for k, api in registry.API.items() if api.deadline}
    assert deadlines == EXPECTED["deadlines"]
    assert {str(k): v for k, v in sorted(CLUSTER_CHECKS.items())} == EXPECTED["cluster_checks"]
    assert sorted(registry.CORE_APIS) == EXPECTED["core_apis"]


def test_every_entry_is_whole():
    """Each API has a generated request and response, is served somewhere, and what it
    needs is there: a write has an error answer; a refusal the authorizer builds from
    the table (a response without a top-level error code) has one too."""
    for key, api in registry.API.items():
        assert key in REQUESTS and key in RESPONSES, key
        assert api.controller or api.client, api.name
        if api.envelope:
            assert api.controller, api.name
        if api.write is not None:
            assert api.error_response is not None and api.controller, api.name
        if api.cluster_check is not None and "error_code" not in RESPONSES[key].__slots__:
            assert api.error_response is not None, api.name
        if api.deadline is not None:
            assert api.write is not None, api.name


def test_every_served_api_has_a_handler_and_dispatch_uses_it():
    """What a listener lists is dispatched (SASL excepted: the connection answers it),
    through the entry's handler; a key outside the table is our bug, said loudly."""
    from types import SimpleNamespace

    from kraft_server.api.dispatch import Dispatcher

    served = set(registry.listener_apis(True, reconfiguration=True)) | set(registry.listener_apis(False, reconfiguration=True))
    assert {k for k in served if registry.API[k].handler is None} == set(registry.SASL_APIS)
    seen = []
    d = Dispatcher(SimpleNamespace(), seen.append, tables={}, controller_listeners={"CONTROLLER"}, advertised={})
    d(SimpleNamespace(api_key=registry.VOTE, api_version=0, body=None, listener="CONTROLLER"))
    assert [r.api_key for r in seen] == [registry.VOTE]  # the core's RPC, handed to the core
    with pytest.raises(LookupError):
        d(SimpleNamespace(api_key=registry.METADATA + 1000, api_version=0, body=None, listener="CONTROLLER"))


def test_item_checks():
    """The authorizer's checks topic by topic and config resource by resource."""
    from kraft_server.api.authorize import CONFIG_CHECKS, TOPIC_CHECKS
    assert {str(k): v for k, v in sorted(TOPIC_CHECKS.items())} == EXPECTED["topic_checks"]
    assert {str(k): v for k, v in sorted(CONFIG_CHECKS.items())} == EXPECTED["config_checks"]
    from kraft_server.api.authorize import CLIENT_TOPIC_CHECKS
    assert {str(k): v for k, v in sorted(CLIENT_TOPIC_CHECKS.items())} == EXPECTED["client_topic_checks"]
