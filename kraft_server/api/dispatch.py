"""Routes each decoded request to its handler: ``registry.API[key].handler``.

The pipeline (``kraft_server/net/pipeline.py``) has already checked that the API and
version are served on the listener, so every call here has a handler.
"""
from __future__ import annotations

import logging

from . import registry
from .raft_rpcs import to_core
from .topic.consumer_fetch import replica_id

log = logging.getLogger(__name__)


class Dispatcher:
    """``dispatcher(call)``: answer locally or hand the call to the Raft core.

    ``submit(inbound_request)`` queues a request for the core (the Ready loop
    steps it in); ``tables`` maps each listener name to its API table;
    ``advertised`` maps listener names to the (host, port) we advertise;
    ``topics`` (``topic.catalog.Topics``) and ``consumer_fetch`` serve
    ``__cluster_metadata`` and its companion topics to consumers on client listeners (None: no topic, e.g. in unit tests); ``groups`` answers the
    consumer-group APIs (``kraft_server/api/groups``)."""

    def __init__(self, view, submit, *, tables: dict[str, dict[int, tuple[int, int]]],
                 controller_listeners: set[str], advertised: dict[str, tuple[str, int]],
                 topics=None, consumer_fetch=None, groups=None, guard=None):
        self.view = view
        self.topics = topics
        self.consumer_fetch = consumer_fetch
        self.groups = groups  # kraft_server.api.groups.GroupService (client listener)
        self.submit = submit
        self.tables = tables
        self.controller_listeners = controller_listeners
        self.advertised = advertised
        self.guard = guard  # authorize.Guard when authorizer.class.name is set

    def __call__(self, call) -> None:
        if self.guard is not None:  # authorize.py: None when refused (answered)
            if call.listener in self.controller_listeners:
                call = self.guard.admit(call)
            else:
                call = self.guard.admit_client(call, self.topics, call.api_key == registry.FETCH
                                               and not self.consumer_fetch_call(call))
            if call is None:
                return
        key = call.api_key
        if key == registry.FETCH and call.listener in self.controller_listeners:
            self.submit(to_core(call))  # the hot path: replicas' Fetches, straight to the core
            return
        if log.isEnabledFor(logging.DEBUG):  # bench/membership/membership.py reads it for AddRaftVoter
            log.debug("received %s on %s", type(call.body).__name__, call.listener)
        api = registry.API.get(key)
        if api is None or api.handler is None:  # the listener table let through a key with no handler: our bug
            raise LookupError(f"no handler for API key {key}")
        api.handler(self, call)

    def on_controller_listener(self, call) -> bool:
        return call.listener in self.controller_listeners

    def consumer_fetch_call(self, call) -> bool:
        """A consumer's Fetch (replica id < 0) on a client listener; the Raft fetch
        between quorum members (and any fetch on a controller listener) goes to the core."""
        return (self.consumer_fetch is not None and call.listener not in self.controller_listeners
                and replica_id(call.api_version, call.body) < 0)
