"""bench/raft/observer_path.py runs: every observer is answered once a round and the cost per
Fetch is a positive figure (its size is the bench's business, not the test's)."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_observer_path_answers_every_observer_each_round():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "raft" / "observer_path.py"), "--observers", "5",
                           "--rounds", "6", "--repeat", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    m = re.fullmatch(r"observers 5, rounds 6: leader CPU per observer Fetch (-?[\d.]+) us "
                     r"\(rounds alone (\d+) us; (\d+) Fetches answered per run\)\n", proc.stdout)
    assert m, proc.stdout
    assert int(m.group(3)) == 5 * 6 and int(m.group(2)) > 0
