"""What a new leader writes first, before anything else of its epoch: one control
batch (Kafka's ``LeaderState.appendStartOfEpochControlRecords``) with

- LeaderChangeMessage: the leader, the voters, the voters that granted it;
- when the voter set is known only from the bootstrap checkpoint (kraft.version 1,
  no VotersRecord in the log yet, KIP-853): KRaftVersionRecord and VotersRecord,
  so the log carries the voter set from then on.

Once this epoch's first batch commits, the active controller writes its own
activation records (bootstrap metadata, its registration): ``controller/active.py``.
"""
from __future__ import annotations

from wire.messages import KRaftVersionRecord
from wire.messages import leader_change_message as lcm
from wire.records import ControlRecordType, build_control_batch


def start_of_epoch_batch(base_offset: int, epoch: int, now_ms: int, leader_id: int, voters,
                         granting_voters, history) -> bytes:
    records = [(ControlRecordType.LEADER_CHANGE, lcm.LeaderChangeMessage(
        version=0, leader_id=leader_id,
        voters=[lcm.Voter(voter_id=i) for i in voters.ids()],
        granting_voters=[lcm.Voter(voter_id=i) for i in granting_voters]))]
    if history.only_from_bootstrap():
        records.append((ControlRecordType.KRAFT_VERSION,
                        KRaftVersionRecord(version=0, kraft_version=history.kraft_version())))
        records.append((ControlRecordType.KRAFT_VOTERS, voters.to_voters_record()))
    return build_control_batch(base_offset, epoch, now_ms, records)
