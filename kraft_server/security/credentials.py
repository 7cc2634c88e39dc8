"""SCRAM credentials as the server looks them up: from the committed metadata image
(UserScramCredentialRecord replayed by ``kraft_server/controller``), by mechanism
and user name, on every node, leader or not (Kafka's ``CredentialCache`` fed by
``ScramPublisher``).

Until the image holds any committed metadata (no ``metadata.version`` replayed yet),
the credentials formatted into the node's ``bootstrap.checkpoint`` (``kraft-storage
format --add-scram``) answer instead: freshly formatted voters that authenticate each
other with SCRAM (``sasl.mechanism.controller.protocol``) need them to elect the leader
that will commit them (Kafka's KAFKA-15513).

A login with a delegation token (``tokenauth=true``) looks the token up in the image
(``delegation_token.TokenCredentials``), as Kafka's ``DelegationTokenCache``."""
from __future__ import annotations

import logging

from wire.messages import UserScramCredentialRecord
from wire.records import decode_metadata_record

from .delegation_token import TokenCredentials
from .scram import ScramCredential

log = logging.getLogger(__name__)


def bootstrap_credentials(framed_records):
    """A ``ScramImage`` of the UserScramCredentialRecords among ``framed_records``."""
    from kraft_server.controller.image.scram import ScramImage
    image = ScramImage()
    for value in framed_records:
        record = decode_metadata_record(value)
        if record.api_key == UserScramCredentialRecord.API_KEY:
            image.replay(record.message)
    return image


def scram_lookup(controller, bootstrap_records=()):
    """``lookup(mechanism, user) -> ScramCredential | None`` over ``controller.image``,
    or over ``bootstrap_records``' credentials while nothing is committed."""
    seed = bootstrap_credentials(bootstrap_records)
    if seed.users():
        log.info("SCRAM credentials from bootstrap.checkpoint serve until the log commits them: %s",
                 ", ".join(f"{user} ({mechanism})" for user, mechanism in seed.users()))

    tokens = TokenCredentials(controller.settings.tokens.secret, lambda: controller.image)

    def lookup(mechanism: str, user: str, token: bool = False):
        if token:  # a delegation token's id: (credential, owner, expiry) or None
            return tokens.lookup(mechanism, user)
        image = controller.image
        users = image.scram if image.has_metadata else seed
        return users.get(mechanism, user)
    return lookup
