"""bench/raft/raft.py: a ladder rung whose node dies (Kafka's JVM out of heap at 480k
records/s on a fast machine) is reported with the node's last error line instead of
aborting the run."""
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT),):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench.raft import raft as bench_raft  # noqa: E402


def test_exit_cause_is_the_last_error_line(tmp_path):
    out = tmp_path / "n1.out"
    out.write_text("[1] INFO started\n"
                   "java.lang.OutOfMemoryError: Java heap space\n"
                   "\tat org.apache.kafka.common.utils.BufferSupplier$DefaultSupplier.get(BufferSupplier.java:74)\n")
    node = SimpleNamespace(node_id=1, out=out)
    assert bench_raft._exit_cause(node) == "java.lang.OutOfMemoryError: Java heap space"
    cluster = SimpleNamespace(name="kafka", tails=lambda: "tails")
    exc = bench_raft.NodeExited(cluster, node)
    assert exc.node_id == 1 and "kafka node 1 exited" in str(exc)
    assert exc.cause.startswith("java.lang.OutOfMemoryError")


def test_exit_cause_of_a_missing_output_file(tmp_path):
    node = SimpleNamespace(node_id=2, out=tmp_path / "absent.out")
    assert bench_raft._exit_cause(node) == "?"
