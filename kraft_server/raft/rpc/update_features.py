"""kraft.version 0 -> 1 through UpdateFeatures (API 57): a static quorum becomes dynamic.

Kafka's path: ``QuorumController.updateFeatures`` -> ``FeatureControlManager.updateFeature``
-> ``KafkaRaftClient.upgradeKRaftVersion`` -> ``LeaderState.maybeAppendUpgradedKRaftVersion``.

- Not the leader: top-level NOT_CONTROLLER.
- Per feature, as ``updateFeature``: an unknown upgrade type, a negative level, a
  level outside what we support, a downgrade asked as an upgrade, an upgrade asked
  as a downgrade -> INVALID_UPDATE_VERSION. kraft.version refuses any real
  downgrade ("Can't downgrade the version of this feature.").
- The upgrade itself needs every voter of the static set to have told the leader,
  through UpdateRaftVoter, its directory id and a kraft.version range covering 1
  (``LeaderState.upgrade_voters``); then one control batch carries
  KRaftVersionRecord(1) and the VotersRecord, and the reply waits for it to commit.
- Refusals are all-or-nothing (Kafka 4.x): the first failing feature becomes the
  top-level error "The update failed for all features since the following feature
  had an error: ...", and v2 carries no per-feature results.

A request naming other features goes to the active controller
(``controller/features/control.py``), which calls ``start_kraft_upgrade`` when
kraft.version is among them. Without a controller (the core alone), asking for the
level already finalized succeeds, anything else is refused.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import UpdateFeaturesRequest
from wire.messages import update_features_response as ufr

from kraft_server.common.refused import Refused
from kraft_server.raft import membership
from kraft_server.raft.roles.base import Role

API_KEY = UpdateFeaturesRequest.API_KEY
KRAFT_VERSION = "kraft.version"
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
FAILED = "The update failed for all features since the following feature had an error: "


NOT_ACTIVE = "This controller is not the active controller"


def invalid_update(feature: str, level: int, why: str) -> Refused:
    """A feature update ``FeatureControlManager.updateFeature`` refuses."""
    return Refused(ErrorCode.INVALID_UPDATE_VERSION, f"Invalid update version {level} for feature {feature}. {why}")


def check_update_kind(feature: str, level: int, kind: int) -> None:
    """``updateFeature``'s first checks: the upgrade type, then the level's sign."""
    if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        raise invalid_update(feature, level, "The controller does not support the given upgrade type.")
    if level < 0:
        raise invalid_update(feature, level, "A feature version cannot be less than 0.")


def check_direction(feature: str, level: int, kind: int, current: int) -> None:
    """``updateFeature``'s checks after support: a downgrade must say so, an upgrade must not."""
    if level < current and kind == UPGRADE:
        raise invalid_update(feature, level, "Can't downgrade the version of this feature without setting "
                                             "the upgrade type to either safe or unsafe downgrade.")
    if level > current and kind != UPGRADE:
        raise invalid_update(feature, level, "Can't downgrade to a newer version.")


def response_for(names: list[str], version: int):
    def respond(error: int, message: str | None):
        body = ufr.UpdateFeaturesResponse(error_code=error, error_message=message)
        if error == ErrorCode.NONE and version <= 1:
            body.results = [ufr.UpdatableFeatureResult(feature=n, error_code=0, error_message=None)
                            for n in names]
        return body
    return respond


def requested_updates(req, version: int):
    for u in req.feature_updates:
        if version == 0:
            kind = SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE
        else:
            kind = u.upgrade_type
        yield u.feature, u.max_version_level, kind


def supported_features(node) -> dict[str, tuple[int, int]]:
    cfg = node.config
    return {KRAFT_VERSION: (cfg.kraft_version_min, cfg.kraft_version_max)}


