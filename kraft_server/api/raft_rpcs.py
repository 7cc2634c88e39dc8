"""The KRaft RPCs the Raft core answers: Vote (52), BeginQuorumEpoch (53),
EndQuorumEpoch (54), Fetch (1, replica fetches of ``__cluster_metadata``),
FetchSnapshot (59), UpdateRaftVoter (82), AddRaftVoter (80), RemoveRaftVoter (81)
and UpdateFeatures (57: only kraft.version, which the core writes as control records).

Nothing is decided here: the decoded body goes to the core as an
``InboundRequest`` whose ``handle`` is the connection's ``InboundCall``; the core's
``OutboundResponse`` comes back through ``deliver`` and is encoded at the request's
version, in the connection's request order. Kafka's ``ControllerApis`` likewise
hands these straight to its ``RaftManager``.
"""
from __future__ import annotations

from kraft_server.raft import InboundRequest, OutboundResponse
from wire.messages import FetchRequest

FETCH = FetchRequest.API_KEY


def to_core(call) -> InboundRequest:
    return InboundRequest(handle=call, api_key=call.api_key, api_version=call.api_version,
                          body=call.body, listener=call.listener)


def deliver(response: OutboundResponse) -> None:
    """Write the core's answer on the connection the request came from (a closed
    connection drops it silently: the peer will time out and retry)."""
    call = response.handle
    if call.done:  # answered twice, or the connection closed: nothing to write
        return
    # One Fetch answer object may go to many observers (``raft/rpc/fetch.py``):
    # encoded once, each frame gets its own header.
    call.respond(response.body, response.api_version, shared=response.api_key == FETCH)
