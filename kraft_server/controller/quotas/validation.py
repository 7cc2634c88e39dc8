"""Which client quota entities and values AlterClientQuotas (49) accepts
(``ClientQuotaControlManager.validateEntity``, ``configKeysForEntityType`` and
``validateQuotaKeyValue`` of Kafka 4.3.1; every error is INVALID_REQUEST):

* no parts, an unknown type, an empty name; ip mixed with user or client-id; an ip
  name that is not an address or a resolvable host (``isValidIpEntity``: Kafka
  resolves names on its controller thread, so do we);
* keys: user/client-id entities take producer_byte_rate, consumer_byte_rate
  (LONG), request_percentage and controller_mutation_rate (DOUBLE); ip entities
  take connection_creation_rate (INT) (``QuotaConfig``). A value must be above 0;
  LONG/INT values must be whole and within range.
"""
from __future__ import annotations

import ipaddress
import socket

from wire.errors import ErrorCode

from kraft_server.common.refused import Refused

from ..image.client_quotas import CLIENT_ID, IP, PART_ORDER, USER, Entity

LONG, INT, DOUBLE = "LONG", "INT", "DOUBLE"
USER_CLIENT_KEYS = {"producer_byte_rate": LONG, "consumer_byte_rate": LONG,
                    "request_percentage": DOUBLE, "controller_mutation_rate": DOUBLE}
IP_KEYS = {"connection_creation_rate": INT}
LIMITS = {INT: 2**31 - 1, LONG: 2**63 - 1}


def valid_ip_entity(name: str | None) -> bool:
    if name is None:
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(name, None)
        return True
    except (OSError, UnicodeError):
        return False


def check_entity(entity: Entity) -> dict[str, str]:
    """``validateEntity`` then ``configKeysForEntityType``: the keys the entity takes."""
    if not entity:
        raise Refused(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    for kind, name in entity:
        if kind not in PART_ORDER:
            raise Refused(ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {kind}")
        if name == "":
            raise Refused(ErrorCode.INVALID_REQUEST, f"Empty {kind} not supported")
    kinds = {k for k, _ in entity}
    if IP in kinds:
        if kinds & {USER, CLIENT_ID}:
            # Kafka's message, missing space included
            raise Refused(ErrorCode.INVALID_REQUEST, "Invalid quota entity combination, IP entity shouldnot be combined "
                          "with User or ClientId")
        name = dict(entity)[IP]
        if not valid_ip_entity(name):
            raise Refused(ErrorCode.INVALID_REQUEST, f"{name} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_CLIENT_KEYS


def check_value(keys: dict[str, str], key: str, value: float) -> None:
    """``validateQuotaKeyValue``."""
    kind = keys.get(key)
    if kind is None:
        raise Refused(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
    if not value > 0.0:
        raise Refused(ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    if kind == DOUBLE:
        return
    if value > LIMITS[kind]:
        article = "an" if kind == INT else "a"
        raise Refused(ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for {article} {kind}.")
    if abs(value % 1.0) > 1e-6:
        raise Refused(ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value.")
