"""``kraft-storage format``: what Kafka's ``Formatter`` writes, step by step.

0. Feature levels (refused before any directory is read): ``--release-version``,
   the ``--feature`` values, the quorum mode (step 2), then metadata.version from
   ``--release-version`` or ``--feature metadata.version`` (not both), every other
   feature at its ``--feature`` level or the release's default, each level known
   and its dependencies met. Kafka leaves some refusals uncaught (a stack trace,
   exit 1): we print the trace's first line (``uncaught``).
1. Read every log dir (``log.dirs`` + ``metadata.log.dir``): formatted ones must
   agree with ``--cluster-id`` and ``node.id`` (else an error, even with
   ``--ignore-formatted``); any formatted dir is an error unless
   ``--ignore-formatted``; all formatted with it is a success that does nothing.
2. Choose the quorum mode: ``controller.quorum.voters`` set → static (kraft.version
   0; ``--standalone``/``--initial-controllers`` rejected); otherwise a controller
   needs exactly one of ``--standalone``, ``--initial-controllers``,
   ``--no-initial-controllers``.
3. Each unformatted dir gets ``meta.properties`` (its own ``directory.id``; the
   metadata dir takes the id from this node's initial-controller entry) and
   ``bootstrap.checkpoint``; the metadata dir also gets the bootstrap snapshot
   ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`` when there
   are initial voters.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kraft_server.config import KafkaConfig
from wire.records import encode_metadata_record
from kraft_server.common import features as feature_levels
from kraft_server.common import metadata_version
from kraft_server.log.bootstrap import (
    DynamicVoter,
    DynamicVoterError,
    parse_dynamic_voters,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
)
from kraft_server.log.file_log import METADATA_PARTITION_DIR
from kraft_server.log.meta_properties import META_PROPERTIES, MetaProperties, read_meta_properties, write_meta_properties
from kraft_server.log.startup import all_log_dirs
from wire.uuids import random_directory_id

from .feature_arg import FeatureArgError, parse_format_features


class FormatterError(RuntimeError):
    """A refusal with Kafka's message; the CLI prints it and exits 1."""


def uncaught(java_class: str, message: str) -> FormatterError:
    """What Kafka's tool does not catch: it exits 1 after a stack trace whose first
    line we print (``Exception in thread "main" java.lang.<class>: <message>``)."""
    return FormatterError(f'Exception in thread "main" java.lang.{java_class}: {message}')


@dataclass
class FormatRequest:
    config: KafkaConfig
    cluster_id: str
    standalone: bool = False
    initial_controllers: str | None = None
    no_initial_controllers: bool = False
    ignore_formatted: bool = False
    release_version: str | None = None
    features: list[str] = field(default_factory=list)  # --feature values, "name=level"
    now_ms: int | None = None
    printer: Callable[[str], None] = print
    scram_records: list = field(default_factory=list)  # --add-scram (scram_arg.py)


@dataclass
class FormatResult:
    formatted: list[Path] = field(default_factory=list)
    directory_ids: dict[Path, uuid.UUID] = field(default_factory=dict)
    voters: list[DynamicVoter] | None = None


def _standalone_voter(config: KafkaConfig) -> DynamicVoter:
    if not config.controller_listener_names:
        raise FormatterError("No controller listener names were configured.")
    name = config.controller_listener_names[0]
    by_name = {e.name: e for e in config.effective_advertised_listeners()}
    endpoint = by_name.get(name)
    if endpoint is None:
        raise FormatterError(f"Cannot find the controller listener {name} in listeners or advertised.listeners.")
    return DynamicVoter(config.node_id, endpoint.host or "localhost", endpoint.port, random_directory_id())


def _initial_voters(req: FormatRequest) -> list[DynamicVoter] | None:
    config = req.config
    flags = [req.standalone, req.initial_controllers is not None, req.no_initial_controllers]
    if sum(flags) > 1:
        raise FormatterError("Only one of --standalone, --initial-controllers, or --no-initial-controllers can be specified.")
    if config.is_static_quorum:
        if req.standalone or req.initial_controllers is not None:
            raise FormatterError(
                "You cannot specify controller.quorum.voters and format the node with --initial-controllers or "
                "--standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and "
                "specify controller.quorum.bootstrap.servers instead."
            )
        return None
    if req.standalone:
        if not config.is_controller:
            raise FormatterError("You can only use --standalone on a controller.")
        return [_standalone_voter(config)]
    if req.initial_controllers is not None:
        if not config.is_controller:
            raise FormatterError("You can only use --initial-controllers on a controller.")
        try:
            return parse_dynamic_voters(req.initial_controllers)
        except DynamicVoterError as exc:
            raise FormatterError(str(exc)) from None
    if req.no_initial_controllers:
        return None
    if config.is_controller:
        raise FormatterError(
            "Because controller.quorum.voters is not set on this controller, you must specify one of the "
            "following: --standalone, --initial-controllers, or --no-initial-controllers."
        )
    return None


