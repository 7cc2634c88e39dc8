"""``make run``: a standalone one-voter quorum on loopback, formatted on first use.

    python -m tools.run_local [--config config/server.properties]

1. Reads the properties (default ``config/server.properties``: controller listener
   127.0.0.1:9093, client listener 127.0.0.1:9092, data in ``./data``).
2. If the metadata log directory has no ``meta.properties``, formats it as a
   standalone dynamic quorum (``tools.storage format --standalone`` with a fresh
   cluster id) and prints the cluster id; otherwise prints the existing one.
3. Replaces itself with ``python -m kraft_server <config>`` (``exec``), so Ctrl-C
   reaches the server directly and it shuts down cleanly.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CONFIG = REPO / "config" / "server.properties"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run_local", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    args = parser.parse_args(argv)

    from kraft_server.__main__ import fail
    from kraft_server.config import ConfigError, KafkaConfig
    from kraft_server.log.meta_properties import read_meta_properties
    from wire.uuids import random_uuid, uuid_to_str

    # Start-up errors as the node prints them: ERROR <what> (<property or path>).
    try:
        config = KafkaConfig.from_file(args.config)
    except ConfigError as exc:
        return fail(str(exc).removeprefix(f"{exc.where}: "), exc.where or args.config)
    except OSError as exc:
        return fail(f"Cannot read the configuration file: {exc.strerror}", args.config)
    data = Path(config.metadata_log_dir)
    try:
        meta = read_meta_properties(data)
    except ValueError as exc:
        return fail(f"meta.properties is unreadable: {exc}", data / "meta.properties")
    except OSError as exc:
        return fail(f"Cannot read meta.properties: {exc.strerror}", exc.filename or data)
    if meta is None:
        cluster_id = uuid_to_str(random_uuid())
        storage_args = ["format", "--cluster-id", cluster_id, "--standalone", "--config", args.config]
        # The banner shows the console-script form of what runs (`python -m tools.storage`).
        print(f"Formatting {data} as a standalone quorum: {shlex.join(['kraft-storage', *storage_args])}",
              flush=True)
        done = subprocess.run([sys.executable, "-m", "tools.storage", *storage_args], cwd=os.getcwd())
        if done.returncode != 0:
            return fail("Formatting failed (kraft-storage said why above)", data)
        print(f"Cluster id: {cluster_id}", flush=True)
    else:
        print(f"Using {data} (cluster id {meta.cluster_id}, node {meta.node_id})", flush=True)
    for ep in config.listeners:
        print(f"  {ep.name}://{ep.host_port()}", flush=True)
    print("Ctrl-C stops the node.", flush=True)
    os.execv(sys.executable, [sys.executable, "-m", "kraft_server", args.config])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
