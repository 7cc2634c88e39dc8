"""Issue 14, item 5: a start-up problem the operator can fix is one line on stderr,
``ERROR <what> (<property or path>)``, and exit code 1, never a traceback. Each
case starts ``python -m kraft_server`` on a one-node configuration that is broken
in one way."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from kraft_server.log.meta_properties import MetaProperties, write_meta_properties
from wire.uuids import random_directory_id
from tests.support.kraft_nodes import REPO, OurNode, set_property, storage_format
from tools.kafka_dist.controller import random_cluster_id


def start_fails(config: Path) -> str:
    """Run the node; it must exit 1 at once. Returns its one ERROR line."""
    proc = subprocess.run([sys.executable, "-m", "kraft_server", str(config)], cwd=REPO, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR ")]
    assert len(errors) == 1 and proc.stderr.rstrip("\n").endswith(errors[0]), proc.stderr
    return errors[0]


def formatted(tmp_path: Path) -> OurNode:
    node = OurNode(tmp_path)
    storage_format(node.config, random_cluster_id(), "--standalone")
    return node


def test_a_port_in_use(tmp_path):
    node = formatted(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", node.client_port))
        taken.listen()
        assert start_fails(node.config) == (
            f"ERROR Socket server failed to bind to 127.0.0.1:{node.client_port} (listener CLIENT): "
            "Address already in use (listeners)")
        set_property(node.config, "listeners", f"CONTROLLER://127.0.0.1:{node.port}")
        set_property(node.config, "kraft.metrics.prometheus.listener", f"127.0.0.1:{node.client_port}")
        assert start_fails(node.config) == (
            f"ERROR Socket server failed to bind to 127.0.0.1:{node.client_port} (Prometheus metrics): "
            "Address already in use (kraft.metrics.prometheus.listener)")


def test_an_unformatted_metadata_log_dir(tmp_path):
    node = OurNode(tmp_path)
    assert start_fails(node.config) == (
        "ERROR No `meta.properties` found (is the metadata.log.dir formatted?); format it first: kraft-storage "
        f"format --cluster-id $(kraft-storage random-uuid) --standalone --config {node.config} "
        f"(Kafka's kafka-storage.sh format does too; `make run` does it for ./data) ({node.data})")


def test_an_unreadable_metadata_log_dir(tmp_path):
    node = OurNode(tmp_path)
    node.data.write_text("a file, not a directory\n")
    assert start_fails(node.config) == (
        f"ERROR Cannot read meta.properties: Not a directory ({node.data / 'meta.properties'})")
    node.data.unlink()
    node.data.mkdir()
    (node.data / "meta.properties").write_bytes(b"version=1\nnode.id=x\n")
    line = start_fails(node.config)
    assert line.startswith("ERROR meta.properties is unreadable: ")
    assert line.endswith(f" ({node.data / 'meta.properties'})")


def test_log_dirs_of_another_cluster(tmp_path):
    node = formatted(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    write_meta_properties(other, MetaProperties("b3RoZXItY2x1c3Rlci1pZA", 1, random_directory_id()))
    set_property(node.config, "log.dirs", f"{node.data},{other}")
    line = start_fails(node.config)
    assert line.startswith("ERROR Invalid cluster.id: expected ") and ", but read b3RoZXItY2x1c3Rlci1pZA " in line
    assert line.endswith(f" ({other / 'meta.properties'})")


def test_a_missing_required_property(tmp_path):
    node = OurNode(tmp_path)
    node.config.write_text("\n".join(l for l in node.config.read_text().splitlines()
                                     if not l.startswith("node.id=")) + "\n")
    assert start_fails(node.config) == (
        'ERROR Missing required configuration "node.id" which has no default value (node.id)')


def test_an_invalid_property_and_a_missing_file(tmp_path):
    node = OurNode(tmp_path)
    set_property(node.config, "controller.quorum.request.timeout.ms", "soon")
    assert start_fails(node.config) == (
        "ERROR Invalid value soon for configuration controller.quorum.request.timeout.ms: Not a number of type "
        "INT (controller.quorum.request.timeout.ms)")
    missing = tmp_path / "nope.properties"
    assert start_fails(missing) == f"ERROR Cannot read the configuration file: No such file or directory ({missing})"
