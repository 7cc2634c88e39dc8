"""Error answers that carry the request's error at the top level only: the response's
defaults, its ErrorCode, and (by the table's reading, see ``messages.py``) its
ErrorMessage. ThrottleTimeMs is always 0 (the schema's default), so it is never set.

A few answers fill more fields; those are the ``_EXTRA`` functions of the response
class, the request version and the code.
"""
from __future__ import annotations

from wire.errors import ErrorCode
from wire.messages import RESPONSES, REQUESTS
from wire.messages.api_versions_response import ApiVersion

from .messages import api_message, default_message, raw_message

# api key -> how the ErrorMessage is filled (None: the answer has none)
TOP_LEVEL: dict[int, object] = {
    12: None,              # Heartbeat
    13: None,              # LeaveGroup
    14: None,              # SyncGroup (Assignment: empty bytes, its default)
    16: None,              # ListGroups
    11: None,              # JoinGroup, see _join_group
    17: None,              # SaslHandshake
    38: None,              # CreateDelegationToken, see _create_delegation_token
    39: None,              # RenewDelegationToken
    40: None,              # ExpireDelegationToken
    41: None,              # DescribeDelegationToken (no tokens)
    18: None,              # ApiVersions, see _api_versions
    47: None,              # OffsetDelete
    52: None,              # Vote
    53: None,              # BeginQuorumEpoch
    54: None,              # EndQuorumEpoch
    56: None,              # AlterPartition
    58: None,              # Envelope
    59: None,              # FetchSnapshot
    62: None,              # BrokerRegistration
    63: None,              # BrokerHeartbeat
    67: None,              # AllocateProducerIds
    73: None,              # AssignReplicasToDirs
    82: None,              # UpdateRaftVoter
    29: api_message,       # DescribeAcls
    36: api_message,       # SaslAuthenticate
    57: api_message,       # UpdateFeatures (no per-feature results for an error)
    60: api_message,       # DescribeCluster
    55: default_message,   # DescribeQuorum
    70: default_message,   # ControllerRegistration
    80: default_message,   # AddRaftVoter
    81: default_message,   # RemoveRaftVoter
    64: raw_message,       # UnregisterBroker
    94: raw_message,       # UnregisterController
}


def _join_group(version: int, code: int) -> dict:
    # UNKNOWN_PROTOCOL_NAME is "", and "" becomes null where the field is nullable (v7+)
    return {"generation_id": -1, "protocol_name": None if version >= 7 else "", "leader": "", "member_id": ""}


def _api_versions(version: int, code: int) -> dict:
    # KIP-511: an UNSUPPORTED_VERSION answer lists the versions of ApiVersions itself
    if code != ErrorCode.UNSUPPORTED_VERSION:
        return {}
    cls = REQUESTS[18]
    return {"api_keys": [ApiVersion(api_key=18, min_version=cls.MIN_VERSION, max_version=cls.MAX_VERSION)]}


def _create_delegation_token(version: int, code: int) -> dict:
    # prepareResponse with User:ANONYMOUS as owner and requester, no token
    fields = {"principal_type": "User", "principal_name": "ANONYMOUS", "issue_timestamp_ms": -1,
              "expiry_timestamp_ms": -1, "max_timestamp_ms": -1, "token_id": "", "hmac": b""}
    if version >= 3:
        fields.update(token_requester_principal_type="User", token_requester_principal_name="ANONYMOUS")
    return fields


_EXTRA = {11: _join_group, 18: _api_versions, 38: _create_delegation_token}


def top_level_answer(api_key: int, version: int, code: int, message: str | None):
    fields = {"error_code": code}
    rule = TOP_LEVEL[api_key]
    if rule is not None:
        fields["error_message"] = rule(code, message)
    extra = _EXTRA.get(api_key)
    if extra is not None:
        fields.update(extra(version, code))
    return RESPONSES[api_key](**fields)
