"""``make run``'s entry point (``tools.run_local``): formats an empty directory as a
standalone quorum and prints the cluster id, serves both listeners, shuts down
cleanly on Ctrl-C (SIGINT), and on a second start reuses the same cluster."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

from tests.support.kraft_nodes import REPO, wait_for
from tools.kafka_dist.controller import free_port
from tools.kafka_dist.probe import describe_quorum


def _config(tmp_path, controller: int, client: int):
    text = (REPO / "config" / "server.properties").read_text()
    text = text.replace("127.0.0.1:9093", f"127.0.0.1:{controller}")
    text = text.replace("127.0.0.1:9092", f"127.0.0.1:{client}")
    text = text.replace("./data", str(tmp_path / "data"))
    path = tmp_path / "server.properties"
    path.write_text(text)
    return path


def _start(config, log_path):
    log = open(log_path, "ab")
    try:
        return subprocess.Popen([sys.executable, "-m", "tools.run_local", "--config", str(config)],
                                cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    finally:
        log.close()


def _leader(port):
    q = describe_quorum("127.0.0.1", port, timeout=1.0)
    return q if q.error_code == 0 and q.leader_id == 1 and q.high_watermark > 0 else None


def test_make_run_formats_serves_and_stops_cleanly(tmp_path):
    controller, client = free_port(), free_port()
    config = _config(tmp_path, controller, client)
    log_path = tmp_path / "run.log"
    cluster_ids = []
    for attempt in range(2):
        proc = _start(config, log_path)
        try:
            wait_for(lambda: _leader(controller), 60, "the standalone node to lead")
            # The client listener answers too (DescribeQuorum is served there as well).
            assert describe_quorum("127.0.0.1", client, timeout=5.0).leader_id == 1
            os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C sends to the foreground group
            assert proc.wait(30) == 0
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        text = log_path.read_text(errors="replace")
        found = re.findall(r"Cluster id: (\S+)|cluster id (\S+), node 1\)", text)
        cluster_ids = [a or b for a, b in found]
        assert len(cluster_ids) == attempt + 1, text[-3000:]
        assert text.count("shut down completed") == attempt + 1
    assert cluster_ids[0] == cluster_ids[1]  # the second start reused the formatted directory
    assert (tmp_path / "data" / "meta.properties").exists()
    text = log_path.read_text(errors="replace")
    assert text.count("as a standalone quorum") == 1  # formatted once, reused after


def test_banner_shows_the_format_command_as_typed(tmp_path, monkeypatch, capsys):
    """The banner names the command (console-script form), not argv with a stray ``-m``."""
    from tools import run_local

    config = _config(tmp_path, free_port(), free_port())
    execs = []
    monkeypatch.setattr(run_local.os, "execv", lambda path, argv: execs.append(argv))
    assert run_local.main(["--config", str(config)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("Formatting "))
    cluster_id = re.search(r"Cluster id: (\S+)", out).group(1)
    assert line == (f"Formatting {tmp_path / 'data'} as a standalone quorum: kraft-storage format "
                    f"--cluster-id {cluster_id} --standalone --config {config}")
    assert execs == [[sys.executable, "-m", "kraft_server", str(config)]]


def test_start_up_errors_are_one_line(tmp_path, capsys):
    """Issue 14, item 5, through ``make run``: ERROR <what> (<property or path>), exit 1."""
    from tools import run_local

    config = _config(tmp_path, free_port(), free_port())
    config.write_text(config.read_text().replace("node.id=", "#node.id="))
    assert run_local.main(["--config", str(config)]) == 1
    assert capsys.readouterr().err == (
        'ERROR Missing required configuration "node.id" which has no default value (node.id)\n')
    missing = tmp_path / "missing.properties"
    assert run_local.main(["--config", str(missing)]) == 1
    assert capsys.readouterr().err == f"ERROR Cannot read the configuration file: No such file or directory ({missing})\n"
    config = _config(tmp_path, free_port(), free_port())
    (tmp_path / "data").write_text("not a directory\n")
    assert run_local.main(["--config", str(config)]) == 1
    assert capsys.readouterr().err == (
        f"ERROR Cannot read meta.properties: Not a directory ({tmp_path / 'data' / 'meta.properties'})\n")
