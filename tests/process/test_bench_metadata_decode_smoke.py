"""bench/wire/metadata_decode.py --quick --json runs (its own sanity checks included) and
reports a positive rate for every path; never asserts on speed."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow (the `spark` extra) is not installed")
pytest.importorskip("pandas", reason="pandas (the `spark` extra) is not installed")

ROOT = Path(__file__).resolve().parents[2]


def test_metadata_decode_bench_quick_json():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "wire" / "metadata_decode.py"), "--quick", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert set(report["rows_per_s"]) == {"arrow (mapInArrow)", "pandas (mapInPandas)", "txn filter", "codec only"}
    assert all(rate > 0 for rate in report["rows_per_s"].values())
