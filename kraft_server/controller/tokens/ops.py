"""Create/Renew/ExpireDelegationToken as write-queue operations (``write_queue.py``):
decided on the committed image when they run (``control.py``), answered after their
records commit, built at the request's version as Kafka's ``ControllerApis`` builds
them. ``refusal_response``: the answers ``ControllerApis`` gives before the controller
sees the request (a token-authenticated caller, a plaintext connection, an owner the
caller may not create tokens for): -1 timestamps."""
from __future__ import annotations

import logging

from wire.messages import CreateDelegationTokenResponse, ExpireDelegationTokenResponse, RenewDelegationTokenResponse

from ..write_queue import Write
from . import control

log = logging.getLogger(__name__)
CREATE, RENEW, EXPIRE = 38, 39, 40
_REQUESTER = ("token_requester_principal_type", "token_requester_principal_name")


def create_response(version: int, fields: dict) -> CreateDelegationTokenResponse:
    if version < 3:  # the requester is v3+
        fields = {k: v for k, v in fields.items() if k not in _REQUESTER}
    return CreateDelegationTokenResponse(**fields)


def _split(principal: str) -> tuple[str, str]:
    kind, _, name = principal.partition(":")
    return kind, name


def refusal_response(api_key: int, version: int, body, code: int, requester: str):
    if api_key == CREATE:
        owner, req = _split(control.owner_of(body, requester)), _split(requester)
        return create_response(version, {
            "error_code": code, "principal_type": owner[0], "principal_name": owner[1],
            "token_requester_principal_type": req[0], "token_requester_principal_name": req[1],
            "issue_timestamp_ms": -1, "expiry_timestamp_ms": -1, "max_timestamp_ms": -1,
            "token_id": "", "hmac": b""})
    cls = RenewDelegationTokenResponse if api_key == RENEW else ExpireDelegationTokenResponse
    return cls(error_code=code, expiry_timestamp_ms=-1)


def error_response(api_key: int, version: int, body, code: int):
    """NOT_CONTROLLER or a deadline: the controller's future failed, so Kafka answers
    with the request's ``getErrorResponse`` (``api/error_answer``)."""
    from kraft_server.api.error_answer import error_answer
    return error_answer(api_key, version, body, code)


def token_op(api_key: int, version: int, body, settings: control.TokenSettings, principal: str):
    """(run, fail) of one token request from ``principal``."""
    def run(image, next_offset, now_ms):
        if api_key == CREATE:
            fields, records = control.create(image, settings, principal, body, now_ms)
            answer = create_response(version, fields)
            if records:
                log.info("[Controller] delegation token %s created for %s", fields["token_id"],
                         control.owner_of(body, principal))
        else:
            decide = control.renew if api_key == RENEW else control.expire
            code, expiry, records = decide(image, settings, principal, body, now_ms)
            cls = RenewDelegationTokenResponse if api_key == RENEW else ExpireDelegationTokenResponse
            answer = cls(error_code=code, expiry_timestamp_ms=expiry)
        return Write(records, lambda: answer)
    return run, lambda code: error_response(api_key, version, body, code)


def sweep_op():
    """The periodic removal of expired tokens (Kafka's ``sweepExpiredDelegationTokens``)."""
    def run(image, next_offset, now_ms):
        return Write(control.sweep(image, now_ms), lambda: None)
    return run, lambda code: None
