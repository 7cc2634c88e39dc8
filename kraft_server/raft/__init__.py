"""The KRaft consensus core, sans-I/O (KIP-595 Raft, KIP-996 pre-vote, KIP-630 snapshots,
KIP-853 voter sets).

The core is one object, ``RaftNode``, fed with time and messages; it never opens a
file or socket, never reads a clock and never draws a random number of its own
(``now_ms`` comes in as an argument, randomness from an injected ``random.Random``).
Its log and its quorum-state store are injected objects (``log_api.ReplicatedLog``,
``log_api.QuorumStateStore``): files in production, memory in simulations.

The loop the shell (``kraft_server/net/driver.py``) runs, and the simulation runs too::

    node = RaftNode(config, log, store, rng, now_ms)
    while running:
        for inbound in arrived_messages():       # requests and responses
            node.step(inbound, now_ms)
        node.tick(now_ms)                        # timers: elections, fetches, linger
        more = True
        while more:
            ready = node.ready()                 # what to do now
            if ready.flush:
                log.flush()                      # fsync BEFORE anything leaves the node
            send(ready.requests); reply(ready.responses)
            more = node.advance(ready, now_ms)   # what is durable now; True: call ready() again
        sleep_until(ready.next_deadline_ms or an arrival)

Persisting before sending is what makes a granted vote, a reported fetch offset
or a committed record safe across kill -9: the quorum-state store writes durably
(tmp, fsync, rename) inside the transition that changes it, and log appends become
visible to others only after ``flush`` and ``advance``.

Map: ``node.py`` (``RaftNode``: the hub), ``io.py`` (the message and Ready types),
``log_api.py`` (what the core needs from a log), ``config.py`` (``QuorumConfig``),
``quorum_state.py`` (the state table), ``roles/`` (one module per state, plus
``poll.py`` for their timers), ``rpc/`` (one module per RPC; Fetch is
``rpc/fetch.py``), ``voters.py`` (immutable voter sets and the quorum arithmetic),
``voter_history.py`` (voter sets by offset), ``membership.py`` (the leader's one
voter change at a time: AddRaftVoter ``rpc/add_voter.py``, RemoveRaftVoter
``rpc/remove_voter.py``), ``auto_join.py`` (an observer making itself a voter),
``kraft_upgrade.py`` (UpdateFeatures kraft.version 0 -> 1). Record batches are
built and walked by ``wire/records`` (``build_batch``, ``walk``). Scenario files: ``tests/scenarios/*.txt``; simulation:
``python -m tests.simulation``.
"""

# The public surface: the rest of the server (controller/, api/, net/, the shell)
# imports these from ``kraft_server.raft``, never from its submodules.
from kraft_server.raft.config import MAX_BATCH_BYTES, QuorumConfig, StaticVoter
from kraft_server.raft.io import (
    Destination, Endpoint, InboundRequest, InboundResponse, OutboundRequest, OutboundResponse, Ready,
    SendFailure,
)
from kraft_server.raft.node import NotLeader, RaftNode
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet

__all__ = [
    "MAX_BATCH_BYTES",
    "Destination",
    "Endpoint",
    "InboundRequest",
    "InboundResponse",
    "NotLeader",
    "OutboundRequest",
    "OutboundResponse",
    "QuorumConfig",
    "RaftNode",
    "Ready",
    "Role",
    "SendFailure",
    "StaticVoter",
    "VoterKey",
    "VoterNode",
    "VoterSet",
]