def _release_level(req: FormatRequest) -> int | None:
    """``--release-version`` (Kafka's ``MetadataVersion.fromVersionString``: a release such
    as ``4.0`` or ``4.0.1``, or a level name such as ``3.9-IV0``), read before anything else."""
    if req.release_version is None:
        return None
    try:
        return metadata_version.from_version_string(req.release_version)
    except ValueError as exc:
        raise FormatterError(str(exc)) from None


def _metadata_level(given: dict[str, int], release: int | None) -> int:
    """``Formatter.calculateEffectiveReleaseVersion``: ``--feature metadata.version=N`` or
    ``--release-version`` (not both), else the latest production level."""
    mv_name = feature_levels.METADATA_VERSION
    if mv_name not in given:
        return metadata_version.LATEST_PRODUCTION if release is None else release
    if release is not None:
        raise FormatterError(f"Use --release-version instead of --feature {mv_name}=X to avoid ambiguity.")
    level = given[mv_name]
    if level not in metadata_version.NAMES:
        raise uncaught("IllegalArgumentException",
                       f"No MetadataVersion with feature level {level}. Valid feature levels are from "
                       f"{metadata_version.MINIMUM} to {metadata_version.LATEST_TESTING}.")
    if not metadata_version.is_production(level):
        raise FormatterError(f"{mv_name} {metadata_version.name(level)} is not yet stable.")
    return level


def _kraft_level(given: int | None, dynamic: bool) -> int:
    """kraft.version: 1 for a dynamic quorum (no controller.quorum.voters and one of the
    three quorum flags), else 0; ``--feature kraft.version`` may only say the same."""
    if given is None:
        return 1 if dynamic else 0
    flags = "--standalone, --initial-controllers, or --no-initial-controllers"
    if given == 0 and dynamic:
        raise FormatterError(
            f"Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags {flags} "
            "is used. For dynamic controllers support, try removing the --feature flag for kraft.version.")
    if given != 0 and not dynamic:
        raise FormatterError(
            f"Cannot set kraft.version to {given} unless controller.quorum.voters is empty and one of the flags "
            f"{flags} is used. For dynamic controllers support, try using one of {flags} and removing "
            "controller.quorum.voters.")
    return given


def _features(req: FormatRequest, release: int | None, given: dict[str, int]) -> tuple[str, dict[str, int]]:
    """``Formatter.calculateEffectiveFeatureLevels``: the metadata.version, then each
    feature at its ``--feature`` level or the release's default, checked against the
    levels we know and their dependencies (in name order, as Kafka checks them)."""
    level = _metadata_level(given, release)
    supported = sorted(feature_levels.VERSIONS)
    for name in sorted(given):
        if name != feature_levels.METADATA_VERSION and name not in feature_levels.VERSIONS:
            raise FormatterError(f"Unsupported feature: {name}. Supported features are: {', '.join(supported)}")
    chosen = {feature_levels.METADATA_VERSION: level}
    for name in feature_levels.VERSIONS:
        if name == feature_levels.KRAFT_VERSION:
            chosen[name] = _kraft_level(given.get(name), _is_dynamic(req))
        else:
            chosen[name] = given.get(name, feature_levels.default_level(name, level))
    for name in supported:
        lvl = chosen[name]
        if not feature_levels.has_level(name, lvl):
            raise uncaught("IllegalArgumentException", f"No feature:{name} with feature level {lvl}")
        for dep, needed in feature_levels.dependencies(name, lvl).items():
            if chosen.get(dep, 0) < needed:
                raise uncaught("IllegalArgumentException",
                               f"{name} could not be set to {lvl} because it depends on {dep} level {needed}")
    if req.scram_records and level < metadata_version.SCRAM:
        raise FormatterError(f"SCRAM is only supported in metadata.version "
                             f"{metadata_version.name(metadata_version.SCRAM)} or later.")
    return metadata_version.name(level), chosen


def _is_dynamic(req: FormatRequest) -> bool:
    return not req.config.is_static_quorum and (
        req.standalone or req.initial_controllers is not None or req.no_initial_controllers)


def _bootstrap_description(features: dict[str, int]) -> str:
    ordered = [("metadata.version", features["metadata.version"])] + sorted(
        (n, lvl) for n, lvl in features.items() if n not in ("metadata.version", "kraft.version") and lvl > 0)
    records = ", ".join(
        f"ApiMessageAndVersion(FeatureLevelRecord(name='{n}', featureLevel={lvl}) at version 0)" for n, lvl in ordered
    )
    return (f"Bootstrap metadata: BootstrapMetadata(records=[{records}], "
            f"metadataVersionLevel={features['metadata.version']}, source=format command)")


