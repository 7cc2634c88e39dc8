"""ACLs in the metadata image (Kafka's ``AclsImage``): one ``Acl`` per id, set by
AccessControlEntryRecord and dropped by RemoveAccessControlEntryRecord. The
authorizer (``kraft_server/security/authorizer.py``) reads ``index()`` on every node,
so an ACL applies as soon as it is committed and replayed. Snapshots write the ACLs
after the producer ids and before the SCRAM credentials, as ``MetadataImage.write``
orders them.
"""
from __future__ import annotations

import logging
import uuid

from kraft_server.security.acls import Acl
from kraft_server.security.authorizer import AclIndex
from wire.messages import AccessControlEntryRecord

log = logging.getLogger(__name__)


class AclsImage:
    def __init__(self) -> None:
        self._acls: dict[uuid.UUID, Acl] = {}
        self._index: AclIndex | None = None  # rebuilt on the first check after a change

    def replay(self, record) -> None:
        acl = Acl(record.resource_type, record.resource_name, record.pattern_type, record.principal,
                  record.host, record.operation, record.permission_type)
        self._acls[record.id] = acl
        self._index = None
        log.info("Replayed AccessControlEntryRecord for %s, setting %s", record.id, acl)

    def remove(self, record) -> None:
        acl = self._acls.pop(record.id, None)
        self._index = None
        if acl is None:  # Kafka's replay throws here; committed data must not stop us
            log.warning("RemoveAccessControlEntryRecord for %s: no ACL with that id", record.id)

    def items(self) -> list[tuple[uuid.UUID, Acl]]:
        return list(self._acls.items())

    def __contains__(self, acl: Acl) -> bool:
        return acl in self._acls.values()

    def acls(self) -> set[Acl]:
        return set(self._acls.values())

    def index(self) -> AclIndex:
        if self._index is None:
            self._index = AclIndex(self._acls.values())
        return self._index

    def snapshot_records(self) -> list:
        return [(AccessControlEntryRecord(
            id=i, resource_type=a.resource_type, resource_name=a.name, pattern_type=a.pattern_type,
            principal=a.principal, host=a.host, operation=a.operation, permission_type=a.permission), 0)
            for i, a in sorted(self._acls.items())]

    def content(self) -> tuple:
        return tuple(sorted(self._acls.items()))
