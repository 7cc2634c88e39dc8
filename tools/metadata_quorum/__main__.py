"""The ``kraft-metadata-quorum`` command line: Kafka's ``kafka-metadata-quorum``
(flags, output, exit codes) plus ``reassign`` (KIP-642), ``add-controller
--controller-id`` for a controller that is already an observer (``observer.py``) and
``recover`` (a quorum that lost its majority; offline, so it needs no bootstrap flag).

Console script: ``kraft-metadata-quorum = tools.metadata_quorum.__main__:main``.
Exit codes as Kafka's tool: 0 on success (and for ``--help``), 1 for bad flags,
a bad config file or any error the cluster returned. ``reassign`` also exits
130 when interrupted (rerun it to resume).
"""
from __future__ import annotations

import argparse
import sys
import uuid

from wire.uuids import uuid_from_str, uuid_to_str

from . import controller_config as cc
from . import observer as observer_quorum
from .client import AdminClient
from .describe import replication_text, status_text
from .errors import KafkaApiError, TerseError
from .reachability import log_to_stderr
from .reassign import Reassigner, parse_voter_endpoint, parse_voters
from . import recover as recover_mod

PROG = "kraft-metadata-quorum"


class _Parser(argparse.ArgumentParser):
    """argparse with argparse4j's exit code for usage errors (1, not 2)."""

    def error(self, message: str):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="This tool describes kraft metadata quorum status.")
    conn = parser.add_mutually_exclusive_group()  # required but by recover: run() checks
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
    add.add_argument("--controller-id", "-i", type=int,
                     help="The id of a controller that is already an observer of the quorum: its directory "
                          "ID comes from the leader and its endpoints from its registration, so no "
                          "controller properties file is needed.")
    add.add_argument("--controller-directory-id", "-d",
                     help="With --controller-id: the directory ID to add, when the controller is an "
                          "observer with several.")

    remove = sub.add_parser("remove-controller", help="Remove a controller from the KRaft controller cluster")
    remove.add_argument("--controller-id", "-i", type=int, required=True,
                        help="The id of the controller to remove.")
    remove.add_argument("--controller-directory-id", "-d", required=True,
                        help="The directory ID of the controller to remove.")
    remove.add_argument("--dry-run", action="store_true",
                        help="True if we should print what would be done, but not do it.")
    remove.add_argument("--unregister", action="store_true",
                        help="If set, also unregister the controller after successfully removing it from "
                             "the voter set.")

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

    recover = sub.add_parser(
        "recover", help="Make the surviving controllers the whole voter set after a majority was lost for good "
                        "(run with the survivors stopped; no --bootstrap flag)")
    recover.add_argument("--config", action="append", required=True, metavar="PROPERTIES",
                         help="A surviving controller's properties file (repeatable: one per survivor).")
    recover.add_argument("--broker-metadata-dir", action="append", default=[], metavar="DIR",
                         help="A broker's metadata log directory (repeatable), read to say what it holds beyond "
                              "the recovered log.")
    recover.add_argument(recover_mod.LOST_VOTERS_FLAG, dest="lost_voters_are_gone", action="store_true",
                         help="Confirm that the lost voters and their disks will never come back.")
    recover.add_argument("--dry-run", action="store_true", help="Print the plan and the checks; write nothing.")
    recover.add_argument("--leave-broker-records", dest="adopt", action="store_false",
                         help="Do not take the records a broker holds past the survivor's log end (on its history) "
                              "into the recovered log; the brokers then truncate them.")
    recover.add_argument("--epoch-gap", type=int, default=recover_mod.EPOCH_GAP,
                         help="How far above the highest epoch seen the new leader epoch is.")
    recover.add_argument("--connect-timeout-ms", type=int, default=2000,
                         help="How long to try each lost voter's controller endpoint.")
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


def _observer_form(args) -> tuple[int, uuid.UUID | None] | None:
    """``--controller-id`` (and ``-d``): the node id and the directory id asked for,
    or None for Kafka's form (the properties file in ``--command-config``)."""
    if args.controller_id is None:
        if args.controller_directory_id is not None:
            raise TerseError("--controller-directory-id needs --controller-id")
        return None
    if args.controller_id < 0:
        raise TerseError(f"Invalid negative --controller-id: {args.controller_id}")
    directory_id = None
    if args.controller_directory_id is not None:
        try:
            directory_id = uuid_from_str(args.controller_directory_id)
        except ValueError as exc:
            raise TerseError(f"Failed to parse --controller-directory-id: {exc}") from None
    return args.controller_id, directory_id


def _add_controller(admin: AdminClient, args, props: dict[str, str]) -> None:
    observer = _observer_form(args)
    if observer is not None:
        node_id = observer[0]
        directory_id, endpoints = observer_quorum.resolve(admin, *observer)
    else:
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
    node_id = args.controller_id
    if not args.dry_run:
        try:
            admin.remove_raft_voter(node_id, directory_id)
        except KafkaApiError as exc:
            # Kafka 4.4.0's tool: with --unregister, a voter that cannot be removed
            # (unknown, or no removal supported) names the command that unregisters it.
            if args.unregister and exc.name in ("UNSUPPORTED_VERSION", "VOTER_NOT_FOUND"):
                raise TerseError(f"Failed to remove KRaft voter {node_id}: {exc.message}. "
                                 + _unregister_hint(node_id)) from None
            raise
    verb = "DRY RUN of removing " if args.dry_run else "Removed "
    print(f"{verb}KRaft controller {node_id} with directory id {uuid_to_str(directory_id)}")
    if args.unregister:
        if not args.dry_run:
            try:
                admin.unregister_controller(node_id)
            except KafkaApiError as exc:
                raise TerseError(f"Failed to unregister controller {node_id}: {exc.message}. "
                                 + _unregister_hint(node_id)) from None
        print(f"{'DRY RUN of unregistering' if args.dry_run else 'Unregistered'} KRaft controller {node_id}")


def _unregister_hint(node_id: int) -> str:
    return f"To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id {node_id}`."


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
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "recover":
        return recover_mod.run(args.config, args.broker_metadata_dir, args.lost_voters_are_gone, args.dry_run,
                               args.epoch_gap, args.connect_timeout_ms, adopt=args.adopt)
    if not (args.bootstrap_controller or args.bootstrap_server):
        parser.error("one of the arguments --bootstrap-server --bootstrap-controller is required")
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
