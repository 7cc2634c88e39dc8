"""bench/wire/decode_cost.py runs and reports blocks per decode on both codec paths (slow: two
child processes importing the bench's peers); never asserts on the counts' size."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_decode_cost_reports_blocks_on_both_paths():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "wire" / "decode_cost.py"), "--row", "vote_request_v2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"vote_request_v2: [\d,]+ bytes", lines[0]), lines
    counts = [re.search(r": ([\d,]+) blocks per decode kept alive$", line) for line in lines[1:]]
    assert len(counts) == 2 and all(counts), lines
    assert "KRAFT_PURE_PYTHON is set" in lines[2]
    # the two paths build the same objects
    assert counts[0].group(1) == counts[1].group(1) and int(counts[0].group(1).replace(",", "")) > 0
