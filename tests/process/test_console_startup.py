"""The console's properties at start-up: a console port in use, or a listener or peer
list that does not parse, is one ``ERROR`` line naming the property and exit code 1
(as for the other listeners, tests/process/test_startup_errors.py)."""
from __future__ import annotations

import socket

from tests.process.test_startup_errors import formatted, start_fails
from tests.support.kraft_nodes import set_property
from tools.kafka_dist.controller import free_port


def test_a_console_port_in_use_and_bad_values_are_one_error_line(tmp_path):
    node = formatted(tmp_path)
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        set_property(node.config, "kraft.console.listener", f"127.0.0.1:{port}")
        assert start_fails(node.config) == (
            f"ERROR Socket server failed to bind to 127.0.0.1:{port} (quorum console): "
            "Address already in use (kraft.console.listener)")
    set_property(node.config, "kraft.console.listener", "nowhere")
    assert start_fails(node.config) == (
        "ERROR Invalid value nowhere for configuration kraft.console.listener: Unable to parse host and "
        "port from nowhere (kraft.console.listener)")
    set_property(node.config, "kraft.console.listener", f"127.0.0.1:{port}")
    set_property(node.config, "kraft.console.peers", "1@host")
    assert start_fails(node.config).endswith("(kraft.console.peers)")
