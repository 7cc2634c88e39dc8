"""``meta.properties``: which cluster, node and directory a log dir belongs to.

Kafka's ``MetaProperties`` (version 1, KRaft): keys ``version``, ``cluster.id``,
``node.id``, ``directory.id``; version 0 (ZooKeeper era) used ``broker.id`` and is
read but never written. The file is Java ``Properties.store(writer, "")`` output:
a ``#`` line (the empty comment), a ``#<Date.toString()>`` line, then
``key=value`` lines in Java's hash-table order, which for these four keys is
``node.id, directory.id, version, cluster.id``. Written via ``.tmp``, fsync and an
atomic rename (``PropertiesUtils.writePropertiesFile``).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from kraft_server.java_properties import parse_properties, render_properties

from .files import atomic_write
from wire.uuids import uuid_from_str, uuid_to_str

META_PROPERTIES = "meta.properties"
_KEY_ORDER = ("node.id", "directory.id", "version", "cluster.id")


class MetaPropertiesError(ValueError):
    pass


@dataclass(frozen=True)
class MetaProperties:
    cluster_id: str
    node_id: int
    directory_id: uuid.UUID | None = None
    version: int = 1

    def to_props(self) -> dict[str, str]:
        props = {"version": str(self.version), "cluster.id": self.cluster_id}
        if self.version == 0:
            props["broker.id"] = str(self.node_id)
        else:
            props["node.id"] = str(self.node_id)
        if self.directory_id is not None:
            props["directory.id"] = uuid_to_str(self.directory_id)
        return props

    @classmethod
    def from_props(cls, props: dict[str, str], where: str = "meta.properties") -> "MetaProperties":
        try:
            version = int(props.get("version", "0"))
        except ValueError:
            raise MetaPropertiesError(f"Invalid version in {where}") from None
        if version not in (0, 1):
            raise MetaPropertiesError(f"Unknown meta.properties version {version} in {where}")
        cluster_id = props.get("cluster.id")
        if not cluster_id:
            raise MetaPropertiesError(f"cluster.id was not found in {where}")
        key = "node.id" if version == 1 else "broker.id"
        if key not in props:
            raise MetaPropertiesError(f"{key} was not found in {where}")
        try:
            node_id = int(props[key])
        except ValueError:
            raise MetaPropertiesError(f"Invalid {key} in {where}") from None
        directory_id = None
        if "directory.id" in props:
            try:
                directory_id = uuid_from_str(props["directory.id"])
            except ValueError:
                raise MetaPropertiesError(f"Unable to read directory.id as a uuid in {where}") from None
        return cls(cluster_id=cluster_id, node_id=node_id, directory_id=directory_id, version=version)


def render(props: dict[str, str], now: float | None = None) -> str:
    """Java ``Properties.store(w, "")`` text for ``props`` in Kafka's key order."""
    keys = [k for k in _KEY_ORDER if k in props] + sorted(k for k in props if k not in _KEY_ORDER)
    return render_properties([(k, props[k]) for k in keys], "", now)


def write_meta_properties(directory: str | Path, meta: MetaProperties) -> Path:
    path = Path(directory) / META_PROPERTIES
    atomic_write(path, render(meta.to_props()).encode("utf-8"))
    return path


def read_meta_properties(directory: str | Path) -> MetaProperties | None:
    """The directory's meta.properties, or None if it has none."""
    path = Path(directory) / META_PROPERTIES
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    return MetaProperties.from_props(parse_properties(text), str(path))
