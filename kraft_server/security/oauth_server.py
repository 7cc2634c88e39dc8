"""SASL/OAUTHBEARER, server side, as Kafka's ``OAuthBearerSaslServer`` with its
``OAuthBearerValidatorCallbackHandler``:

- the client's initial response is parsed (``oauth_response.py``); a malformed one
  fails with the generic text;
- the token is checked by the listener's validator (``oauth_validator.py``). A token
  that fails is answered with the challenge ``{"status":"invalid_token"}``; the
  client then sends ^A (0x01) and the exchange fails with that JSON as the message
  (SASL_AUTHENTICATION_FAILED);
- an authorization id must equal the token's principal; extensions are all accepted;
- ``credential_expiry_ms``: the token's ``exp``, which bounds the session (KIP-368).
"""
from __future__ import annotations

import logging

from .oauth_response import OAuthResponseError, parse_initial_response
from .oauth_validator import JwtInvalid
from .sasl_failure import SaslFailure

log = logging.getLogger(__name__)

CONTROL_A = b"\x01"


def error_json(status: str, scope: str | None = None, openid_configuration: str | None = None) -> str:
    """Kafka's ``jsonErrorResponse``, key order and spacing included."""
    text = f'{{"status":"{status}"'
    if scope is not None:
        text += f', "scope":"{scope}"'
    if openid_configuration is not None:
        text += f', "openid-configuration":"{openid_configuration}"'
    return text + "}"


class OAuthBearerServer:
    mechanism = "OAUTHBEARER"

    def __init__(self, validator):
        self._validator = validator  # oauth_validator.JwtValidator
        self.complete = False
        self.authorization_id: str | None = None
        self.token = None
        self.extensions: dict[str, str] = {}
        self._error: str | None = None

    token_authenticated = False  # a delegation token's login (SCRAM only)

    @property
    def credential_expiry_ms(self) -> int | None:
        return self.token.lifetime_ms if self.token is not None else None

    def evaluate(self, data: bytes) -> bytes:
        if data == CONTROL_A and self._error is not None:
            raise SaslFailure(self._error, exposed=True)
        self._error = None
        try:
            response = parse_initial_response(data)
        except OAuthResponseError as exc:
            raise SaslFailure(str(exc), exposed=False) from None
        try:
            token = self._validator.validate(response.token)
        except JwtInvalid as exc:
            log.warning("OAUTHBEARER token refused: %s", exc)
            self._error = error_json("invalid_token")
            return self._error.encode()
        if response.authorization_id and response.authorization_id != token.principal:
            raise SaslFailure(f"Authentication failed: Client requested an authorization id "
                              f"({response.authorization_id}) that is different from the token's principal "
                              f"name ({token.principal})", exposed=True)
        self.token, self.extensions = token, response.extensions
        self.complete, self.authorization_id = True, token.principal
        return b""


__all__ = ["OAuthBearerServer", "error_json"]
