"""The pipeline on a Spark cluster (issue 31): a standalone master and one worker
started with the installed pyspark's own ``spark-class``, ``kraft-metadata-stream
--master spark://...`` with a parquet sink and a checkpoint, run twice with
``--available-now`` over our node's ``__cluster_metadata`` while the node keeps
committing: every offset the sink holds appears once, the offsets are contiguous, and
the second run resumed where the first stopped (more rows, the first run's kept).
In ``make test-slow`` (about a minute); the default suite runs the same pipeline on a
local Spark (``test_metadata_stream_spark.py``)."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="pyspark (the `spark` extra) is not installed")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the `spark` extra) is not installed")

from tests.support.kraft_nodes import OurNode, describe_quorum, wait_for  # noqa: E402
from tools.kafka_dist.controller import free_port  # noqa: E402
from tests.support.spark_env import require_java_and_connector_jars  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _spark_class() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _start(args, log: Path, env) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen([str(_spark_class()), *args], stdout=out, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)


@pytest.fixture
def standalone_cluster(tmp_path):
    require_java_and_connector_jars()
    import pyspark
    env = dict(os.environ, SPARK_HOME=str(Path(pyspark.__file__).parent), PYSPARK_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", SPARK_WORKER_DIR=str(tmp_path / "work"))
    port, ui = free_port(), free_port()
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    procs = [_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                     "--webui-port", str(ui)], master_log, env)]
    url = f"spark://127.0.0.1:{port}"
    try:
        wait_for(lambda: "I have been elected leader" in master_log.read_text(errors="replace"), 120,
                 "the Spark master")
        procs.append(_start(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                             "--cores", "2", "--memory", "1g", "--webui-port", str(free_port())],
                            worker_log, env))
        wait_for(lambda: "Registering worker" in master_log.read_text(errors="replace"), 120,
                 "the worker registering with the master")
        yield url, env
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, 15)
            except ProcessLookupError:
                pass
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, 9)


def _offsets(path: Path) -> list[int]:
    files = sorted(path.glob("*.parquet"))
    return sorted(o for f in files for o in pq.read_table(f, columns=["offset"]).column("offset").to_pylist())


def test_stream_on_a_standalone_cluster_resumes_exactly_once(standalone_cluster, tmp_path):
    url, env = standalone_cluster
    node = OurNode(tmp_path, extra=("metadata.max.idle.interval.ms=200",))
    node.format_with_ours(uuid.uuid4().hex[:22])
    node.start()
    rows, ckpt = tmp_path / "rows", tmp_path / "ckpt"
    cmd = [sys.executable, "-m", "tools.metadata_stream", "--master", url,
           "--bootstrap-server", f"127.0.0.1:{node.client_port}", "--sink", "parquet",
           "--path", str(rows), "--checkpoint", str(ckpt), "--available-now"]
    try:
        node.wait_leader(60)
        runs = []
        for _ in range(2):
            done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-3000:]
            runs.append(_offsets(rows))
            # the node commits a NoOp every 200 ms: wait for more before the second run
            end = max(runs[-1]) if runs[-1] else -1
            wait_for(lambda: describe_quorum("127.0.0.1", node.port, timeout=1.0).high_watermark > end + 5,
                     60, "more committed records")
    finally:
        node.stop()
    first, second = runs
    assert first and second, runs
    assert len(second) == len(set(second)), "an offset written twice"
    assert second == list(range(second[0], second[-1] + 1)), "offsets not contiguous"
    # (the log starts with control batches, which are not metadata rows)
    assert second[:len(first)] == first and len(second) > len(first), "the second run did not resume"
    # The executors ran on the worker, not in the driver: its work dir has the app's logs.
    assert any((tmp_path / "work").glob("app-*/*/stderr"))
