"""The replayed metadata state (Kafka's ``MetadataImage``): finalized feature levels,
broker registrations (``brokers.py``), controller registrations, topics and
partitions (``topics.py``), configs and the next producer id.

``offset`` is the offset of the last committed record replayed (Kafka's
``image.highestOffsetAndEpoch().offset()``, -1 before the first); ApiVersions
reports it as ``FinalizedFeaturesEpoch`` (``KRaftMetadataCache.features``).

``snapshot_records`` writes the state back as records in the order of
``MetadataImage.write``: features (metadata.version first, ``FeaturesImage``),
then the cluster (brokers, then controller registrations, ``ClusterImage``), topics
(``TopicsImage``), configs (``ConfigurationsImage``), client quotas
(``ClientQuotasImage``, ``client_quotas.py``) and producer ids
(``ProducerIdsImage``: NextProducerId with BrokerId/BrokerEpoch -1), ACLs
(``AclsImage``, ``acls.py``), SCRAM credentials and delegation tokens
(``DelegationTokenImage``, ``delegation_tokens.py``). NoOp and
transaction markers are not state.
"""
from __future__ import annotations

import logging

from wire.messages import ProducerIdsRecord, RegisterControllerRecord
from wire.records import decode_metadata_record, encode_metadata_record

from . import records as rec
from .configs import ConfigsImage
from .client_quotas import ClientQuotasImage
from .brokers import BrokersImage
from .topics import TopicsImage, encode_item, partition_record_version
from .scram import ScramImage
from .acls import AclsImage
from .delegation_tokens import DelegationTokensImage

log = logging.getLogger(__name__)

METADATA_VERSION = "metadata.version"
PARTITION_RECORD_FRAME = bytes((1, rec.PARTITION_RECORD))


