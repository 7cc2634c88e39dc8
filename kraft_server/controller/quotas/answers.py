"""AlterClientQuotas (49) responses: per entity, its parts as requested with an error
code and message."""
from __future__ import annotations

from wire.errors import error_message
from wire.messages import AlterClientQuotasResponse
from wire.messages import alter_client_quotas_response as acq


def response(results) -> AlterClientQuotasResponse:
    return AlterClientQuotasResponse(throttle_time_ms=0, entries=[
        acq.EntryData(error_code=code, error_message=message,
                      entity=[acq.EntityData(entity_type=t, entity_name=n) for t, n in parts])
        for parts, code, message in results])


def alter_client_quotas_error_response(request, code: int) -> AlterClientQuotasResponse:
    return response([([(e.entity_type, e.entity_name) for e in entry.entity], code, error_message(code))
                      for entry in request.entries])