def _check(node, feature: str, level: int, kind: int, finalized: dict) -> None:
    """``FeatureControlManager.updateFeature``'s checks up to the kraft.version branch."""
    check_update_kind(feature, level, kind)
    supported = supported_features(node).get(feature)
    if supported is None:
        raise invalid_update(feature, level, "The controller does not support the given feature.")
    if not supported[0] <= level <= supported[1]:
        raise invalid_update(feature, level, f"Local controller {node.local_key.node_id} only supports "
                                             f"versions {supported[0]}-{supported[1]}")
    current = finalized.get(feature, 0)
    check_direction(feature, level, kind, current)
    if feature == KRAFT_VERSION and kind != UPGRADE and level != current:
        raise invalid_update(feature, level, "Can't downgrade the version of this feature.")
    if feature != KRAFT_VERSION and level != current:
        raise invalid_update(feature, level, "This node runs no metadata controller to change it.")


def upgrade_voters_error(node, leader, level: int) -> str | None:
    """``maybeAppendUpgradedKRaftVersion``'s refusals (None: the upgrade may go ahead)."""
    if leader.upgrade is not None:
        return f"Invalid concurrent upgrade of {KRAFT_VERSION} to version {level}"
    voters = leader.upgrade_voters
    if voters is None or voters.ids() != node.voter_set().ids():
        return f"Invalid upgrade of {KRAFT_VERSION} from version {node.kraft_version()} to {level}"
    if any(not n.kraft_version_min <= level <= n.kraft_version_max for n in voters.nodes):
        return f"Invalid upgrade of {KRAFT_VERSION} to {level} because not all of the voters support it"
    if any(n.key.directory_id.int == 0 for n in voters.nodes):
        return f"Directory id must be known for all of the voters: {voters.keys()}"
    return None


def handle_update_features_request(node, inbound, now_ms: int):
    req, version = inbound.body, inbound.api_version
    updates = list(requested_updates(req, version))
    respond = response_for([f for f, _, _ in updates], version)
    if node.role is not Role.LEADER or node.quorum.state.resign_requested:
        return respond(ErrorCode.NOT_CONTROLLER, NOT_ACTIVE)
    leader = node.quorum.state
    membership.expire(node, leader, now_ms)
    finalized = {KRAFT_VERSION: node.kraft_version()}
    upgrade_to = None
    try:
        for feature, level, kind in updates:
            _check(node, feature, level, kind, finalized)
            if feature == KRAFT_VERSION and level > finalized.get(KRAFT_VERSION, 0):
                reason = upgrade_voters_error(node, leader, level)
                if reason:
                    raise Refused(ErrorCode.INVALID_UPDATE_VERSION, reason)
                upgrade_to = level
    except Refused as refused:
        return respond(refused.code, FAILED + str(refused))
    if upgrade_to is None or req.validate_only:
        return respond(ErrorCode.NONE, None)
    last = membership.append_voters(node, leader.upgrade_voters, now_ms, kraft_version=upgrade_to)
    node.quorum.data_version = 1  # quorum-state follows kraft.version (QuorumStateData v1)
    leader.upgrade = membership.PendingUpgrade(inbound, last, now_ms + max(req.timeout_ms, 0), respond)
    node.stats["kraft_version_upgrades"] += 1
    return None  # answered once the control batch commits


def start_kraft_upgrade(node, level: int, validate_only: bool, now_ms: int) -> str | None:
    """kraft.version upgrade asked by the active controller along with other features
    (Kafka's ``upgradeKRaftVersion`` from ``FeatureControlManager``): the refusal, or
    None once the control batch is appended (or would be: ``validate_only``). The
    controller's answer waits for a record it writes after this batch."""
    if node.role is not Role.LEADER:
        return NOT_ACTIVE
    leader = node.quorum.state
    membership.expire(node, leader, now_ms)
    if level <= node.kraft_version():
        return None
    reason = upgrade_voters_error(node, leader, level)
    if reason or validate_only:
        return reason
    membership.append_voters(node, leader.upgrade_voters, now_ms, kraft_version=level)
    node.quorum.data_version = 1
    node.stats["kraft_version_upgrades"] += 1
    return None
