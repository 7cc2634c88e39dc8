"""The ``kraft-metadata-quorum`` command line: Kafka's ``kafka-metadata-quorum``
(flags, output, exit codes) plus ``reassign`` (KIP-642).

Console script: ``kraft-metadata-quorum = tools.metadata_quorum.__main__:main``.
Exit codes as Kafka's tool: 0 on success (and for ``--help``), 1 for bad flags,
a bad config file or any error the cluster returned. ``reassign`` also exits
130 when interrupted (rerun it to resume).
"""
from __future__ import annotations

import argparse
import sys

from wire.uuids import uuid_from_str, uuid_to_str

from . import controller_config as cc
from .client import AdminClient
from .describe import replication_text, status_text
from .errors import KafkaApiError, TerseError
from .reachability import log_to_stderr
from .reassign import Reassigner, parse_voter_endpoint, parse_voters

PROG = "kraft-metadata-quorum"


class _Parser(argparse.ArgumentParser):
    """argparse with argparse4j's exit code for usage errors (1, not 2)."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="This tool describes kraft metadata quorum status.")
    conn = parser.add_mutually_exclusive_group(required=True)
    conn.add_argument("--bootstrap-server",
                      help="A comma-separated list of host:port pairs to use for establishing the "
                           "connection to the Kafka cluster.")
    conn.add_argument("--bootstrap-controller",
                      help="A comma-separated list of host:port pairs to use for establishing the "
                           "connection to the Kafka controllers.")
    parser.add_argument("--command-config",
                        help="Property file containing configs to be passed to Admin Client. For "
                             "add-controller, the file is used to specify the controller properties as well.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    describe = sub.add_parser("describe", help="Describe the metadata quorum info")
    status = describe.add_argument_group("Status")
    status.add_argument("--status", action="store_true",
                        help="A short summary of the quorum status and the other provides detailed "
                             "information about the status of replication.")
    replication = describe.add_argument_group("Replication")
    replication.add_argument("--replication", action="store_true",
                             help="Detailed information about the status of replication")
    replication.add_argument("--human-readable", action="store_true", help="Human-readable output")

    add = sub.add_parser("add-controller", help="Add a controller to the KRaft controller cluster")
    add.add_argument("--dry-run", action="store_true",
                     help="True if we should print what would be done, but not do it.")

    remove = sub.add_parser("remove-controller", help="Remove a controller from the KRaft controller cluster")
    remove.add_argument("--controller-id", "-i", type=int, required=True,
                        help="The id of the controller to remove.")
    remove.add_argument("--controller-directory-id", "-d", required=True,
                        help="The directory ID of the controller to remove.")
    remove.add_argument("--dry-run", action="store_true",
                        help="True if we should print what would be done, but not do it.")

    reassign = sub.add_parser(
        "reassign", help="Change the voters to the given set, one controller at a time (KIP-642)")
    reassign.add_argument("--voters", required=True,
                          help="The target voter ids, comma-separated. New voters must be caught-up observers.")
    reassign.add_argument("--voter-endpoint", action="append", default=[], metavar="ID@NAME://HOST:PORT",
                          help="The controller endpoint of a joining voter (repeatable); by default it "
                               "comes from DescribeCluster.")
    reassign.add_argument("--max-lag-ms", type=int, default=10000,
                          help="A joining observer must have caught up within this many ms of the leader.")
    reassign.add_argument("--step-timeout-ms", type=int, default=120000,
                          help="How long one step may take to commit.")
    reassign.add_argument("--broker-bootstrap-server", metavar="HOST:PORT[,...]",
                          help="Brokers of the cluster: each one's controller.quorum.bootstrap.servers is read, "
                               "and a move after which a broker names none of the staying voters is refused.")
    reassign.add_argument("--follow-timeout-ms", type=int, default=30000,
                          help="After the last step, how long the brokers and other observers that followed "
                               "the old leader may take to fetch from the new one.")
    reassign.add_argument("--dry-run", action="store_true",
                          help="Print the steps that would be taken, but do not take them.")
    reassign.add_argument("--force", action="store_true",
                          help="Go ahead even if the new voter set survives fewer voter failures than the "
                               "current one, or has fewer than 3 voters where there were 3 or more, or a "
                               "broker names none of the staying voters in its bootstrap servers.")
    return parser


def _describe(admin: AdminClient, args) -> None:
    if args.status and args.replication:
        raise TerseError("Only one of --status or --replication should be specified with describe sub-command")
    if args.replication:
        print(replication_text(admin.describe_quorum(), args.human_readable))
    elif args.status:
        if args.human_readable:
            raise TerseError("The option --human-readable is only supported along with --replication")
        cluster_id = admin.describe_cluster().cluster_id
        print(status_text(cluster_id, admin.describe_quorum()))
    else:
        raise TerseError("One of --status or --replication must be specified with describe sub-command")


def _add_controller(admin: AdminClient, args, props: dict[str, str]) -> None:
    if args.command_config is None:
        raise TerseError("You must supply the configuration file of the controller you are adding "
                         "when using add-controller.")
    node_id = cc.controller_id(props)
    directory_id = cc.metadata_directory_id(cc.metadata_directory(props))
    endpoints = cc.controller_endpoints(props)
    if not args.dry_run:
        admin.add_raft_voter(node_id, directory_id, endpoints)
    verb = "DRY RUN of adding" if args.dry_run else "Added"
    print(f"{verb} controller {node_id} with directory id {uuid_to_str(directory_id)} "
          f"and endpoints: {cc.endpoints_text(endpoints)}")


def _remove_controller(admin: AdminClient, args) -> None:
    if args.controller_id < 0:
        raise TerseError(f"Invalid negative --controller-id: {args.controller_id}")
    try:
        directory_id = uuid_from_str(args.controller_directory_id)
    except ValueError as exc:
        raise TerseError(f"Failed to parse --controller-directory-id: {exc}") from None
    if not args.dry_run:
        admin.remove_raft_voter(args.controller_id, directory_id)
    verb = "DRY RUN of removing " if args.dry_run else "Removed "
    print(f"{verb}KRaft controller {args.controller_id} with directory id {uuid_to_str(directory_id)}")


def _reassign(admin: AdminClient, args, props: dict[str, str]) -> int:
    target = parse_voters(args.voters)
    explicit = dict(parse_voter_endpoint(text) for text in args.voter_endpoint)
    brokers = (AdminClient(args.broker_bootstrap_server, controllers=False, config=props)
               if args.broker_bootstrap_server else None)
    runner = Reassigner(admin, target, explicit_endpoints=explicit, max_lag_ms=args.max_lag_ms,
                        step_timeout_ms=args.step_timeout_ms, force=args.force, broker_admin=brokers,
                        follow_timeout_ms=args.follow_timeout_ms)
    try:
        return runner.run(args.dry_run)
    except KeyboardInterrupt:
        print(f"Interrupted after {runner.done} completed step(s); the quorum is left as it is. "
              + runner.resume_hint(), file=sys.stderr)
        return 130
    finally:
        if brokers is not None:
            brokers.close()


def run(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    props = cc.load_command_config(args.command_config)
    bootstrap = args.bootstrap_controller or args.bootstrap_server
    with AdminClient(bootstrap, controllers=args.bootstrap_controller is not None, config=props) as admin:
        if args.command == "describe":
            _describe(admin, args)
        elif args.command == "add-controller":
            _add_controller(admin, args, props)
        elif args.command == "remove-controller":
            _remove_controller(admin, args)
        elif args.command == "reassign":
            return _reassign(admin, args, props)
    return 0


def main(argv: list[str] | None = None) -> int:
    log_to_stderr()
    try:
        return run(argv)
    except TerseError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except KafkaApiError as exc:
        # Kafka prints ExecutionException.getMessage(): the cause's toString().
        print(exc.java_text(), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
