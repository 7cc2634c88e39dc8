"""The configs in the metadata image, per resource (Kafka's ``ConfigurationsImage``),
replayed from ConfigRecord: a null value deletes the key, and a topic's configs go
with its RemoveTopicRecord. Keyed ``(resource type, resource name, config name)``, the
shape the rest of the controller reads (``image.configs.get((2, topic, name))``)."""
from __future__ import annotations

from .. import records as rec


class ConfigsImage(dict):
    def replay(self, r) -> None:
        key = (r.resource_type, r.resource_name, r.name)
        if r.value is None:
            self.pop(key, None)
        else:
            self[key] = r.value

    def drop_topic(self, name: str) -> None:
        for key in [k for k in self if k[0] == rec.TOPIC_RESOURCE and k[1] == name]:
            del self[key]

    def resource(self, resource_type: int, name: str) -> dict[str, str]:
        """One resource's configs, ``{name: value}``."""
        return {k[2]: v for k, v in self.items() if k[0] == resource_type and k[1] == name}

    def snapshot_records(self) -> list[bytes]:
        return [rec.config(t, r, n, v) for (t, r, n), v in sorted(self.items())]
