"""UpdateFeatures (57, v0-2) for every finalized feature (Kafka's
``FeatureControlManager.updateFeature``): metadata.version, group.version,
transaction.version, eligible.leader.replicas.version, share.version,
streams.version, and kraft.version when it comes with others. A request naming
kraft.version alone stays in the Raft core (``raft/rpc/update_features.py``).

Per feature, in Kafka 4.3.1's order (each refusal is INVALID_UPDATE_VERSION, "Invalid
update version L for feature F. <why>", and fails the whole request):

1. an unknown upgrade type; a level below 0;
2. support: this controller's own range ("Local controller N ..."), then every
   registered broker's ("Broker N ...") and, from metadata.version 3.7-IV0, every
   other registered controller's ("Controller N ..."): a feature a node does not
   list counts as 0-0 ("... does not support this feature."), else "... only
   supports versions A-B"; a voter with no registration refuses any change
   ("controller N has not registered, and may not support this feature");
3. a lower level asked as an upgrade, a higher one asked as a downgrade;
4. metadata.version: a downgrade is allowed only when no version between the two
   changed the metadata format (``MetadataVersion.checkIfMetadataChanged``); else
   refused, and UNSAFE_DOWNGRADE is refused too ("not supported in this version");
5. kraft.version: an upgrade is the Raft core's (the control batch), followed here by
   a NoOpRecord so that the answer waits for both; a downgrade to another level is
   refused;
6. the others: dependencies (eligible.leader.replicas.version 1 needs
   metadata.version 4.0-IV1), then a FeatureLevelRecord (level 0 removes it).

Turning ELR on also writes the cluster-level ``min.insync.replicas`` when missing and
removes broker-level ones (``maybeGenerateElrSafetyRecords``). ``ValidateOnly`` writes
nothing.
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode
from wire.messages import ConfigRecord, FeatureLevelRecord, NoOpRecord

from kraft_server.common import features, metadata_version
from kraft_server.common.refused import Refused
from kraft_server.raft import feature_updates as raft_features

from ..image import records as rec
from ..cluster.registration import CONTROLLER_REGISTRATION_MIN_MV
from ..write_queue import Write

log = logging.getLogger(__name__)

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = raft_features.KRAFT_VERSION
ELR = "eligible.leader.replicas.version"
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = (raft_features.UPGRADE, raft_features.SAFE_DOWNGRADE,
                                             raft_features.UNSAFE_DOWNGRADE)


def _range_text(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}-{hi}"


def _not_supported(level: int, who: str, rng: tuple[int, int]) -> str | None:
    """``QuorumFeatures.reasonNotSupported``."""
    if rng[0] <= level <= rng[1]:
        return None
    if rng[1] == 0:
        return f"{who} does not support this feature."
    return f"{who} only supports versions {_range_text(*rng)}"


def _ranges(features) -> dict[str, tuple[int, int]]:
    return {f.name: (f.min_supported_version, f.max_supported_version) for f in features}


def reason_not_supported(image, local: dict, node_id: int, voter_ids, feature: str, level: int) -> str | None:
    why = _not_supported(level, f"Local controller {node_id}", local.get(feature, (0, 0)))
    if why:
        return why
    for b in image.brokers:
        why = _not_supported(level, f"Broker {b.broker_id}", _ranges(b.record.features).get(feature, (0, 0)))
        if why:
            return why
    if (image.metadata_version() or 0) < CONTROLLER_REGISTRATION_MIN_MV:
        return None  # Kafka cannot check controllers before registrations exist
    registered = {node_id}
    for cid, r in sorted(image.controllers.items()):
        if cid == node_id:
            continue
        why = _not_supported(level, f"Controller {cid}", _ranges(r.features).get(feature, (0, 0)))
        if why:
            return why
        registered.add(cid)
    for vid in voter_ids:
        if vid not in registered:
            return f"controller {vid} has not registered, and may not support this feature"
    return None


def _metadata_version_change(current: int, level: int, kind: int) -> None:
    if level < current:
        if metadata_version.metadata_changed(level, current):
            why = ("Unsafe metadata downgrade is not supported in this version." if kind == UNSAFE_DOWNGRADE
                   else "Refusing to perform the requested downgrade because it might delete metadata "
                        "information.")
            raise Refused(ErrorCode.INVALID_UPDATE_VERSION,
                          f"Unsupported metadata.version downgrade from {current} to {level}. {why}")
        log.warning("Downgrading metadata.version from %d to %d.", current, level)
    elif level > current:
        log.warning("Upgrading metadata.version from %d to %d.", current, level)


def _check_dependencies(feature: str, level: int, proposed: dict[str, int]) -> None:
    """``Feature.validateVersion``: the levels this one needs (only metadata.version today)."""
    for name, need in features.dependencies(feature, level).items():
        if name == METADATA_VERSION and proposed.get(METADATA_VERSION, 0) < need:
            raise raft_features.invalid_update(feature, level, f"{feature} could not be set to {level} because "
                                               f"it depends on metadata.version={need} ({metadata_version.name(need)})")


def _elr_safety_records(image, min_insync: int) -> list:
    out = []
    cluster = (rec.BROKER_RESOURCE, "", "min.insync.replicas")
    if cluster not in image.configs:
        out.append(ConfigRecord(resource_type=rec.BROKER_RESOURCE, resource_name="",
                                name="min.insync.replicas", value=str(min_insync)))
    for (kind, name, key) in sorted(image.configs):
        if kind == rec.BROKER_RESOURCE and name != "" and key == "min.insync.replicas":
            out.append(ConfigRecord(resource_type=kind, resource_name=name, name=key, value=None))
    return out


class FeatureUpdate:
    """One UpdateFeatures request decided on the committed image."""

    def __init__(self, image, core, local: dict[str, tuple[int, int]], node_id: int,
                 min_insync_replicas: int = 1):
        self.image, self.core, self.local, self.node_id = image, core, local, node_id
        self.min_insync = min_insync_replicas

    def current(self, feature: str) -> int:
        if feature == METADATA_VERSION:
            return self.image.metadata_version() or 0
        if feature == KRAFT_VERSION:
            return self.core.kraft_version()
        return self.image.features.get(feature, 0)

    def decide(self, updates, validate_only: bool, now_ms: int) -> list:
        """Records for ``updates`` [(feature, level, kind)]; raises ``Refused``."""
        proposed = dict(self.image.features)
        proposed.update({f: lvl for f, lvl, _ in updates})
        voter_ids = sorted(self.core.voter_set().ids())
        records = []
        for feature, level, kind in updates:
            records += self._one(feature, level, kind, proposed, voter_ids, validate_only, now_ms)
        return [] if validate_only else records

    def _one(self, feature, level, kind, proposed, voter_ids, validate_only, now_ms) -> list:
        raft_features.check_update_kind(feature, level, kind)
        current = self.current(feature)
        why = reason_not_supported(self.image, self.local, self.node_id, voter_ids, feature, level)
        if why:
            raise raft_features.invalid_update(feature, level, why)
        raft_features.check_direction(feature, level, kind, current)
        if feature == METADATA_VERSION:
            _metadata_version_change(current, level, kind)
            return [(FeatureLevelRecord(name=feature, feature_level=level), 0)]
        if feature == KRAFT_VERSION:
            return self._kraft_version(level, kind, current, validate_only, now_ms)
        _check_dependencies(feature, level, proposed)
        out = [(FeatureLevelRecord(name=feature, feature_level=level), 0)]
        if feature == ELR and level > 0 and current == 0:
            out += [(r, 0) for r in _elr_safety_records(self.image, self.min_insync)]
        return out

    def _kraft_version(self, level, kind, current, validate_only, now_ms) -> list:
        if kind != UPGRADE:
            if level != current:
                raise raft_features.invalid_update(KRAFT_VERSION, level, "Can't downgrade the version of this feature.")
            return []
        if level > current:
            reason = raft_features.start_kraft_upgrade(self.core, level, validate_only, now_ms)
            if reason:
                raise Refused(ErrorCode.INVALID_UPDATE_VERSION, reason)
        return [(NoOpRecord(), 0)]


def update_features_op(request, version: int, core, local: dict, node_id: int):
    """The write-queue operation; the answer has Kafka 4.x's all-or-nothing shape."""
    updates = list(raft_features.requested_updates(request, version))
    respond = raft_features.response_for([f for f, _, _ in updates], version)

    def run(image, next_offset, now_ms):
        try:
            records = FeatureUpdate(image, core, local, node_id).decide(updates, request.validate_only, now_ms)
        except Refused as refused:
            code, message = refused.code, raft_features.FAILED + str(refused)
            return Write([], lambda: respond(code, message))
        if records:
            log.info("[Controller %d] updating features %s", node_id,
                     ", ".join(f"{f}={lvl}" for f, lvl, _ in updates))
        return Write(records, lambda: respond(ErrorCode.NONE, None))
    return run, lambda code: respond(code, raft_features.NOT_ACTIVE if code == ErrorCode.NOT_CONTROLLER else None)
