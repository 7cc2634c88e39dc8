"""The names the companion topics (``__cluster_metadata_control``,
``__cluster_metadata_snapshot``) give control records as record keys, and the
message each one's value holds (at v0, no version prefix)."""
from __future__ import annotations

from ..messages import (
    KRaftVersionRecord, LeaderChangeMessage, SnapshotFooterRecord, SnapshotHeaderRecord,
    VotersRecord,
)
from .control import ControlRecordType

CONTROL_TYPE_NAMES = {
    ControlRecordType.ABORT: "Abort",
    ControlRecordType.COMMIT: "Commit",
    ControlRecordType.LEADER_CHANGE: "LeaderChange",
    ControlRecordType.SNAPSHOT_HEADER: "SnapshotHeader",
    ControlRecordType.SNAPSHOT_FOOTER: "SnapshotFooter",
    ControlRecordType.KRAFT_VERSION: "KRaftVersion",
    ControlRecordType.KRAFT_VOTERS: "Voters",
}

# name -> the generated codec of its value (Abort/Commit markers never occur in KRaft)
CONTROL_MESSAGES = {
    "LeaderChange": LeaderChangeMessage,
    "SnapshotHeader": SnapshotHeaderRecord,
    "SnapshotFooter": SnapshotFooterRecord,
    "KRaftVersion": KRaftVersionRecord,
    "Voters": VotersRecord,
}
