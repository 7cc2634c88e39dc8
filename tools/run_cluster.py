"""``make run-cluster``: three of our controllers and three Apache Kafka brokers of the
default release (4.4.0) on loopback, for trying the quorum with real Kafka clients.

    python -m tools.run_cluster [--controllers 3] [--brokers 3] [--dir ./data-cluster]

Formats a fresh dynamic quorum of ours (``tools.storage format --initial-controllers``)
in a new directory under ``--dir``, starts the controllers (``python -m kraft_server``)
and then broker-only Kafka processes from the pinned distribution
(``tools/kafka_dist``) with ``controller.quorum.bootstrap.servers`` pointing at ours,
prints the bootstrap servers once every broker is unfenced, and stops everything on
Ctrl-C (or SIGTERM). Logs stay in the run's directory.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _controller_config(workdir: Path, node_id: int, port: int, client_port: int, quorum: str) -> Path:
    data = workdir / f"controller{node_id}"
    data.mkdir(parents=True)
    path = data / "server.properties"
    path.write_text("\n".join([
        "process.roles=controller",
        f"node.id={node_id}",
        f"listeners=CONTROLLER://127.0.0.1:{port},CLIENT://127.0.0.1:{client_port}",
        "listener.security.protocol.map=CONTROLLER:PLAINTEXT,CLIENT:PLAINTEXT",
        "controller.listener.names=CONTROLLER",
        f"controller.quorum.bootstrap.servers={quorum}",
        f"log.dirs={data / 'data'}",
        f"metadata.log.dir={data / 'data'}",
    ]) + "\n")
    return path


def _unfenced(port: int) -> list[int]:
    """Broker ids a Kafka broker reports unfenced (DescribeCluster v2)."""
    import socket
    from wire.framing import FrameReader
    from wire.headers import decode_response, encode_request
    from wire.messages import DescribeClusterRequest
    body = DescribeClusterRequest(endpoint_type=1, include_fenced_brokers=True)
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(encode_request(body.API_KEY, 2, 1, body, "run-cluster"))
        reader, frames = FrameReader(), []
        while not frames:
            data = s.recv(65536)
            if not data:
                return []
            frames = reader.feed(data)
    r = decode_response(frames[0], body.API_KEY, 2)[1]
    return sorted(b.broker_id for b in r.brokers if not b.is_fenced)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="run_cluster", description=__doc__.split("\n\n")[0])
    parser.add_argument("--controllers", type=int, default=3)
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--dir", default="data-cluster")
    args = parser.parse_args(argv)

    from wire.uuids import random_directory_id, random_uuid, uuid_to_str
    from tools.kafka_dist import KAFKA_VERSION
    from tools.kafka_dist.broker import bootstrap_servers, start_brokers
    from tools.kafka_dist.controller import free_port

    workdir = Path(args.dir).resolve() / time.strftime("run-%Y%m%d-%H%M%S")
    workdir.mkdir(parents=True)
    cluster_id = uuid_to_str(random_uuid())
    ports = {i: (free_port(), free_port()) for i in range(1, args.controllers + 1)}
    quorum = ",".join(f"127.0.0.1:{p}" for p, _ in ports.values())
    voters = ",".join(f"{i}@127.0.0.1:{p}:{uuid_to_str(random_directory_id())}" for i, (p, _) in ports.items())
    procs: list[subprocess.Popen] = []
    brokers = []
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    try:
        for i, (port, client_port) in ports.items():
            config = _controller_config(workdir, i, port, client_port, quorum)
            subprocess.run([sys.executable, "-m", "tools.storage", "format", "--cluster-id", cluster_id,
                            "--initial-controllers", voters, "--config", str(config),
                            # the brokers' release (ours formats 4.4-IV2 by default)
                            "--release-version", ".".join(KAFKA_VERSION.split(".")[:2])],
                           check=True, cwd=REPO, stdout=subprocess.DEVNULL)
            log = open(config.parent / "node.log", "ab")
            procs.append(subprocess.Popen([sys.executable, "-m", "kraft_server", str(config)], cwd=REPO,
                                          stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True))
            log.close()
        print(f"Cluster {cluster_id}: controllers {quorum} (logs in {workdir})", flush=True)
        brokers = start_brokers(workdir, args.brokers, cluster_id, quorum)
        wanted = sorted(b.node_id for b in brokers)
        deadline = time.monotonic() + 180
        while not stop and time.monotonic() < deadline:
            try:
                if _unfenced(brokers[0].port) == wanted:
                    break
            except OSError:
                pass
            time.sleep(0.5)  # poll interval
        else:
            if not stop:
                print("brokers did not all unfence within 180 s; see the logs", file=sys.stderr)
                return 1
        print(f"Bootstrap servers: {bootstrap_servers(brokers)}", flush=True)
        print("Ctrl-C stops everything.", flush=True)
        while not stop:
            time.sleep(0.5)  # waiting for Ctrl-C / SIGTERM
    except KeyboardInterrupt:
        pass
    finally:
        for b in brokers:
            b.stop()
            b.close()
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