class MetadataImage:
    _serials = iter(range(1, 1 << 62))

    def __init__(self) -> None:
        self.serial = next(MetadataImage._serials)  # unique per image, unlike id()
        self.features: dict[str, int] = {}
        self.controllers: dict[int, RegisterControllerRecord] = {}
        self.configs = ConfigsImage()  # (resource type, resource name, name) -> value
        self.brokers = BrokersImage()
        self.topics = TopicsImage()
        self.quotas = ClientQuotasImage()  # client_quotas.py
        self.scram = ScramImage()  # scram.py: SASL/SCRAM users
        self.acls = AclsImage()  # acls.py: what the authorizer checks
        self.tokens = DelegationTokensImage()  # delegation_tokens.py
        self.next_producer_id = -1  # ProducerIdsImage: -1 until a block was handed out
        self.offset = -1  # last replayed record
        self.epoch = -1  # epoch of the batch holding it
        self.last_timestamp = -1  # append time of that batch
        self.unknown_records = 0
        self.undecodable = 0  # records replay could not decode (see ``bad_records``)
        self.registrations_replayed = 0  # lets readers skip comparing unchanged registrations

    @property
    def has_metadata(self) -> bool:
        """Has any metadata.version been replayed? (An empty log needs bootstrap records.)"""
        return METADATA_VERSION in self.features

    def metadata_version(self) -> int | None:
        return self.features.get(METADATA_VERSION)

    def replay(self, value, offset: int = -1) -> None:
        """Apply one committed metadata record (at ``offset``). A record that does not
        decode is logged and counted, never fatal: committed data must not stop the node.
        A PartitionRecord is filed under its topic undecoded (``topics.Topic``):
        frame version 1, type 3, a one-byte version, and every version starts
        PartitionId (int32), TopicId (uuid)."""
        if type(value) is bytes and value[:2] == PARTITION_RECORD_FRAME and len(value) >= 23 \
                and value[2] < 0x80:
            self.topics.add_partition_value(value, value[7:23])
            return
        try:
            self._replay(value, offset)
        except (ValueError, TypeError, IndexError, OverflowError) as exc:  # DecodeError is a ValueError
            self.undecodable += 1
            if self.undecodable == 1 or self.undecodable % 10000 == 0:
                log.warning("skipped %d undecodable metadata record(s); latest: %s", self.undecodable, exc)

    @property
    def bad_records(self) -> int:
        """Records that did not decode: at replay, or (snapshot partitions) when first read."""
        return self.undecodable + self.topics.bad_records

    def _replay(self, value, offset: int) -> None:
        api_key = rec.unframe(value)[0]
        if api_key not in rec.MODELLED_RECORDS:
            # A record type this node does not model (written by a newer or fuller
            # controller): kept out of our image, counted so tests can see it.
            self.unknown_records += 1
            return
        # read as Kafka's MetadataRecordSerde reads it (any version, nothing left over)
        r = decode_metadata_record(value).message
        if api_key == rec.FEATURE_LEVEL_RECORD:
            if r.feature_level == 0 and r.name != METADATA_VERSION:
                self.features.pop(r.name, None)  # level 0: the feature is removed
            else:
                self.features[r.name] = r.feature_level
        elif api_key == rec.REGISTER_CONTROLLER_RECORD:
            self.controllers[r.controller_id] = r
            self.registrations_replayed += 1
        elif api_key == rec.UNREGISTER_CONTROLLER_RECORD:
            if self.controllers.pop(r.controller_id, None) is None:
                log.warning("Unable to replay %s: no controller registration found for that id", r)
            self.registrations_replayed += 1
        elif api_key == rec.CONFIG_RECORD:
            self.configs.replay(r)
        elif api_key == rec.REGISTER_BROKER_RECORD:
            self.brokers.register(r, offset)
        elif api_key == rec.BROKER_REGISTRATION_CHANGE_RECORD:
            self.brokers.change(r)
        elif api_key == rec.UNREGISTER_BROKER_RECORD:
            self.brokers.unregister(r.broker_id, r.broker_epoch)
        elif api_key == rec.FENCE_BROKER_RECORD:
            self.brokers.set_fenced(r.id, r.epoch, True)
        elif api_key == rec.UNFENCE_BROKER_RECORD:
            self.brokers.set_fenced(r.id, r.epoch, False)
        elif api_key == rec.TOPIC_RECORD:
            self.topics.add_topic(r.name, r.topic_id)
        elif api_key == rec.PARTITION_RECORD:
            self.topics.add_partition(r)
        elif api_key == rec.PARTITION_CHANGE_RECORD:
            self.topics.change_partition(r)
        elif api_key == rec.REMOVE_TOPIC_RECORD:
            removed = self.topics.remove_topic(r.topic_id)
            if removed is not None:  # the topic's configs go with it (ConfigurationsDelta)
                self.configs.drop_topic(removed.name)
        elif api_key == rec.CLEAR_ELR_RECORD:
            self.topics.clear_elr(r.topic_name)
        elif api_key == rec.PRODUCER_IDS_RECORD:
            if r.next_producer_id <= self.next_producer_id:
                log.warning("ProducerIdsRecord %d does not move past %d", r.next_producer_id,
                            self.next_producer_id)
            else:
                self.next_producer_id = r.next_producer_id
        elif api_key == rec.CLIENT_QUOTA_RECORD:
            self.quotas.replay(r)
        elif api_key == rec.USER_SCRAM_CREDENTIAL_RECORD:
            self.scram.replay(r)
        elif api_key == rec.REMOVE_USER_SCRAM_CREDENTIAL_RECORD:
            self.scram.remove(r)
        elif api_key == rec.DELEGATION_TOKEN_RECORD:
            self.tokens.replay(r)
        elif api_key == rec.REMOVE_DELEGATION_TOKEN_RECORD:
            self.tokens.remove(r)
        elif api_key == rec.ACCESS_CONTROL_ENTRY_RECORD:
            self.acls.replay(r)
        elif api_key == rec.REMOVE_ACCESS_CONTROL_ENTRY_RECORD:
            self.acls.remove(r)
        # NoOp and the transaction markers are not state

    def finalized_features(self) -> dict[str, int]:
        return dict(self.features)

    def snapshot_records(self) -> list[bytes]:
        version = partition_record_version(self.metadata_version() or 0)
        return [encode_item(item, self.topics, version) for item in self.snapshot_items()]

    def snapshot_items(self) -> list:
        """What ``snapshot_records`` writes, the topics' records not yet encoded: values
        (bytes), TopicRecords as ``(record, 0)`` and PartitionRecords
        (``topics.encode_item``).
        A change replaces a partition's record, never edits it, so the list keeps this
        image's state while replay goes on (``snapshot_build.py``)."""
        out = []
        if METADATA_VERSION in self.features:
            out.append(rec.feature_level(METADATA_VERSION, self.features[METADATA_VERSION]))
        out += [rec.feature_level(n, lvl) for n, lvl in sorted(self.features.items()) if n != METADATA_VERSION]
        mv = self.metadata_version() or 0
        out += [encode_metadata_record(r, v) for r, v in self.brokers.snapshot_records(mv)]
        out += [rec.register_controller(self.controllers[i]) for i in sorted(self.controllers)]
        out += self.topics.snapshot_records(mv)
        out += self.configs.snapshot_records()
        out += [encode_metadata_record(r, v) for r, v in self.quotas.snapshot_records()]
        if self.next_producer_id >= 0:
            out.append(encode_metadata_record(ProducerIdsRecord(
                broker_id=-1, broker_epoch=-1, next_producer_id=self.next_producer_id), 0))
        out += [encode_metadata_record(r, v) for r, v in self.acls.snapshot_records()]
        out += [encode_metadata_record(r, v) for r, v in self.scram.snapshot_records()]
        out += [encode_metadata_record(r, v) for r, v in self.tokens.snapshot_records()]
        return out

    def content(self) -> tuple:
        """A comparable summary (tests: two snapshots at one offset hold the same state)."""
        return (tuple(sorted(self.features.items())),
                tuple((i, self.controllers[i].encode(0)) for i in sorted(self.controllers)),
                tuple(sorted(self.configs.items())),
                tuple((b.broker_id, b.record.encode(4)) for b in self.brokers),
                tuple((t.name, t.topic_id, tuple((pid, t.partitions[pid].encode(2)) for pid in sorted(t.partitions)))
                      for t in self.topics),
                self.next_producer_id,
                self.quotas.content(),
                self.scram.content(),
                self.acls.content(),
                self.tokens.content())
