"""Leaders need an online log directory (Kafka 4.3.1's ``LeaderAcceptor``:
``isActive`` and ``BrokerRegistration.hasOnlineDir`` of the partition's directory for
that replica), and a directory reported offline moves the broker out of the ISRs of
its replicas there (``handleDirectoriesOffline``; AssignReplicasToDirs to an offline
directory likewise), on a one-voter controller driven by hand with JBOD brokers."""
from __future__ import annotations

import uuid
from types import SimpleNamespace

from kraft_server.controller.admin_requests import alter_partition_op, assign_dirs_op, create_topics_op, elect_leaders_op
from kraft_server.controller.image.brokers import BrokerRegistration
from wire.uuids import LOST_DIR, MIGRATING_DIR, UNASSIGNED_DIR
from wire.errors import ErrorCode
from wire.messages import BrokerHeartbeatRequest, CreateTopicsRequest, ElectLeadersRequest
from wire.messages.elect_leaders_request import TopicPartitions

from tests.unit.controller.test_controller_assign_dirs import dirs_of, jbod_cluster, request
from tests.unit.controller.test_controller_topics import _alter, run, topic

PREFERRED = 0


def test_directory_ids_online_as_kafka_reads_them():
    a, b = dirs_of(1)

    def reg(dirs):
        return BrokerRegistration(SimpleNamespace(log_dirs=tuple(dirs)), 0)
    assert reg([a]).has_online_dir(a) and not reg([a]).has_online_dir(b)
    assert reg([a]).has_online_dir(MIGRATING_DIR) and reg([a]).has_online_dir(UNASSIGNED_DIR)
    assert not reg([a]).has_online_dir(LOST_DIR) and not reg([]).has_online_dir(LOST_DIR)
    assert reg([]).has_online_dir(b)  # no directories registered (before 3.7): any


def _jbod_with_u():
    """``jbod_cluster`` (t: p0 on [1, 2], p1 on [2, 1]) plus u: p0 on [1, 2]; broker 1 puts
    t's replicas in its dir a and u's in dir b."""
    c, epochs, tid = jbod_cluster()
    made = run(c, create_topics_op(CreateTopicsRequest(topics=[topic("u", assignments=[(0, [1, 2])])]), 7))
    uid = made.topics[0].topic_id
    a, b = dirs_of(1)
    resp = run(c, assign_dirs_op(request(1, epochs[1], [(a, [(tid, [0, 1])]), (b, [(uid, [0])])])))
    assert resp.error_code == 0
    return c, epochs, tid, uid


def _part(c, name, i=0):
    return c.controller.image.topics.by_name[name].partitions[i]


def _beat(c, broker, epoch, offline=(), want_fence=False):
    return c.call("heartbeat", BrokerHeartbeatRequest(
        broker_id=broker, broker_epoch=epoch, current_metadata_offset=c.controller.image.offset,
        want_fence=want_fence, offline_log_dirs=list(offline), cordoned_log_dirs=[]), 2)


def _preferred(c, name, i=0):
    r = run(c, elect_leaders_op(ElectLeadersRequest(election_type=PREFERRED, topic_partitions=[
        TopicPartitions(topic=name, partitions=[i])]), 2))
    return r.replica_election_results[0].partition_result[0].error_code


def test_an_offline_dir_moves_leaders_and_isr_off_its_replicas_and_keeps_them_from_leading():
    c, epochs, tid, uid = _jbod_with_u()
    a, b = dirs_of(1)
    assert (_part(c, "t", 0).leader, _part(c, "u").leader) == (1, 1)
    assert not _beat(c, 1, epochs[1], offline=[a]).is_fenced
    p0, p1, u = _part(c, "t", 0), _part(c, "t", 1), _part(c, "u")
    assert (p0.leader, p0.isr) == (2, (2,)) and p1.isr == (2,)  # dir a's replicas left
    assert (u.leader, u.isr) == (1, (1, 2))  # dir b's did not
    assert c.controller.image.brokers.get(1).record.log_dirs == (b,)
    assert c.data_batches()[-1][-1] == (17, 2)  # then BrokerRegistrationChangeRecord v2
    # every later heartbeat names it again: nothing more is written
    batches = len(c.data_batches())
    _beat(c, 1, epochs[1], offline=[a])
    assert len(c.data_batches()) == batches
    # the leader adds 1 back (a follower may fetch), but 1 may not lead from dir a
    back = run(c, alter_partition_op(_alter(2, epochs[2], tid, p0.leader_epoch, p0.partition_epoch, [2, 1],
                                            epochs=epochs), 3))
    assert back.topics[0].partitions[0].error_code == 0 and _part(c, "t", 0).isr == (2, 1)
    assert _preferred(c, "t") == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    # fencing 2 leaves nobody acceptable in the ISR: leaderless, not led from dir a
    assert _beat(c, 2, epochs[2], want_fence=True).is_fenced
    assert _part(c, "t", 0).leader == -1
    assert _part(c, "u").leader == 1


def test_an_isr_change_from_a_leader_whose_dir_went_offline_elects_another():
    from wire.messages import BrokerRegistrationChangeRecord
    from wire.records import encode_metadata_record

    c, epochs, tid, uid = _jbod_with_u()
    a, b = dirs_of(1)
    # the registration no longer lists dir a (as a heartbeat's offline dir would write),
    # but no leader moved yet: the leader's next AlterPartition makes the move
    c.core.propose([encode_metadata_record(BrokerRegistrationChangeRecord(
        broker_id=1, broker_epoch=epochs[1], log_dirs=[b]), 2)], c.now)
    c.run_for(50)
    p0 = _part(c, "t", 0)
    r = run(c, alter_partition_op(_alter(1, epochs[1], tid, p0.leader_epoch, p0.partition_epoch, [1, 2],
                                         epochs=epochs), 3))
    assert r.topics[0].partitions[0].error_code == ErrorCode.NEW_LEADER_ELECTED
    assert _part(c, "t", 0).leader == 2


def test_assigning_replicas_to_an_offline_directory_moves_the_broker_out_of_their_isr():
    c, epochs, tid, uid = _jbod_with_u()
    resp = run(c, assign_dirs_op(request(1, epochs[1], [(LOST_DIR, [(uid, [0])])])))
    assert resp.error_code == 0
    assert [p.error_code for d in resp.directories for t in d.topics for p in t.partitions] == [0]
    u = _part(c, "u")
    assert (u.leader, u.isr, u.directories[0]) == (2, (2,), LOST_DIR)
    # an online directory moves nothing
    a, _ = dirs_of(1)
    run(c, assign_dirs_op(request(1, epochs[1], [(a, [(tid, [1])])])))
    assert _part(c, "t", 1).isr == (2, 1)


def test_unfencing_does_not_elect_a_replica_whose_directory_is_offline():
    c, epochs, tid, uid = _jbod_with_u()
    a, b = dirs_of(1)
    # broker 2 goes, then broker 1 loses dir a: t's partitions have only 1 left, in dir a
    assert _beat(c, 2, epochs[2], want_fence=True).is_fenced
    assert _part(c, "t", 1).leader == 1
    _beat(c, 1, epochs[1], offline=[a])
    p1 = _part(c, "t", 1)
    assert (p1.leader, p1.isr, p1.eligible_leader_replicas) == (-1, (), (1,))  # 1 stays eligible, not acceptable
    assert not _beat(c, 2, epochs[2]).is_fenced  # 2 back: it is not in the ISR either
    assert _part(c, "t", 1).leader == -1 and _part(c, "u").leader == 1
    assert LOST_DIR == uuid.UUID(int=2)  # DirectoryId.LOST
