"""Running a bench's ``--quick --json`` for its smoke test, and the check its figures share."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def quick_report(bench: Path, timeout: float) -> dict:
    """The bench's JSON report of a ``--quick`` run (it must exit 0 and say it was quick)."""
    proc = subprocess.run([sys.executable, str(bench), "--quick", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert report["meta"]["quick"] is True
    return report
