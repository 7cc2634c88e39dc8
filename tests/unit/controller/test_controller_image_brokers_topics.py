"""The image replays broker, topic, partition and producer-id records as Kafka's
``MetadataImage`` does, and writes them back in ``MetadataImage.write`` order."""
from __future__ import annotations

import uuid

from kraft_server.controller.image.metadata_image import MetadataImage
from wire.messages import (
    BrokerRegistrationChangeRecord, ConfigRecord, FeatureLevelRecord, PartitionChangeRecord,
    PartitionRecord, ProducerIdsRecord, RegisterBrokerRecord, RemoveTopicRecord, TopicRecord,
    UnregisterBrokerRecord,
)
from wire.messages.register_broker_record import BrokerEndpoint
from wire.records import encode_metadata_record, unframe_metadata_record

TOPIC = uuid.UUID(int=0xABC)
DIR = uuid.UUID(int=0xD1D1D1D1D1D1D1D1)


def replay_all(image, pairs, start=0):
    for i, (record, version) in enumerate(pairs):
        image.replay(encode_metadata_record(record, version), start + i)


def broker(i, epoch):
    return RegisterBrokerRecord(broker_id=i, incarnation_id=uuid.UUID(int=i), broker_epoch=epoch,
                                end_points=[BrokerEndpoint(name="PLAINTEXT", host="h", port=9000 + i)],
                                rack=None, log_dirs=[DIR])


def cluster():
    img = MetadataImage()
    replay_all(img, [
        (FeatureLevelRecord(name="metadata.version", feature_level=30), 0),
        (broker(1, 10), 4), (broker(2, 11), 4), (broker(3, 12), 4),
        (BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, fenced=-1), 0),
        (BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=11, fenced=-1), 0),
        (BrokerRegistrationChangeRecord(broker_id=2, broker_epoch=11, cordoned_log_dirs=[]), 3),
        (TopicRecord(name="t", topic_id=TOPIC), 0),
        (ConfigRecord(resource_type=2, resource_name="t", name="min.insync.replicas", value="2"), 0),
        (PartitionRecord(partition_id=0, topic_id=TOPIC, replicas=[1, 2, 3], isr=[1, 2, 3], leader=1,
                         leader_epoch=0, partition_epoch=0, directories=[DIR] * 3), 2),
        (PartitionChangeRecord(partition_id=0, topic_id=TOPIC, isr=[1, 2]), 2),
        (PartitionChangeRecord(partition_id=0, topic_id=TOPIC, leader=2, isr=[2]), 2),
        (ProducerIdsRecord(broker_id=1, broker_epoch=10, next_producer_id=1000), 0),
    ], start=100)
    return img


def test_brokers_fencing_and_offsets():
    img = cluster()
    b1, b2, b3 = (img.brokers.get(i) for i in (1, 2, 3))
    assert (b1.fenced, b2.fenced, b3.fenced) == (False, False, True)
    assert b1.register_offset == 101 and b3.register_offset == 103
    assert b2.record.cordoned_log_dirs == () and b1.record.cordoned_log_dirs is None
    assert img.brokers.is_active(1) and not img.brokers.is_active(3)
    # a change with a stale epoch is ignored
    replay_all(img, [(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=9, fenced=1), 0)])
    assert not img.brokers.get(1).fenced
    replay_all(img, [(BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=10, in_controlled_shutdown=1), 1)])
    assert img.brokers.get(1).in_controlled_shutdown and not img.brokers.is_active(1)
    replay_all(img, [(UnregisterBrokerRecord(broker_id=3, broker_epoch=12), 0)])
    assert img.brokers.get(3) is None and len(img.brokers) == 2
    assert img.unknown_records == 0 and img.bad_records == 0


def test_partition_changes_bump_epochs_as_kafka_merges():
    p = cluster().topics.by_name["t"].partitions[0]
    # ISR-only change: partition epoch +1, leader epoch unchanged; leader change: both +1
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (2, (2,), 1, 2)
    assert p.replicas == (1, 2, 3) and p.directories == (DIR,) * 3


def test_remove_topic_drops_partitions_and_configs():
    img = cluster()
    replay_all(img, [(RemoveTopicRecord(topic_id=TOPIC), 0)])
    assert len(img.topics) == 0 and "t" not in img.topics.by_name
    assert not any(k[0] == 2 for k in img.configs)


def test_producer_ids_only_move_forward():
    img = cluster()
    replay_all(img, [(ProducerIdsRecord(broker_id=1, broker_epoch=10, next_producer_id=500), 0)])
    assert img.next_producer_id == 1000
    replay_all(img, [(ProducerIdsRecord(broker_id=1, broker_epoch=10, next_producer_id=2000), 0)])
    assert img.next_producer_id == 2000


def test_snapshot_records_in_metadata_image_write_order_and_round_trip():
    img = cluster()
    values = img.snapshot_records()
    kinds = [unframe_metadata_record(v)[:2] for v in values]
    # features, brokers (v4), topic + partition (v2), configs, producer ids
    assert kinds == [(12, 0), (0, 4), (0, 4), (0, 4), (2, 0), (3, 2), (4, 0), (15, 0)]
    again = MetadataImage()
    for v in values:
        again.replay(v, 999)
    assert again.content() == img.content()
    assert again.brokers.get(3).register_offset == 999
