"""The replayed metadata state (Kafka's ``MetadataImage``, the parts a controller-only
quorum has): finalized feature levels, controller registrations and configs.

``offset`` is the offset of the last committed record replayed (Kafka's
``image.highestOffsetAndEpoch().offset()``, -1 before the first); ApiVersions
reports it as ``FinalizedFeaturesEpoch`` (``KRaftMetadataCache.features``).

``snapshot_records`` writes the state back as records in the order of
``MetadataImage.write``: features (metadata.version first, ``FeaturesImage``),
then the cluster (controller registrations, ``ClusterImage``), then configs
(``ConfigurationsImage``). NoOp and transaction markers are not state.
"""
from __future__ import annotations

import logging

from wire.messages import RegisterControllerRecord
from wire.records import decode_metadata_record

from . import records as rec

log = logging.getLogger(__name__)

METADATA_VERSION = "metadata.version"


class MetadataImage:
    _serials = iter(range(1, 1 << 62))

    def __init__(self) -> None:
        self.serial = next(MetadataImage._serials)  # unique per image, unlike id()
        self.features: dict[str, int] = {}
        self.controllers: dict[int, RegisterControllerRecord] = {}
        self.configs: dict[tuple[int, str, str], str] = {}
        self.offset = -1  # last replayed record
        self.epoch = -1  # epoch of the batch holding it
        self.last_timestamp = -1  # append time of that batch
        self.unknown_records = 0
        self.bad_records = 0
        self.registrations_replayed = 0  # lets readers skip comparing unchanged registrations

    @property
    def has_metadata(self) -> bool:
        """Has any metadata.version been replayed? (An empty log needs bootstrap records.)"""
        return METADATA_VERSION in self.features

    def metadata_version(self) -> int | None:
        return self.features.get(METADATA_VERSION)

    def replay(self, value) -> None:
        """Apply one committed metadata record. A record that does not decode is
        logged and counted, never fatal: committed data must not stop the node."""
        try:
            self._replay(value)
        except (ValueError, TypeError, IndexError, OverflowError) as exc:  # DecodeError is a ValueError
            self.bad_records += 1
            if self.bad_records == 1 or self.bad_records % 10000 == 0:
                log.warning("skipped %d undecodable metadata record(s); latest: %s", self.bad_records, exc)

    def _replay(self, value) -> None:
        api_key = rec.unframe(value)[0]
        if api_key not in (rec.FEATURE_LEVEL_RECORD, rec.REGISTER_CONTROLLER_RECORD,
                           rec.CONFIG_RECORD, rec.NO_OP_RECORD, rec.BEGIN_TRANSACTION_RECORD,
                           rec.END_TRANSACTION_RECORD, rec.ABORT_TRANSACTION_RECORD):
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
        elif api_key == rec.CONFIG_RECORD:
            key = (r.resource_type, r.resource_name, r.name)
            if r.value is None:
                self.configs.pop(key, None)
            else:
                self.configs[key] = r.value
        # NoOp and the transaction markers are not state

    def finalized_features(self) -> dict[str, int]:
        return dict(self.features)

    def snapshot_records(self) -> list[bytes]:
        out = []
        if METADATA_VERSION in self.features:
            out.append(rec.feature_level(METADATA_VERSION, self.features[METADATA_VERSION]))
        out += [rec.feature_level(n, lvl) for n, lvl in sorted(self.features.items()) if n != METADATA_VERSION]
        out += [rec.register_controller(self.controllers[i]) for i in sorted(self.controllers)]
        out += [rec.config(t, r, n, v) for (t, r, n), v in sorted(self.configs.items())]
        return out

    def content(self) -> tuple:
        """A comparable summary (tests: two snapshots at one offset hold the same state)."""
        return (tuple(sorted(self.features.items())),
                tuple((i, self.controllers[i].encode(0)) for i in sorted(self.controllers)),
                tuple(sorted(self.configs.items())))
