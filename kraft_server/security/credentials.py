"""SCRAM credentials as the server looks them up: from the committed metadata image
(UserScramCredentialRecord replayed by ``kraft_server/controller``), by mechanism
and user name, on every node, leader or not (Kafka's ``CredentialCache`` fed by
``ScramPublisher``)."""
from __future__ import annotations

from .scram import ScramCredential


def scram_lookup(controller):
    """``lookup(mechanism, user) -> ScramCredential | None`` over ``controller.image``."""
    def lookup(mechanism: str, user: str) -> ScramCredential | None:
        users = getattr(controller.image, "scram", None)
        return users.get(mechanism, user) if users is not None else None
    return lookup
