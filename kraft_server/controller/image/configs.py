"""The configs in the metadata image, per resource (Kafka's ``ConfigurationsImage``),
replayed from ConfigRecord: a null value deletes the key, a name the resource type does
not define is skipped (as Kafka 4.3.1 does), and a topic's configs go with its
RemoveTopicRecord. Keyed ``(resource type, resource name, config name)``, the
shape the rest of the controller reads (``image.configs.get((2, topic, name))``), with
an index by resource so one resource's configs cost a lookup, not a scan."""
from __future__ import annotations

import logging

from . import records as rec
from ..configs.definitions import CLIENT_METRICS, CLIENT_METRICS_DEFS, GROUP, GROUP_DEFS, TOPIC, TOPIC_DEFS

log = logging.getLogger(__name__)

# DefaultSupportedConfigChecker: a record of a name these types do not define (say one
# an older Kafka wrote) is skipped at replay; every broker config name is kept.
SUPPORTED = {TOPIC: TOPIC_DEFS, CLIENT_METRICS: CLIENT_METRICS_DEFS, GROUP: GROUP_DEFS}


class ConfigsImage(dict):
    def __init__(self) -> None:
        super().__init__()
        self.by_resource: dict[tuple[int, str], dict[str, str]] = {}

    def replay(self, r) -> None:
        known = SUPPORTED.get(r.resource_type)
        if known is not None and r.name not in known:
            log.info("Skipping unsupported config %s for resource %s %s during replay", r.name,
                     r.resource_type, r.resource_name)
            return
        key = (r.resource_type, r.resource_name, r.name)
        resource = (r.resource_type, r.resource_name)
        if r.value is None:
            self.pop(key, None)
            values = self.by_resource.get(resource)
            if values is not None:
                values.pop(r.name, None)
                if not values:
                    del self.by_resource[resource]
        else:
            self[key] = r.value
            self.by_resource.setdefault(resource, {})[r.name] = r.value

    def drop_topic(self, name: str) -> None:
        for key in self.by_resource.pop((rec.TOPIC_RESOURCE, name), {}):
            self.pop((rec.TOPIC_RESOURCE, name, key), None)

    def resource(self, resource_type: int, name: str) -> dict[str, str]:
        """One resource's configs, ``{name: value}`` (a copy)."""
        return dict(self.by_resource.get((resource_type, name), ()))

    def snapshot_records(self) -> list[bytes]:
        return [rec.config(t, r, n, v) for (t, r, n), v in sorted(self.items())]
