"""The ``kraft-storage`` command line (Kafka's ``kafka-storage`` flags).

Console script: ``kraft-storage = tools.storage.__main__:main``.
"""
from __future__ import annotations

import argparse
import sys

from kraft_server.config import ConfigError, KafkaConfig
from wire.uuids import random_uuid, uuid_to_str

from .formatter import FormatRequest, FormatterError, format_storage, storage_info
from .lookup import LookupRefused, feature_dependencies, version_mapping
from .scram_arg import ScramArgError, parse_add_scram


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kraft-storage", description="The Kafka storage tool.")
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="Get information about the Kafka log directories on this node.")
    info.add_argument("--config", "-c", required=True, help="The Kafka configuration file to use.")

    fmt = sub.add_parser("format", help="Format the Kafka log directories on this node.")
    fmt.add_argument("--config", "-c", required=True, help="The Kafka configuration file to use.")
    fmt.add_argument("--cluster-id", "-t", required=True, help="The cluster ID to use.")
    fmt.add_argument("--ignore-formatted", "-g", action="store_true",
                     help="When this option is passed, the format command will skip over already formatted directories rather than failing.")
    fmt.add_argument("--release-version", "-r", help="The release version to use for the initial feature settings.")
    fmt.add_argument("--feature", "-f", action="append", default=[],
                     help="The setting to use for a specific feature, in feature=level format. "
                          "For example: `kraft.version=1`.")
    group = fmt.add_mutually_exclusive_group()
    group.add_argument("--standalone", "-s", action="store_true",
                       help="Used to initialize a controller as a single-node dynamic quorum.")
    group.add_argument("--no-initial-controllers", "-N", action="store_true",
                       help="Used to initialize a server without a dynamic quorum topology.")
    group.add_argument("--initial-controllers", "-I",
                       help="Used to initialize a server with a specific dynamic quorum topology. The argument is a "
                            "comma-separated list of id@hostname:port:directory. The same values must be used to "
                            "format all nodes.")

    fmt.add_argument("--add-scram", "-S", action="append", default=[],
                     help="A SCRAM_CREDENTIAL to add to the __cluster_metadata log e.g. "
                          "'SCRAM-SHA-256=[name=alice,password=alice-secret]'")

    mapping = sub.add_parser("version-mapping", help="Look up the corresponding features for a given metadata "
                             "version. Using the command with no --release-version argument will return the "
                             "mapping for the latest stable metadata version")
    mapping.add_argument("--release-version", "-r",
                         help="The release version to use for the corresponding feature mapping.")
    deps = sub.add_parser("feature-dependencies", help="Look up dependencies for a given feature version. If the "
                          "feature is not known or the version not yet defined, an error is thrown. Multiple "
                          "features can be specified.")
    deps.add_argument("--feature", "-f", action="append", required=True,
                      help="The features and their versions to look up dependencies for, in feature=version "
                           "format. For example: `metadata.version=5`.")
    sub.add_parser("random-uuid", help="Print a random UUID.")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "random-uuid":
        print(uuid_to_str(random_uuid()))
        return 0
    if args.command in ("version-mapping", "feature-dependencies"):
        try:
            if args.command == "version-mapping":
                version_mapping(args.release_version)
            else:
                feature_dependencies(args.feature)
        except LookupRefused as exc:
            print(str(exc), file=sys.stderr)
            return 1
        return 0
    try:
        config = KafkaConfig.from_file(args.config)
    except FileNotFoundError:
        print(f"Error: config file {args.config} does not exist", file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(f"ConfigError: {exc}", file=sys.stderr)
        return 1
    if args.command == "info":
        lines, code = storage_info(config)
        print("\n".join(lines))
        return code
    request = FormatRequest(
        config=config,
        cluster_id=args.cluster_id,
        standalone=args.standalone,
        initial_controllers=args.initial_controllers,
        no_initial_controllers=args.no_initial_controllers,
        ignore_formatted=args.ignore_formatted,
        release_version=args.release_version,
        features=args.feature,
    )
    try:
        request.scram_records = [parse_add_scram(a) for a in args.add_scram]
    except ScramArgError as exc:
        print(f"Error while parsing SCRAM configuration: {exc}", file=sys.stderr)
        return 1
    try:
        format_storage(request)
    except FormatterError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
