"""The node's start-up check of its log directories (Kafka's
``KafkaRaftServer.initializeLogDirs`` and ``MetaPropertiesEnsemble.verify``).

The metadata log directory must be readable and formatted for this node id. Every
other log directory that can be read must be formatted too, for the same cluster
and node, with a distinct ``directory.id``; one that cannot be read is left out,
as Kafka treats it as a failed directory. A formatted directory without a
``directory.id`` gets one, as Kafka does on start-up. A refusal is a
``StorageError`` that says what to do (the entry point prints it).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kraft_server.config import KafkaConfig

from .meta_properties import META_PROPERTIES, MetaProperties, read_meta_properties, write_meta_properties
from wire.uuids import random_directory_id


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


def format_hint(config_path: str | Path | None) -> str:
    cfg = config_path or "<server.properties>"
    return (f"format it first: kraft-storage format --cluster-id $(kraft-storage random-uuid) --standalone "
            f"--config {cfg} (Kafka's kafka-storage.sh format does too; `make run` does it for ./data)")


def check_storage(config: KafkaConfig, config_path: str | Path | None = None) -> StorageInfo:
    """The formatted log directories, a missing ``directory.id`` written, or ``StorageError``."""
    meta_dir = Path(config.metadata_log_dir)
    found = {meta_dir: _read_metadata_dir(meta_dir)}
    for d in all_log_dirs(config):
        d = Path(d)
        if d == meta_dir:
            continue
        try:
            found[d] = read_meta_properties(d)
        except (ValueError, OSError):
            continue  # a failed directory: only the metadata log directory must be readable
    cluster_id = found[meta_dir].cluster_id if found[meta_dir] is not None else None
    for d, meta in found.items():
        path = d / META_PROPERTIES
        if meta is None:
            raise StorageError("No `meta.properties` found (is the metadata.log.dir formatted?); "
                               + format_hint(config_path), d)
        if meta.version != 1:
            raise StorageError("Found unexpected version: ZK-based brokers that are not migrating only support "
                               "version 0 (which is implicit when the `version` field is missing).", path)
        if meta.cluster_id != cluster_id:
            raise StorageError(f"Invalid cluster.id: expected {cluster_id} (as in {meta_dir}), "
                               f"but read {meta.cluster_id}", path)
        if meta.node_id != config.node_id:
            raise StorageError(
                f"Stored node id {meta.node_id} doesn't match previous node id {config.node_id}. If you moved "
                "your data, make sure your configured node id matches. If you intend to create a new node, "
                "you should remove all data in your data directories.", path)
    seen: dict[object, Path] = {}
    for d, meta in list(found.items()):
        if meta.directory_id is None:
            meta = replace(meta, directory_id=random_directory_id())
            write_meta_properties(d, meta)
            found[d] = meta
        if meta.directory_id in seen:
            raise StorageError(f"Duplicate directory ID {meta.directory_id} found in {seen[meta.directory_id]} "
                               f"and {d}", d / META_PROPERTIES)
        seen[meta.directory_id] = d
    return StorageInfo(cluster_id=cluster_id, node_id=config.node_id, metadata_log_dir=meta_dir,
                       directory_id=found[meta_dir].directory_id, dirs=found)


def _read_metadata_dir(directory: Path) -> MetaProperties | None:
    path = directory / META_PROPERTIES
    try:
        return read_meta_properties(directory)
    except ValueError as exc:
        raise StorageError(f"meta.properties is unreadable: {exc}", path) from None
    except OSError as exc:  # not a directory, no permission, ...
        raise StorageError(f"Cannot read meta.properties: {exc.strerror or exc}", exc.filename or path) from None