def format_storage(req: FormatRequest) -> FormatResult:
    config = req.config
    if not req.cluster_id:
        raise FormatterError("You must specify a cluster ID.")
    release = _release_level(req)
    try:
        given = parse_format_features(req.features)
    except FeatureArgError as exc:
        raise uncaught("RuntimeException", str(exc)) from None
    voters = _initial_voters(req)
    mv_name, features = _features(req, release, given)
    dirs = all_log_dirs(config)
    # 1. What is there already; formatted dirs must belong to this cluster and node.
    unformatted: list[Path] = []
    for d in dirs:
        meta = read_meta_properties(d) if d.is_dir() else None
        if meta is None:
            unformatted.append(d)
            continue
        path = d / META_PROPERTIES
        if meta.cluster_id != req.cluster_id:
            raise FormatterError(f"Invalid cluster.id in: {path}. Expected {req.cluster_id}, but read {meta.cluster_id}")
        if meta.node_id != config.node_id:
            raise FormatterError(
                f"Stored node id {meta.node_id} doesn't match previous node id {config.node_id} in {path}. "
                "If you moved your data, make sure your configured node id matches. If you intend to create "
                "a new node, you should remove all data in your data directories."
            )
    result = FormatResult(voters=voters)
    if not unformatted:
        if req.ignore_formatted:
            req.printer("All of the log directories are already formatted.")
            return result
    if len(unformatted) < len(dirs) and not req.ignore_formatted:
        first = next(d for d in dirs if d not in unformatted)
        raise FormatterError(
            f"Log directory {first} is already formatted. Use --ignore-formatted to ignore this directory "
            "and format the others."
        )
    # 2. The metadata dir's directory id comes from this node's voter entry, if any.
    own = next((v for v in voters or [] if v.node_id == config.node_id), None)
    req.printer(_bootstrap_description(features))
    for d in unformatted:
        is_metadata_dir = d == config.metadata_log_dir
        directory_id = own.directory_id if (is_metadata_dir and own is not None) else random_directory_id()
        d.mkdir(parents=True, exist_ok=True)
        if is_metadata_dir and voters:
            listener = config.controller_listener_names[0]
            write_bootstrap_snapshot(d / METADATA_PARTITION_DIR, voters, listener, req.now_ms)
            kind = "dynamic metadata voter"
        else:
            kind = "metadata" if is_metadata_dir else "data"
        req.printer(f"Formatting {kind} directory {d} with metadata.version {mv_name}.")
        write_bootstrap_checkpoint(d, features, req.now_ms, extra=[
            encode_metadata_record(r, 0) for r in req.scram_records])
        # meta.properties last: a crash mid-format leaves the dir "unformatted".
        write_meta_properties(d, MetaProperties(cluster_id=req.cluster_id, node_id=config.node_id,
                                                directory_id=directory_id))
        result.formatted.append(d)
        result.directory_ids[d] = directory_id
    return result


# ---------------------------------------------------------------------------------
# info
# ---------------------------------------------------------------------------------


def storage_info(config: KafkaConfig) -> tuple[list[str], int]:
    """Kafka's ``kafka-storage info`` lines and exit code."""
    found: list[Path] = []
    problems: list[str] = []
    metas: dict[Path, MetaProperties] = {}
    for d in sorted(all_log_dirs(config)):
        if not d.is_dir():
            problems.append(f"{d} does not exist" if not d.exists() else f"{d} is not a directory")
            continue
        found.append(d)
        try:
            meta = read_meta_properties(d)
        except ValueError as exc:
            problems.append(f"Error loading {d / META_PROPERTIES}: {exc}")
            continue
        if meta is None:
            problems.append(f"{d} is not formatted.")
        else:
            metas[d] = meta
    lines: list[str] = []
    if found:
        lines.append("Found log director" + ("ies:" if len(found) > 1 else "y:"))
        lines += [f"  {d}" for d in found]
        lines.append("")
    if metas:
        first = metas[min(metas)]
        props = first.to_props()
        lines.append("Found metadata: {" + ", ".join(f"{k}={props[k]}" for k in sorted(props)) + "}")
        lines.append("")
        if len({(m.cluster_id, m.node_id) for m in metas.values()}) > 1:
            problems.append("Metadata for the log directories differs; see the meta.properties files.")
    if problems:
        lines.append("Found problem" + ("s:" if len(problems) > 1 else ":"))
        lines += [f"  {p}" for p in problems]
        lines.append("")
    return lines, 1 if problems else 0
