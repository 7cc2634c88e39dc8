"""The node's start-up check of its log directories (Kafka's
``MetaPropertiesEnsemble.verify`` as ``KafkaRaftServer`` runs it).

The node refuses to start when a directory is missing or unformatted (and says
how to format it), when directories disagree on the cluster id, when a directory
belongs to another cluster than expected, or to another node id. A formatted
directory without a ``directory.id`` gets one, as Kafka does on start-up.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kraft_server.config import KafkaConfig

from .meta_properties import META_PROPERTIES, MetaProperties, read_meta_properties, write_meta_properties
from wire.uuids import random_directory_id

FORMAT_HINT = "kraft-storage format -t $(kraft-storage random-uuid) -c server.properties --standalone"


class StorageError(RuntimeError):
    """The log directories are not usable by this node: a one-line message and the file
    or directory at fault (``path``, when known), printed by the entry point."""

    def __init__(self, message: str, path: Path | str | None = None):
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class StorageInfo:
    cluster_id: str
    node_id: int
    metadata_log_dir: Path
    directory_id: object  # uuid.UUID of the metadata log dir
    dirs: dict[Path, MetaProperties]


def all_log_dirs(config: KafkaConfig) -> list[Path]:
    """``log.dirs`` (or ``log.dir``) plus ``metadata.log.dir``, without duplicates."""
    dirs: list[Path] = []
    for d in (*config.log_dirs, config.metadata_log_dir):
        if d not in dirs:
            dirs.append(d)
    return dirs


def check_storage(config: KafkaConfig, expected_cluster_id: str | None = None) -> StorageInfo:
    found: dict[Path, MetaProperties] = {}
    for d in all_log_dirs(config):
        if not d.is_dir():
            raise StorageError(
                f"No `{META_PROPERTIES}` found in {d} (the directory does not exist; "
                f"have you run `{FORMAT_HINT}` to format the directory?)"
            )
        meta = read_meta_properties(d)
        if meta is None:
            raise StorageError(
                f"No `{META_PROPERTIES}` found in {d} (have you run `{FORMAT_HINT}` to format the directory?)"
            )
        found[d] = meta
    cluster_id = expected_cluster_id
    for d, meta in found.items():
        path = d / META_PROPERTIES
        if meta.version != 1:
            raise StorageError(f"Found unexpected version in {path}. ZK-based brokers that are not migrating only support version 0 (which is implicit when the `version` field is missing).")
        if cluster_id is None:
            cluster_id = meta.cluster_id
        elif meta.cluster_id != cluster_id:
            raise StorageError(f"Invalid cluster.id in: {path}. Expected {cluster_id}, but read {meta.cluster_id}")
        if meta.node_id != config.node_id:
            raise StorageError(
                f"Stored node id {meta.node_id} doesn't match previous node id {config.node_id} in {path}. "
                "If you moved your data, make sure your configured node id matches. If you intend to create "
                "a new node, you should remove all data in your data directories."
            )
    seen: dict[object, Path] = {}
    for d, meta in list(found.items()):
        if meta.directory_id is None:
            meta = replace(meta, directory_id=random_directory_id())
            write_meta_properties(d, meta)
            found[d] = meta
        if meta.directory_id in seen:
            raise StorageError(f"Duplicate directory ID {meta.directory_id} found in {seen[meta.directory_id]} and {d}")
        seen[meta.directory_id] = d
    meta_dir = config.metadata_log_dir
    return StorageInfo(
        cluster_id=cluster_id or "",
        node_id=config.node_id,
        metadata_log_dir=meta_dir,
        directory_id=found[meta_dir].directory_id,
        dirs=found,
    )
