"""Request handlers: wire messages in, core inputs or answers out; one module per
API family.

- ``registry.py``: every API declared once (versions per listener, handler, Envelope,
  write, error answer, deadline, ACL check), read by all below.
- ``dispatch.py``: routes a decoded request to its table entry's handler.
- ``api_versions.py``, ``describe_cluster.py``, ``describe_quorum.py``: answered
  here, from the node's views (``views.py``).
- ``raft_rpcs.py``: Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch, FetchSnapshot,
  UpdateRaftVoter (and Add/RemoveRaftVoter): handed to the Raft core as
  ``InboundRequest`` and answered when the core says so.
- ``groups/``: the classic consumer-group coordinator of the client listener
  (FindCoordinator, Join/Sync/Heartbeat/LeaveGroup, OffsetCommit/Fetch, List/DescribeGroups)
  and its durable offset store.
"""
