"""Delegation tokens in the metadata image (Kafka's ``DelegationTokenImage``): one
DelegationTokenRecord per token id, replaced by a newer one (a renewal or a changed
expiry) and dropped by RemoveDelegationTokenRecord. Snapshots write them last, after
the SCRAM credentials, as ``MetadataImage.write``.

The records carry no HMAC: every node that has ``delegation.token.secret.key`` derives
it from the token id (``kraft_server/security/delegation_token.py``), as Kafka's
``DelegationTokenPublisher`` fills its ``DelegationTokenCache``.
"""
from __future__ import annotations

from wire.messages import DelegationTokenRecord


class DelegationTokensImage:
    def __init__(self) -> None:
        self._tokens: dict[str, DelegationTokenRecord] = {}

    def replay(self, record: DelegationTokenRecord) -> None:
        self._tokens[record.token_id] = record

    def remove(self, record) -> None:
        self._tokens.pop(record.token_id, None)

    def get(self, token_id: str) -> DelegationTokenRecord | None:
        return self._tokens.get(token_id)

    def tokens(self) -> list[DelegationTokenRecord]:
        """Every token, by token id."""
        return [self._tokens[t] for t in sorted(self._tokens)]

    def __len__(self) -> int:
        return len(self._tokens)

    def snapshot_records(self) -> list:
        return [(r, 0) for r in self.tokens()]

    def content(self) -> tuple:
        return tuple((t, r.encode(0)) for t, r in sorted(self._tokens.items()))
