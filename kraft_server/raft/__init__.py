"""The KRaft consensus core, sans-I/O (KIP-595 Raft, KIP-996 pre-vote, KIP-630 snapshots,
KIP-853 voter sets).

The core is one object, ``RaftNode``, fed with time and messages; it never opens a
file or socket, never reads a clock, never draws a random number of its own
(``now_ms`` comes in as an argument, randomness from an injected ``random.Random``)
and never writes: it reads its log through ``log_view.LogView`` and hands every
write (log appends, truncation, snapshot chunks and install, the election state)
to its shell in ``Ready``. The shell (``kraft_server/shell``) is the one place that
performs them, for the process (``kraft_server/shell/driver.py``), the simulation,
the scenario engine and the tests alike::

    node = RaftNode(config, log, store.read(), rng, now_ms)
    shell = Shell(node, log, store)
    while running:
        for inbound in arrived_messages():       # requests and responses
            node.step(inbound, now_ms)
        node.tick(now_ms)                        # timers: elections, fetches, linger
        more = True
        while more:
            ready = shell.take()                 # node.ready(); persist the election
                                                 # state; perform the log writes
            more = shell.finish(ready, now_ms, send, reply)
                                                 # fsync, THEN send; node.advance(...)
        sleep_until(ready.next_deadline_ms or an arrival)

Persisting before sending is what makes a granted vote, a reported fetch offset
or a committed record safe across kill -9: nothing of a Ready leaves the node
before its election state is written durably (tmp, fsync, rename) and its log
writes are flushed; ``tests/simulation/test_core_writes.py`` runs the simulation with logs
and stores that refuse any write called from inside the core.

Map: ``node.py`` (``RaftNode``: the hub), ``boundary.py`` (what crosses to and from the shell: the message and Ready types),
``log_api.py`` (what the shell's log offers), ``log_view.py`` (the core's read-only
view of it, with its pending writes), ``quorum_config.py`` (``QuorumConfig``),
``quorum_state.py`` (the state table), ``roles/`` (one module per state, plus
``poll.py`` for their timers), ``rpc/`` (one module per RPC; Fetch is
``rpc/fetch.py``), ``voters.py`` (immutable voter sets and the quorum arithmetic),
``voter_history.py`` (voter sets by offset), ``membership.py`` (the leader's one
voter change at a time: AddRaftVoter ``rpc/add_voter.py``, RemoveRaftVoter
``rpc/remove_voter.py``), ``endpoint_probe.py`` (reaching a voter's new endpoints
before they are written), ``auto_join.py`` (an observer making itself a voter),
``rpc/update_features.py`` (UpdateFeatures: kraft.version 0 -> 1). Record batches
are built and walked by ``wire/records`` (``build_batch``, ``walk``). Scenario files:
``tests/scenarios/*.txt``; simulation:
``python -m tests.simulation``.
"""

# The public surface: the rest of the server (controller/, api/, net/, the shell)
# imports these from ``kraft_server.raft``, never from its submodules.
from kraft_server.raft.quorum_config import MAX_BATCH_BYTES, QuorumConfig, StaticVoter
from kraft_server.raft.boundary import (
    Destination, Endpoint, InboundRequest, InboundResponse, OutboundRequest, OutboundResponse, Ready,
    SendFailure,
)
from kraft_server.raft.log_view import Append, InstallSnapshot, SnapshotAbort, SnapshotChunk, Truncate
from kraft_server.raft.node import Backpressure, NotLeader, RaftNode
from kraft_server.raft.roles.base import Role
from kraft_server.raft.voters import VoterKey, VoterNode, VoterSet
from kraft_server.raft.rpc import update_features as feature_updates  # the controller's kraft.version path

__all__ = [
    "Append",
    "Backpressure",
    "InstallSnapshot",
    "SnapshotAbort",
    "SnapshotChunk",
    "Truncate",
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
    "feature_updates",
]
