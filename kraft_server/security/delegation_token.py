"""A delegation token's secrets, as Kafka derives them (KIP-48):

- its HMAC is HMAC-SHA512 of the token id (UTF-8) keyed with
  ``delegation.token.secret.key`` (UTF-8), as ``DelegationTokenControlManager.createHmac``;
- a client logs in with SCRAM (``tokenauth=true`` in the client-first message's
  extensions) with the token id as user name and the HMAC in base64 as password
  (``DelegationToken.hmacAsBase64String``); the server keeps a SCRAM credential
  made from that password with a fresh salt and the mechanism's minimum iterations,
  as ``DelegationTokenManager.updateToken`` fills the ``DelegationTokenCache``.

``TokenCredentials`` is that cache over the image's tokens (every node replays them):
``lookup(mechanism, token_id) -> (ScramCredential, owner, expiry) | None``, the
credential made once per token and mechanism.
"""
from __future__ import annotations

import base64
import hashlib
import hmac as _hmac

from .scram import MIN_ITERATIONS, make_credential


def token_hmac(secret: str, token_id: str) -> bytes:
    return _hmac.new(secret.encode("utf-8"), token_id.encode("utf-8"), hashlib.sha512).digest()


def token_password(secret: str, token_id: str) -> str:
    """What a client gives SCRAM as the password: the HMAC in base64."""
    return base64.b64encode(token_hmac(secret, token_id)).decode()


def principal_name(principal: str) -> str:
    """``User:alice`` -> ``alice`` (``KafkaPrincipal.getName``)."""
    return principal.split(":", 1)[1] if ":" in principal else principal


class TokenCredentials:
    """SCRAM credentials of the tokens in ``image()``'s ``tokens`` (None: no secret
    key, token logins refused)."""

    def __init__(self, secret: str | None, image) -> None:
        self.secret = secret
        self._image = image  # () -> the current MetadataImage
        self._credentials: dict[tuple[str, str], object] = {}

    def lookup(self, mechanism: str, token_id: str):
        """(credential, owner name, expiry timestamp) of a token, or None."""
        if not self.secret:
            return None
        record = self._image().tokens.get(token_id)
        if record is None:
            self._credentials = {k: v for k, v in self._credentials.items() if k[1] != token_id}
            return None
        key = (mechanism, token_id)
        credential = self._credentials.get(key)
        if credential is None:
            credential = make_credential(mechanism, token_password(self.secret, token_id),
                                         iterations=MIN_ITERATIONS)
            self._credentials[key] = credential
        return credential, principal_name(record.owner), record.expiration_timestamp
