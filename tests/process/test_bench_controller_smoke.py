"""bench/controller/controller.py --quick --json runs both sides (ours and Kafka 4.3.1's
controllers, Kafka brokers) and reports every row with a plausible number; never
asserts on speed (but ours re-leads after a broker's kill -9 before a session could
expire: fencing on evidence took effect). Slow: it starts six controller processes, three broker JVMs
twice and two single controllers (minutes on a shared 2-core machine)."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.jdk import need_jdk

pytestmark = [pytest.mark.java, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
ROWS = ("create topics (s)", "controller RSS, create topics (MiB)", "broker kill -9 -> re-led (ms)",
        "partitions left leaderless (count)", "broker SIGSTOP -> re-led (ms)",
        "controller kill -9 -> heartbeat (ms)", "create topics direct (s)", "controller RSS, created direct (MiB)",
        "snapshot load (ms)", "controller RSS, snapshot loaded (MiB)", "controller RSS, every partition read (MiB)")
# issue 26's operation rows (bench/controller/controller_broker_ops.py, bench/controller/controller_standin_ops.py)
BROKER_OPS = ("brokers: controlled shutdown -> moved (ms)", "brokers: session expiry -> re-led (ms)",
              "brokers: reassign a tenth -> complete (ms)", "brokers: preferred election of all (ms)",
              "brokers: DescribeConfigs every topic (ms)", "brokers: IncrementalAlterConfigs 1000 (ms)",
              "controller RSS, after broker ops (MiB)")
STANDIN_OPS = tuple(r.replace("brokers:", "stand-ins:").replace("-> complete", "-> new ISR")
                    .replace("broker ops", "stand-in ops") for r in BROKER_OPS)
ROWS = ROWS[:6] + BROKER_OPS + ROWS[6:] + STANDIN_OPS  # the broker ops follow the controller kill -9


def test_controller_bench_quick_reports_every_row_for_both_sides():
    need_jdk()
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "controller" / "controller.py"), "--quick", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert len(report["load"]) == 5
    for side in ("ours", "kafka"):
        rows = report["rows"][side]
        assert tuple(rows) == ROWS
        leaderless = rows.pop("partitions left leaderless (count)")
        assert 0 <= leaderless <= 60
        # every row measured; a time printed in whole hundredths of a second may round to 0
        # (ours: "create topics direct (s)" 0.01 on a quiet machine), an RSS may not
        assert all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in rows.values()), rows
        assert all(v > 0 for k, v in rows.items() if "RSS" in k or "(ms)" in k), rows
        # Kafka's re-lead after kill -9 waits for the session timeout (9 s) to expire, ours
        # not (issue 29: fenced on evidence of the crash); after SIGSTOP both wait for it;
        # a heartbeat needs an election
        if side == "kafka":
            assert 4000 < rows["broker kill -9 -> re-led (ms)"] < 60000
        else:
            assert rows["broker kill -9 -> re-led (ms)"] < 4000
        assert 4000 < rows["broker SIGSTOP -> re-led (ms)"] < 60000
        assert 0 < rows["controller kill -9 -> heartbeat (ms)"] < 60000
        # a session expiry waits for the session timeout (9 s) too
        for row in ("brokers: session expiry -> re-led (ms)", "stand-ins: session expiry -> re-led (ms)"):
            assert 4000 < rows[row] < 60000
