"""Client quotas (Kafka's ``ClientQuotaControlManager``): their part of the image,
its replay, and what AlterClientQuotas (49) writes.

An entity is a set of (type, name) parts, type ``user``, ``client-id`` or ``ip``; a
null name is the type's default. The image maps each entity to its quota keys and
values; a ClientQuotaRecord sets one key, or removes it (``Remove=true``), and an
entity whose last key goes is forgotten.

Rules of ``alterClientQuotas`` in Kafka 4.3.1 (every error is INVALID_REQUEST, the
entity's own result; other entities still go ahead, all records in one batch):

* a key named twice for one entity, or an entity named twice: "Ignoring duplicate
  entity ..." (the first one's records are kept, as Kafka keeps them);
* no parts, an unknown type, an empty name; ip mixed with user or client-id; an ip
  name that is not an address or a resolvable host (``isValidIpEntity``: Kafka
  resolves names on its controller thread, so do we);
* keys: user/client-id entities take producer_byte_rate, consumer_byte_rate
  (LONG), request_percentage and controller_mutation_rate (DOUBLE); ip entities
  take connection_creation_rate (INT) (``QuotaConfig``). A value must be above 0;
  LONG/INT values must be whole and within range. The first bad key fails the
  entity and none of its records is written;
* a removal of a key the entity has not set writes nothing; setting the value
  already held writes nothing.

Records list the entity's parts in the order Kafka's hash map yields them
(client-id before user), so their bytes equal Kafka's.
"""
from __future__ import annotations

import ipaddress
import logging
import socket

from wire.errors import ErrorCode, error_message
from wire.messages import AlterClientQuotasResponse, ClientQuotaRecord
from wire.messages import alter_client_quotas_response as acq
from wire.messages.client_quota_record import EntityData

from kraft_server.common.refused import Refused

from .write_queue import Write

log = logging.getLogger(__name__)

USER, CLIENT_ID, IP = "user", "client-id", "ip"
LONG, INT, DOUBLE = "LONG", "INT", "DOUBLE"
USER_CLIENT_KEYS = {"producer_byte_rate": LONG, "consumer_byte_rate": LONG,
                    "request_percentage": DOUBLE, "controller_mutation_rate": DOUBLE}
IP_KEYS = {"connection_creation_rate": INT}
LIMITS = {INT: 2**31 - 1, LONG: 2**63 - 1}
# The order of entity parts in Kafka's records (its HashMap's bucket order).
PART_ORDER = {CLIENT_ID: 0, USER: 1, IP: 2}

Entity = tuple  # ((type, name), ...) in PART_ORDER


def entity_of(parts) -> Entity:
    """The canonical entity of ``(type, name)`` pairs (a later pair of the same type
    wins, as the request's map in Kafka)."""
    named = {}
    for kind, name in parts:
        named[kind] = name
    return tuple(sorted(named.items(), key=lambda p: (PART_ORDER.get(p[0], 3), p[0])))


def describe(entity: Entity) -> str:
    """Kafka's ``ClientQuotaEntity.toString``."""
    inner = ", ".join(f"{k}={'null' if v is None else v}" for k, v in entity)
    return f"ClientQuotaEntity(entries={{{inner}}})"


class ClientQuotasImage:
    def __init__(self) -> None:
        self.entities: dict[Entity, dict[str, float]] = {}

    def replay(self, r: ClientQuotaRecord) -> None:
        entity = entity_of((e.entity_type, e.entity_name) for e in r.entity)
        quotas = self.entities.setdefault(entity, {})
        if r.remove:
            quotas.pop(r.key, None)
            if not quotas:
                del self.entities[entity]
        else:
            quotas[r.key] = r.value

    def snapshot_records(self) -> list[tuple[ClientQuotaRecord, int]]:
        return [(quota_record(entity, key, value), 0)
                for entity in sorted(self.entities, key=repr)
                for key, value in sorted(self.entities[entity].items())]

    def content(self) -> tuple:
        return tuple(sorted((repr(e), tuple(sorted(q.items()))) for e, q in self.entities.items()))


def quota_record(entity: Entity, key: str, value: float | None) -> ClientQuotaRecord:
    """Set ``key`` to ``value``, or remove it (``value`` None)."""
    return ClientQuotaRecord(entity=[EntityData(entity_type=t, entity_name=n) for t, n in entity],
                             key=key, value=0.0 if value is None else value, remove=value is None)


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


def _check_parts(entity: Entity) -> dict[str, str]:
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


def _check_value(keys: dict[str, str], key: str, value: float) -> None:
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


def _alter_entity(current: dict[str, float], entity: Entity, ops: dict[str, float | None]) -> list:
    keys = _check_parts(entity)
    records = []
    for key, value in ops.items():
        if value is None:
            if key in current:
                records.append((quota_record(entity, key, None), 0))
        else:
            _check_value(keys, key, value)
            if current.get(key) != value:
                records.append((quota_record(entity, key, value), 0))
    return records


def alter_client_quotas(quotas: ClientQuotasImage, entries) -> tuple[list, list]:
    """``entries``: the request's EntryData. Returns (results, records): per entry
    ``(entity parts as requested, error code, message or None)``."""
    results: dict[Entity, tuple[int, str | None]] = {}
    requested: dict[Entity, list] = {}
    records: list = []
    for entry in entries:
        parts = [(e.entity_type, e.entity_name) for e in entry.entity]
        entity = entity_of(parts)
        requested.setdefault(entity, parts)
        ops: dict[str, float | None] = {}
        for op in entry.ops:
            if op.key in ops:
                results[entity] = (ErrorCode.INVALID_REQUEST,
                                   f"Duplicate quota key {op.key} not updating quota for this entity "
                                   f"{describe(entity)}")
            else:
                ops[op.key] = None if op.remove else op.value
        if entity in results:
            results[entity] = (ErrorCode.INVALID_REQUEST, f"Ignoring duplicate entity {describe(entity)}")
            continue
        try:
            records += _alter_entity(quotas.entities.get(entity, {}), entity, ops)
            results[entity] = (ErrorCode.NONE, None)
        except Refused as refused:
            results[entity] = (refused.code, str(refused))
    return [(requested[e], code, message) for e, (code, message) in results.items()], records


def _response(results) -> AlterClientQuotasResponse:
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=[
        acq.EntryData(error_code=code, error_message=message,
                      entity=[acq.EntityData(entity_type=t, entity_name=n) for t, n in parts])
        for parts, code, message in results])


def alter_client_quotas_error_response(request, code: int) -> AlterClientQuotasResponse:
    return _response([([(e.entity_type, e.entity_name) for e in entry.entity], code, error_message(code))
                      for entry in request.entries])


def alter_client_quotas_op(request):
    """AlterClientQuotas (49, v0-1) as a write-queue operation; ``ValidateOnly`` writes
    nothing and answers the same results (``QuorumController.alterClientQuotas``)."""
    def run(image, next_offset, now_ms):
        results, records = alter_client_quotas(image.quotas, request.entries)
        if request.validate_only:
            records = []
        elif records:
            log.info("[Controller] altering %d client quota key(s)", len(records))
        return Write(records, lambda: _response(results))
    return run, lambda code: alter_client_quotas_error_response(request, code)
