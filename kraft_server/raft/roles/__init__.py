"""One module per quorum state. Each state is a small mutable record of what that
role tracks plus its vote-granting rule; ``quorum_state.py`` owns the transitions
and ``roles/<role>.py`` the per-role timer work (``poll``)."""
from kraft_server.raft.roles.candidate import CandidateState
from kraft_server.raft.roles.follower import FollowerState
from kraft_server.raft.roles.leader import LeaderState, ReplicaState
from kraft_server.raft.roles.prospective import ProspectiveState
from kraft_server.raft.roles.resigned import ResignedState
from kraft_server.raft.roles.unattached import UnattachedState

__all__ = ["CandidateState", "FollowerState", "LeaderState", "ProspectiveState",
           "ReplicaState", "ResignedState", "UnattachedState"]
