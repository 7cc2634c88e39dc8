"""Kafka's ``Uuid`` text form and its random ids.

``Uuid.toString()`` is URL-safe base64 without padding (22 characters). Kafka's
``Uuid.randomUuid()`` redraws ids that would start with ``-`` (they look like
CLI flags) and the reserved ids; ``DirectoryId.random()`` also avoids the first
100 ids, which are reserved (``MIGRATING`` = zero, ``UNASSIGNED`` = 1, ``LOST`` = 2, as
Kafka's ``DirectoryId`` has them).
"""
from __future__ import annotations

import base64
import uuid

ZERO_UUID = uuid.UUID(int=0)  # Uuid.ZERO_UUID
# DirectoryId's reserved ids
MIGRATING_DIR, UNASSIGNED_DIR, LOST_DIR = ZERO_UUID, uuid.UUID(int=1), uuid.UUID(int=2)
METADATA_TOPIC_ID = uuid.UUID(int=1)  # Uuid.METADATA_TOPIC_ID, "AAAAAAAAAAAAAAAAAAAAAQ"
_RESERVED_BELOW = 100


def uuid_to_str(u: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")


def uuid_from_str(s: str) -> uuid.UUID:
    """Parse Kafka's 22-character form; ``ValueError`` if it is not one."""
    s = s.strip()
    if len(s) != 22:
        raise ValueError(f"Input string with prefix `{s[:22]}` is too long to be decoded as a base64 UUID"
                         if len(s) > 22 else f"Input string `{s}` decoded as {len(s) * 6 // 8} bytes, "
                         "which is not equal to the expected 16 bytes of a base64-encoded UUID")
    try:
        raw = base64.urlsafe_b64decode(s + "==")
    except Exception as exc:  # binascii.Error
        raise ValueError(f"Invalid UUID string {s!r}") from exc
    if len(raw) != 16:
        raise ValueError(f"Invalid UUID string {s!r}")
    return uuid.UUID(bytes=raw)


def random_uuid() -> uuid.UUID:
    """``Uuid.randomUuid()``: never reserved, never printed with a leading ``-``."""
    while True:
        u = uuid.uuid4()
        if u.int >= _RESERVED_BELOW and not uuid_to_str(u).startswith("-"):
            return u


def random_directory_id() -> uuid.UUID:
    return random_uuid()
