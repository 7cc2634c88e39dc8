"""``make run-cluster`` (``tools/run_cluster.py``): three controllers of ours and three
Apache Kafka brokers come up, the bootstrap servers it prints serve Kafka clients
(kafka-python lists the three brokers), and SIGTERM stops every process."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.jdk import need_jdk

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_run_cluster_starts_serves_and_stops(tmp_path):
    need_jdk()
    out = tmp_path / "out.txt"
    with open(out, "wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", "tools.run_cluster", "--dir", str(tmp_path)], cwd=REPO,
                                stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        found = None
        while time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"Bootstrap servers: (\S+)", out.read_text())
            if found:
                break
            time.sleep(0.5)  # poll interval
        assert found, out.read_text()
        from kafka import KafkaAdminClient
        admin = KafkaAdminClient(bootstrap_servers=found.group(1))
        try:
            brokers = admin.describe_cluster()["brokers"]
            assert sorted(b.get("node_id", b.get("broker_id")) for b in brokers) == [100, 101, 102], brokers
        finally:
            admin.close()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(90)
    assert "stopped" in out.read_text()
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout.split()
    assert left == [], left
