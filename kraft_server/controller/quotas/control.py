"""AlterClientQuotas (49, v0-1) on the active controller (Kafka's
``ClientQuotaControlManager.alterClientQuotas``): each entity's result is its own
(other entities still go ahead), all records in one batch.

* a key named twice for one entity, or an entity named twice: "Ignoring duplicate
  entity ..." (the first one's records are kept, as Kafka keeps them);
* the entity and each value are checked by ``validation.py``; the first bad key
  fails the entity and none of its records is written;
* a removal of a key the entity has not set writes nothing; setting the value
  already held writes nothing.
"""
from __future__ import annotations

import logging

from wire.errors import ErrorCode

from kraft_server.common.refused import Refused

from ..image.client_quotas import ClientQuotasImage, Entity, describe, entity_of, quota_record
from ..write_queue import Write
from .answers import alter_client_quotas_error_response, response
from .validation import check_entity, check_value

log = logging.getLogger(__name__)


def _alter_entity(current: dict[str, float], entity: Entity, ops: dict[str, float | None]) -> list:
    keys = check_entity(entity)
    records = []
    for key, value in ops.items():
        if value is None:
            if key in current:
                records.append((quota_record(entity, key, None), 0))
        else:
            check_value(keys, key, value)
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


def alter_client_quotas_op(request):
    """AlterClientQuotas (49, v0-1) as a write-queue operation; ``ValidateOnly`` writes
    nothing and answers the same results (``QuorumController.alterClientQuotas``)."""
    def run(image, next_offset, now_ms):
        results, records = alter_client_quotas(image.quotas, request.entries)
        if request.validate_only:
            records = []
        elif records:
            log.info("[Controller] altering %d client quota key(s)", len(records))
        return Write(records, lambda: response(results))
    return run, lambda code: alter_client_quotas_error_response(request, code)
