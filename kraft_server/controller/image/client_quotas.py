"""Client quotas in the metadata image (Kafka's ``ClientQuotasImage``), replayed from
ClientQuotaRecord.

An entity is a set of (type, name) parts, type ``user``, ``client-id`` or ``ip``; a
null name is the type's default. The image maps each entity to its quota keys and
values; a record sets one key, or removes it (``Remove=true``), and an entity whose
last key goes is forgotten. Records list the entity's parts in the order Kafka's hash
map yields them (client-id before user), so their bytes equal Kafka's.
"""
from __future__ import annotations

from wire.messages import ClientQuotaRecord
from wire.messages.client_quota_record import EntityData

USER, CLIENT_ID, IP = "user", "client-id", "ip"
# The order of entity parts in Kafka's records (its HashMap's bucket order).
PART_ORDER = {CLIENT_ID: 0, USER: 1, IP: 2}

Entity = tuple  # ((type, name), ...) in PART_ORDER


def entity_of(parts) -> Entity:
    """The canonical entity of ``(type, name)`` pairs (a later pair of the same type
    wins, as the request's map in Kafka)."""
    named = {}
    for kind, name in parts:
        named[kind] = name
    return tuple(sorted(named.items(), key=lambda p: (PART_ORDER.get(p[0], 3), p[0])))


def describe(entity: Entity) -> str:
    """Kafka's ``ClientQuotaEntity.toString``."""
    inner = ", ".join(f"{k}={'null' if v is None else v}" for k, v in entity)
    return f"ClientQuotaEntity(entries={{{inner}}})"


class ClientQuotasImage:
    def __init__(self) -> None:
        self.entities: dict[Entity, dict[str, float]] = {}

    def replay(self, r: ClientQuotaRecord) -> None:
        entity = entity_of((e.entity_type, e.entity_name) for e in r.entity)
        quotas = self.entities.setdefault(entity, {})
        if r.remove:
            quotas.pop(r.key, None)
            if not quotas:
                del self.entities[entity]
        else:
            quotas[r.key] = r.value

    def snapshot_records(self) -> list[tuple[ClientQuotaRecord, int]]:
        return [(quota_record(entity, key, value), 0)
                for entity in sorted(self.entities, key=repr)
                for key, value in sorted(self.entities[entity].items())]

    def content(self) -> tuple:
        return tuple(sorted((repr(e), tuple(sorted(q.items()))) for e, q in self.entities.items()))


def quota_record(entity: Entity, key: str, value: float | None) -> ClientQuotaRecord:
    """Set ``key`` to ``value``, or remove it (``value`` None)."""
    return ClientQuotaRecord(entity=[EntityData(entity_type=t, entity_name=n) for t, n in entity],
                             key=key, value=0.0 if value is None else value, remove=value is None)
