"""AlterUserScramCredentials (51, v0) on the active controller, as Kafka's
``ScramControlManager.alterCredentials`` decides it: the client sends the salt and
the salted password, the controller derives the stored and server keys and writes
UserScramCredentialRecord (an upsertion) or RemoveUserScramCredentialRecord (a
deletion) in one atomic batch, answered after commit. One result per user:

- a user named twice in one request: DUPLICATE_RESOURCE "A user credential cannot be
  altered twice in the same request";
- an empty name: UNACCEPTABLE_CREDENTIAL "Username must not be empty"; a mechanism
  other than 1 or 2: UNSUPPORTED_SASL_MECHANISM "Unknown SCRAM mechanism";
- iterations outside 4096..16384: UNACCEPTABLE_CREDENTIAL "Too few iterations" /
  "Too many iterations";
- deleting a credential that is not there: RESOURCE_NOT_FOUND "Attempt to delete a
  user credential that does not exist".
"""
from __future__ import annotations

import hashlib
import hmac
import logging

from kraft_server.security.scram import DIGESTS, MIN_ITERATIONS
from wire.errors import ErrorCode
from wire.messages import (
    AlterUserScramCredentialsResponse, RemoveUserScramCredentialRecord, UserScramCredentialRecord)
from wire.messages.alter_user_scram_credentials_response import AlterUserScramCredentialsResult

from ..image.scram import _NAMES as MECHANISM_NAMES
from ..write_queue import Write

log = logging.getLogger(__name__)

MAX_ITERATIONS = 16384
DUPLICATE = (ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")


def _check_name_and_mechanism(name: str, mechanism: int):
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def _check_upsertion(u):
    error = _check_name_and_mechanism(u.name, u.mechanism)
    if error is None and u.iterations < MIN_ITERATIONS:
        error = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if error is None and u.iterations > MAX_ITERATIONS:
        error = ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return error


def _check_deletion(scram, d):
    error = _check_name_and_mechanism(d.name, d.mechanism)
    if error is None and scram.get(MECHANISM_NAMES[d.mechanism], d.name) is None:
        error = ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
    return error


def _credential_record(u) -> UserScramCredentialRecord:
    digest = DIGESTS[MECHANISM_NAMES[u.mechanism]]
    salted = bytes(u.salted_password)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    return UserScramCredentialRecord(
        name=u.name, mechanism=u.mechanism, salt=bytes(u.salt),
        stored_key=hashlib.new(digest, client_key).digest(),
        server_key=hmac.new(salted, b"Server Key", digest).digest(), iterations=u.iterations)


def alter_scram_credentials(scram, request) -> tuple[list, list]:
    """(results, records) for ``request`` against the image's ``ScramImage``."""
    errors, deletions, upsertions = {}, {}, {}
    for d in request.deletions:
        if d.name in deletions or d.name in errors:
            deletions.pop(d.name, None)
            errors[d.name] = DUPLICATE
        else:
            error = _check_deletion(scram, d)
            (errors.__setitem__(d.name, error) if error else deletions.__setitem__(d.name, d))
    for u in request.upsertions:
        if u.name in deletions or u.name in upsertions or u.name in errors:
            deletions.pop(u.name, None)
            upsertions.pop(u.name, None)
            errors[u.name] = DUPLICATE
        else:
            error = _check_upsertion(u)
            (errors.__setitem__(u.name, error) if error else upsertions.__setitem__(u.name, u))
    results, records = [], []
    for name, d in deletions.items():
        results.append(AlterUserScramCredentialsResult(user=name, error_code=0, error_message=None))
        records.append((RemoveUserScramCredentialRecord(name=name, mechanism=d.mechanism), 0))
    for name, u in upsertions.items():
        results.append(AlterUserScramCredentialsResult(user=name, error_code=0, error_message=None))
        records.append((_credential_record(u), 0))
    for name, (code, message) in errors.items():
        results.append(AlterUserScramCredentialsResult(user=name, error_code=code, error_message=message))
    return results, records


def alter_user_scram_credentials_op(request):
    """AlterUserScramCredentials as a write-queue operation."""
    def run(image, next_offset, now_ms):
        results, records = alter_scram_credentials(image.scram, request)
        if records:
            log.info("[Controller] altering %d SCRAM credential(s)", len(records))
        return Write(records, lambda: AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results))
    return run, lambda code: alter_user_scram_credentials_error_response(request, code)


def alter_user_scram_credentials_error_response(request, code: int) -> AlterUserScramCredentialsResponse:
    """Kafka's ``getErrorResponse``: the error for every user named."""
    names = list(dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions]))
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[
        AlterUserScramCredentialsResult(user=n, error_code=code, error_message=None) for n in names])
