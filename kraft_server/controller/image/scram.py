"""SCRAM credentials in the metadata image (Kafka's ``ScramImage``): one
``ScramCredential`` per (mechanism, user), set by UserScramCredentialRecord and
dropped by RemoveUserScramCredentialRecord; mechanisms by Kafka's ids
(1 SCRAM-SHA-256, 2 SCRAM-SHA-512). The SASL gate (``kraft_server/net/sasl_gate.py``)
looks users up here on every node, so a credential works as soon as it is committed
and replayed. Snapshots write them after the producer ids, as ``MetadataImage.write``.
"""
from __future__ import annotations

from kraft_server.security.scram import MECHANISM_IDS, ScramCredential
from wire.messages import UserScramCredentialRecord

_NAMES = {v: k for k, v in MECHANISM_IDS.items()}


class ScramImage:
    def __init__(self) -> None:
        self._users: dict[tuple[int, str], ScramCredential] = {}

    def replay(self, record) -> None:
        self._users[(record.mechanism, record.name)] = ScramCredential(
            bytes(record.salt), bytes(record.stored_key), bytes(record.server_key), record.iterations)

    def remove(self, record) -> None:
        self._users.pop((record.mechanism, record.name), None)

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        return self._users.get((MECHANISM_IDS.get(mechanism, -1), user))

    def users(self) -> list[tuple[str, str]]:
        """(user, mechanism name) pairs, sorted."""
        return sorted((name, _NAMES.get(m, str(m))) for m, name in self._users)

    def snapshot_records(self) -> list:
        return [(UserScramCredentialRecord(name=name, mechanism=m, salt=c.salt, stored_key=c.stored_key,
                                           server_key=c.server_key, iterations=c.iterations), 0)
                for (m, name), c in sorted(self._users.items())]

    def content(self) -> tuple:
        return tuple(sorted(self._users.items()))
