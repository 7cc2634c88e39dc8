"""``kraft-metadata-stream``: stream (or read once) ``__cluster_metadata`` into Spark.

    kraft-metadata-stream                                  # console, local[*], 127.0.0.1:9092
    kraft-metadata-stream --types Topic,Partition          # only these record types
    kraft-metadata-stream --sink parquet --path out/ --checkpoint ckpt/
    kraft-metadata-stream --batch --view brokers           # one read, then a view
    kraft-metadata-stream --control                        # leader changes and voter sets
    kraft-metadata-stream --batch --view voters            # the current voter set
    kraft-metadata-stream --batch --from-snapshot --view topics   # full state after retention
    kraft-metadata-stream --prepare                        # resolve the connector jars only
    kraft-metadata-stream --command-config client-sasl.properties   # TLS/SASL client settings
    kraft-metadata-stream --command-config client-sasl.properties --delegation-token   # executors: a token only
    spark-submit ... -m tools.metadata_stream --master spark://host:7077 ...
"""
from __future__ import annotations

import argparse
import json
import logging
import sys

from . import console
from .jars import JarsError, ensure_jars
from .control import CONTROL_TOPIC, CONTROL_VIEWS
from .views import VIEWS


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="kraft-metadata-stream", description=__doc__.splitlines()[0])
    p.add_argument("--bootstrap-server", default="127.0.0.1:9092",
                   help="the node's client listener (kafka.bootstrap.servers)")
    p.add_argument("--topic", default=None, help="default: __cluster_metadata, or "
                   "__cluster_metadata_control with --control or a control view")
    p.add_argument("--control", action="store_true",
                   help="read the control records (LeaderChange, Voters, KRaftVersion) instead")
    p.add_argument("--master", default=None, help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--batch", action="store_true", help="read [starting offsets, latest) once")
    p.add_argument("--sink", choices=("console", "parquet", "memory"), default="console")
    p.add_argument("--path", help="output directory of the parquet sink (any path Spark resolves)")
    p.add_argument("--checkpoint", help="checkpoint location of the stream (any path Spark resolves)")
    p.add_argument("--starting-offsets", default="earliest")
    p.add_argument("--trigger-interval", default=None, help="processing-time trigger, e.g. '1 second'")
    p.add_argument("--available-now", action="store_true",
                   help="process what is there now, then stop (resumes from the checkpoint next time)")
    p.add_argument("--from-snapshot", action="store_true",
                   help="with --batch: the full state, __cluster_metadata_snapshot then the log from "
                        "its end offset (see docs/metadata-topic.md); a stream: start the log at that offset")
    p.add_argument("--view", choices=VIEWS + CONTROL_VIEWS, help="with --batch: print this view of the rows")
    p.add_argument("--types", help="comma-separated record types to keep (TopicRecord or Topic, ...); "
                   "every type when not given")
    p.add_argument("--include-noop", action="store_true",
                   help="console: show NoOpRecords too (left out by default)")
    p.add_argument("--width", type=int, default=None,
                   help="console: table width in columns (default: the terminal's, within 80-160)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="extra Kafka source option, e.g. failOnDataLoss=false or kafka.security.protocol=SSL")
    p.add_argument("--command-config", metavar="FILE",
                   help="Kafka client properties (security.protocol, sasl.*, ssl.*), as Kafka's tools take "
                        "them; each becomes a kafka.<key> source option (--option wins)")
    p.add_argument("--delegation-token", action="store_true",
                   help="the driver logs in with --command-config's credentials, creates a delegation "
                        "token, and the executors read with the token only (SCRAM, tokenauth=true)")
    p.add_argument("--token-mechanism", choices=("SCRAM-SHA-256", "SCRAM-SHA-512"),
                   help="the token login's mechanism (default: the driver's SCRAM one, else SCRAM-SHA-512)")
    p.add_argument("--token-max-lifetime-ms", type=int, default=-1,
                   help="the token's max lifetime (default -1: the node's delegation.token.max.lifetime.ms)")
    p.add_argument("--keep-token", action="store_true",
                   help="leave the token when the job ends (default: the driver expires it)")
    p.add_argument("--prepare", action="store_true", help="resolve the connector jars into the cache and exit")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)
    from .tokens import TokenError, check_settings
    try:
        extra = source_options(args)
        if args.delegation_token:
            check_settings(extra)
        jars = ensure_jars()
    except (JarsError, OSError, ValueError, TokenError) as exc:
        print(f"kraft-metadata-stream: {exc}", file=sys.stderr)
        return 1
    if args.prepare:
        print("\n".join(str(p) for p in jars))
        return 0
    from .session import spark_session
    conf = [tuple(c.split("=", 1)) for c in args.conf]
    spark = spark_session(args.master, conf=conf)
    if not args.delegation_token:
        return _run(spark, args, extra)
    try:
        extra, token = token_options(spark, args, extra)
    except TokenError as exc:
        print(f"kraft-metadata-stream: {exc}", file=sys.stderr)
        return 1
    try:
        return _run(spark, args, extra)
    finally:
        _end_token(token, args.keep_token)


def token_options(spark, args, extra: dict[str, str]):
    """The source options with a token the driver just obtained instead of its own
    login, and the admin holding the token (``tokens.py``)."""
    from . import tokens
    return tokens.obtain(spark, extra, bootstrap_server=args.bootstrap_server, mechanism=args.token_mechanism,
                         max_lifetime_ms=args.token_max_lifetime_ms)


def _end_token(token, keep: bool) -> None:
    from .tokens import TokenError
    try:
        if not keep:
            token.expire()
    except TokenError as exc:
        print(f"kraft-metadata-stream: the token was not expired: {exc}", file=sys.stderr)
    finally:
        token.close()


def _run(spark, args, extra: dict[str, str]) -> int:
    from . import pipeline
    from .rowtype import RowType
    control = args.control or args.view in CONTROL_VIEWS
    topic = args.topic or (CONTROL_TOPIC if control else pipeline.TOPIC)
    options = pipeline.kafka_options(args.bootstrap_server, topic, args.starting_offsets, extra)
    if control:
        return _control(spark, args, options)
    row_type = RowType.load()
    try:
        types = console.parse_types(args.types, row_type)
    except ValueError as exc:
        print(f"kraft-metadata-stream: {exc}", file=sys.stderr)
        return 2
    shown = _Shown(types, args.include_noop, console.terminal_width(args.width), row_type)
    rows = None
    if args.from_snapshot:
        from .bootstrap import read_full_state
        rows, start = read_full_state(spark, args.bootstrap_server, extra, row_type)
        print(f"kraft-metadata-stream: the snapshot ends at offset {start}; the log continues there",
              file=sys.stderr)
        if not args.batch:  # a new stream: the snapshot's rows once, then the log from S
            snapshot_path = f"{args.path.rstrip('/')}-snapshot" if args.path else None
            _output(rows.where(f"offset < {start}"), args.view, args.sink, snapshot_path, shown)
            options["startingOffsets"] = json.dumps({topic: {"0": start}})
    if args.batch:
        rows = rows if rows is not None else pipeline.read_batch(spark, options, row_type)
        _output(rows, args.view, args.sink, args.path, shown)
        return 0
    trigger = {"availableNow": True} if args.available_now else (
        {"processingTime": args.trigger_interval} if args.trigger_interval else None)
    rows = pipeline.read_stream(spark, options, row_type)
    if args.sink == "console":
        query = pipeline.start_stream(shown.rows(rows), "console", checkpoint=args.checkpoint, trigger=trigger,
                                      summary=False)
    else:
        query = pipeline.start_stream(shown.select(rows), args.sink, checkpoint=args.checkpoint, path=args.path,
                                      trigger=trigger)
    return _await(query)


def source_options(args) -> dict[str, str]:
    """The Kafka source options beyond the defaults: ``--command-config``'s, then ``--option``'s."""
    from .client_config import command_config_options
    return {**command_config_options(args.command_config), **dict(o.split("=", 1) for o in args.option)}


class _Shown:
    """Which rows a sink gets: ``--types`` for every sink; the console also leaves
    NoOpRecords out (unless ``--include-noop``) and cuts rows to the terminal."""

    def __init__(self, types, include_noop: bool, width: int, row_type):
        self.types, self.include_noop, self.width, self.row_type = types, include_noop, width, row_type

    def select(self, rows):
        return console.select_types(rows, self.types, include_noop=True)

    def rows(self, rows):
        return console.console_rows(console.select_types(rows, self.types, self.include_noop),
                                    self.row_type, self.width)


def _output(rows, view, sink, path, shown: _Shown) -> None:
    from . import views
    if view:
        views.view(view, rows).show(1000, truncate=False)
    elif sink == "parquet":
        shown.select(rows).write.mode("overwrite").parquet(path)
    else:
        shown.rows(rows).show(1_000_000, truncate=False)


def _control(spark, args, options) -> int:
    from . import control, pipeline
    if args.batch:
        rows = control.read_control_batch(spark, options)
        shown = control.control_view(args.view, rows) if args.view else rows
        if args.sink == "parquet" and not args.view:
            rows.write.mode("overwrite").parquet(args.path)
        else:
            shown.show(1_000_000, truncate=False)
        return 0
    trigger = {"availableNow": True} if args.available_now else (
        {"processingTime": args.trigger_interval} if args.trigger_interval else None)
    rows = control.read_control_stream(spark, options)
    if args.sink == "console":
        rows = control.summary(rows)
    return _await(pipeline.start_stream(rows, args.sink, checkpoint=args.checkpoint, path=args.path,
                                        query_name="control_rows", trigger=trigger, summary=False))


def _await(query) -> int:
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
